#!/usr/bin/env python3
"""stalled-reader.py KIND ERRFILE CMD...: run CMD with its stdout on a reader
that takes nothing, and print how many seconds it took ("hung" past 60 s).

KIND pty: a pseudo-terminal nobody reads (a write to it blocks once its
buffer is full, though it may have polled writable); KIND sock: a unix
socket (what libuv, and so Node, hands a child as a pipe) with the smallest
send buffer; KIND tostop: a terminal with `stty tostop`, CMD started as a
background job of its session (a shell's `cmd &`): its first write to it
stops it (SIGTTOU) until it is brought to the foreground 3 s later.
CMD's stderr goes to ERRFILE."""
import os
import pty
import signal
import socket
import subprocess
import sys
import termios
import time

kind, errfile, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
start = time.monotonic()


def background_job(tty_name):
    """In a new session whose terminal is tty_name: CMD as a background job,
    brought to the foreground after 3 s; exits with 0, or 124 past 60 s."""
    os.setsid()
    fd = os.open(tty_name, os.O_RDWR)   # the session's controlling terminal
    attrs = termios.tcgetattr(fd)
    attrs[3] |= termios.TOSTOP
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    with open(errfile, "w") as err:
        job = subprocess.Popen(cmd, stdout=fd, stderr=err, process_group=0)
        time.sleep(3)
        os.tcsetpgrp(fd, job.pid)
        os.kill(job.pid, signal.SIGCONT)
        try:
            job.wait(timeout=60)
        except subprocess.TimeoutExpired:
            job.kill()
            os._exit(124)
    os._exit(0)


if kind == "tostop":
    master, slave = pty.openpty()
    pid = os.fork()
    if pid == 0:
        os.close(master)
        background_job(os.ttyname(slave))
    os.close(slave)
    os.set_blocking(master, False)
    while True:     # the terminal's reader, once brig may write
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        try:
            os.read(master, 65536)
        except OSError:
            time.sleep(0.01)
    print("hung" if os.waitstatus_to_exitcode(status) == 124 else int(time.monotonic() - start))
    sys.exit(0)

if kind == "pty":
    held, out = pty.openpty()
else:
    mine, held = socket.socketpair()
    mine.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1)
    out = mine.fileno()
with open(errfile, "w") as err:
    try:
        subprocess.run(cmd, stdout=out, stderr=err, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        print("hung")
        sys.exit(0)
print(int(time.monotonic() - start))
