#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One client, one review per new TLS connection, in sequence: full handshakes, or resuming the
previous connection's session ticket. Prints reviews/s and how many connections resumed.
    resume.py PORT CA_FILE BODY_FILE COUNT full|resume"""
import socket
import ssl
import sys
import time

port, ca, body_file, count, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
ctx = ssl.create_default_context(cafile=ca)
ctx.check_hostname = False  # the test certificate names 127.0.0.1 as an IP SAN; the CA is checked
with open(body_file, "rb") as f:
    body = f.read()
req = (b"POST /validate-serving-kserve-io-v1alpha1-trainedmodel HTTP/1.1\r\nHost: 127.0.0.1\r\n"
       b"Content-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n"
       % len(body)) + body
session, resumed = None, 0
start = time.perf_counter()
for _ in range(count):
    with ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)),
                         session=session if mode == "resume" else None) as t:
        resumed += t.session_reused
        t.sendall(req)
        answer = b""
        while chunk := t.recv(65536):
            answer += chunk
        if not answer.startswith(b"HTTP/1.1 200"):
            sys.exit("unexpected answer: %r" % answer[:200])
        session = t.session
elapsed = time.perf_counter() - start
print("%.1f %d" % (count / elapsed, resumed))
