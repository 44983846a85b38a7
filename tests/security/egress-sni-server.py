#!/usr/bin/python3
"""egress-sni-server.py PORTFILE LOG CERT KEY: a TLS server on 127.0.0.1
(OpenSSL, through Python's ssl) that writes one line to LOG per connection:
"sni NAME" when its server-name callback ran (the name the server routes
by), then "handshake" or "error REASON". t-egress-sni-frag uses it to show
which name a real TLS stack takes from a ClientHello the proxy judged."""
import os
import socket
import ssl
import sys
import threading

log = open(sys.argv[2], 'a', buffering=1)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[3], sys.argv[4])


def on_sni(sock, name, ctx):
    log.write('sni %s\n' % name)     # None: the handshake goes on


ctx.sni_callback = on_sni
srv = socket.socket()
srv.bind(('127.0.0.1', 0))
srv.listen(64)
with open(sys.argv[1] + '.tmp', 'w') as f:
    f.write(str(srv.getsockname()[1]))
os.rename(sys.argv[1] + '.tmp', sys.argv[1])


def serve(conn):
    conn.settimeout(1)      # the tests' clients never finish a handshake: end it, and their read
    try:
        ctx.wrap_socket(conn, server_side=True).close()
        log.write('handshake\n')
    except (OSError, ssl.SSLError) as e:
        log.write('error %s %s\n' % (type(e).__name__, e))


while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
