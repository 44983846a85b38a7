#!/usr/bin/python3
"""egress-keepalive-server.py PORTFILE LOG: the target of
t-egress-pipeline: one server on 127.0.0.1 behind several names (virtual
hosts, as a CDN or a shared front end), which answers every request of a
connection, pipelined or not, and keeps the connection open whatever the
request's "Connection: close" says (as many simple servers do), until the
client is idle for 0.5 s, and reads no body on GET, HEAD, DELETE, OPTIONS
and TRACE (it takes one for the next request). One line per request in LOG: "HOST PATH BODY",
so a test can prove which virtual host a request reached."""
import os
import socket
import socketserver
import sys


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.settimeout(0.5)
        buf = b''
        while True:
            while b'\r\n\r\n' not in buf:
                try:
                    data = self.request.recv(65536)
                except (socket.timeout, OSError):
                    return
                if not data:
                    return
                buf += data
            head, buf = buf.split(b'\r\n\r\n', 1)
            lines = head.decode('latin-1').split('\r\n')
            path = lines[0].split(' ')[1] if len(lines[0].split(' ')) > 1 else '?'
            hdr = {}
            for line in lines[1:]:
                k, _, v = line.partition(':')
                hdr[k.strip().lower()] = v.strip()
            # As a server that reads no body on a method whose content has
            # no defined meaning (RFC 9110 9.3): the body is the next request.
            method = lines[0].split(' ')[0]
            n = 0 if method in ('GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE') else int(hdr.get('content-length', '0') or 0)
            while len(buf) < n:
                try:
                    data = self.request.recv(65536)
                except (socket.timeout, OSError):
                    return
                if not data:
                    return
                buf += data
            body, buf = buf[:n], buf[n:]
            host = hdr.get('host', '-')
            with open(sys.argv[2], 'a') as log:
                log.write('%s %s %s\n' % (host, path, body.decode('latin-1') or '-'))
            answer = ('vhost %s\n' % host).encode()
            self.request.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n' % len(answer) + answer)


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = Server(('127.0.0.1', 0), Handler)
with open(sys.argv[1] + '.tmp', 'w') as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
srv.serve_forever()
