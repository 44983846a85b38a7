#!/usr/bin/python3
"""egress-tls-server.py PORTFILE LOG CERT KEY: the tests' HTTPS "model API"
(t-egress-cred, t-egress-cred-escape): a threaded HTTP/1.1 server on
127.0.0.1 with the test's certificate, an ephemeral port written to
PORTFILE. One JSON line per request in LOG: {"method", "path", "headers":
[[name, value], ...]} as received, so a test sees what the proxy sent.
  GET|POST /echo     200, the request's headers as the body (a host that
                     reflects them: the attack tests)
  GET /stream        an SSE response in chunks: "piece-1", then waits
                     until GET /release (at most 20 s: then "TIMEOUT"),
                     then "piece-2" and the end. The client can only send
                     /release after it read piece-1, so piece-2 proves the
                     proxy passed piece-1 on before the response ended.
  GET /release       200
  GET /redirect      302 to https://api.example.test/echo (relayed, not
                     followed)"""
import http.server
import json
import os
import socketserver
import ssl
import sys
import threading

released = threading.Event()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def record(self):
        with open(sys.argv[2], 'a') as log:
            log.write(json.dumps({'method': self.command, 'path': self.path,
                                  'headers': [[k, v] for k, v in self.headers.items()]}) + '\n')

    def answer(self, status, body, extra=()):
        self.send_response(status)
        self.send_header('Content-Length', str(len(body)))
        self.send_header('Connection', 'close')
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def chunk(self, data):
        self.wfile.write(b'%x\r\n%s\r\n' % (len(data), data))
        self.wfile.flush()

    def do_GET(self):
        self.record()
        if self.path.startswith('/echo'):
            body = ''.join('%s: %s\n' % (k, v) for k, v in self.headers.items()).encode()
            self.answer(200, body)
        elif self.path == '/stream':
            released.clear()
            self.send_response(200)
            self.send_header('Content-Type', 'text/event-stream')
            self.send_header('Transfer-Encoding', 'chunked')
            self.send_header('Connection', 'close')
            self.end_headers()
            self.chunk(b'data: piece-1\n\n')
            self.chunk(b'data: piece-2\n\n' if released.wait(20) else b'data: TIMEOUT\n\n')
            self.chunk(b'')
        elif self.path == '/release':
            released.set()
            self.answer(200, b'released\n')
        elif self.path == '/redirect':
            self.answer(302, b'', [('Location', 'https://api.example.test/echo')])
        else:
            self.answer(404, b'no\n')

    def do_POST(self):
        n = int(self.headers.get('Content-Length', '0'))
        body = self.rfile.read(n)
        self.record()
        self.answer(200, b'got %d bytes: %s\n' % (len(body), body[:64]))


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(('127.0.0.1', 0), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[3], sys.argv[4])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(sys.argv[1] + '.tmp', 'w') as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
srv.serve_forever()
