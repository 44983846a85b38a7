#!/usr/bin/python3
"""egress-server.py PORTFILE LOG [ADDRESS]: the tests' "internet" (t-egress,
t-egress-escape): a threaded HTTP server on 127.0.0.1 (or ADDRESS), an
ephemeral port written to PORTFILE. GET / -> "hello\\n", GET /big -> 1 MiB, GET /size/N ->
N bytes, GET /echo -> the request's headers. One line per connection accepted in LOG, so a test can prove a
refused destination was never reached."""
import http.server
import socketserver
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.0'

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == '/':
            body = b'hello\n'
        elif self.path == '/big':
            body = b'x' * (1 << 20)
        elif self.path == '/echo':
            body = ''.join('%s: %s\n' % (k, v) for k, v in self.headers.items()).encode()
        elif self.path.startswith('/size/'):
            body = b'y' * int(self.path[6:])
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.send_header('X-Host-Seen', self.headers.get('Host', ''))
        self.end_headers()
        self.wfile.write(body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def get_request(self):
        conn, addr = super().get_request()
        with open(sys.argv[2], 'a') as log:
            log.write('accepted\n')
        return conn, addr


srv = Server((sys.argv[3] if len(sys.argv) > 3 else '127.0.0.1', 0), Handler)
with open(sys.argv[1] + '.tmp', 'w') as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
srv.serve_forever()
