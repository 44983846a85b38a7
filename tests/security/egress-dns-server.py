#!/usr/bin/python3
"""egress-dns-server.py LOG NAME=ADDRESS...: a DNS server for one test's
network namespace (t-egress-dns-search): UDP on 127.0.0.1:53, an A record
for each NAME given, NXDOMAIN for any other name, an empty answer for
other types of a known name. Each question's name and type goes to LOG,
so a test sees what the proxy's resolver asked. Standard library only;
questions are read as RFC 1035 4.1.2 lays them out (no compression in a
question)."""
import socket
import struct
import sys

table = dict(arg.split('=', 1) for arg in sys.argv[2:])
log = open(sys.argv[1], 'a', buffering=1)
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(('127.0.0.1', 53))
log.write('ready\n')
while True:
    query, peer = sock.recvfrom(512)
    if len(query) < 17:
        continue
    tid = struct.unpack('>H', query[:2])[0]
    p, labels = 12, []
    while p < len(query) and query[p]:
        labels.append(query[p + 1:p + 1 + query[p]].decode('ascii', 'replace'))
        p += 1 + query[p]
    if p + 5 > len(query):
        continue
    qtype = struct.unpack('>H', query[p + 1:p + 3])[0]
    question = query[12:p + 5]
    name = '.'.join(labels).lower()
    log.write('%s %d\n' % (name, qtype))
    addr = table.get(name)
    if addr is None:        # NXDOMAIN
        sock.sendto(struct.pack('>HHHHHH', tid, 0x8183, 1, 0, 0, 0) + question, peer)
        continue
    answer = b''
    if qtype == 1:
        answer = b'\xc0\x0c' + struct.pack('>HHIH', 1, 1, 60, 4) + socket.inet_aton(addr)
    sock.sendto(struct.pack('>HHHHHH', tid, 0x8180, 1, 1 if answer else 0, 0, 0) + question + answer, peer)
