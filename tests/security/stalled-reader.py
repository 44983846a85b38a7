#!/usr/bin/env python3
"""stalled-reader.py KIND ERRFILE CMD...: run CMD with its stdout on a reader
that never reads, and print how many seconds it took ("hung" past 60 s).

KIND pty: a pseudo-terminal nobody reads (a write to it blocks once its
buffer is full, though it may have polled writable); KIND sock: a unix
socket (what libuv, and so Node, hands a child as a pipe) with the smallest
send buffer. CMD's stderr goes to ERRFILE."""
import pty
import socket
import subprocess
import sys
import time

kind, errfile, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
if kind == "pty":
    held, out = pty.openpty()
else:
    mine, held = socket.socketpair()
    mine.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1)
    out = mine.fileno()
start = time.monotonic()
with open(errfile, "w") as err:
    try:
        subprocess.run(cmd, stdout=out, stderr=err, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        print("hung")
        sys.exit(0)
print(int(time.monotonic() - start))
