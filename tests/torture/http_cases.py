#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Raw-socket HTTP cases against one real server (torture/http-<server>).

Each case sends bytes no well-behaved client would, and asserts the status, that the refusal has
the JSON {code, message} body, and that it comes at once (within TORTURE_BOUND seconds, a hang
detector: the answers take milliseconds). Neighbours that must keep working are asserted too.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torturelib as T  # noqa: E402

BOUND = float(os.environ.get("TORTURE_BOUND", "5.0"))
# Every server runs on http/engine.c (the webhook's TLS on http/tls-conn.c): every refusal has
# the JSON body.


def req(method, target, headers=b"", body=b""):
    return (method + b" " + target + b" HTTP/1.1\r\nHost: localhost\r\n" + headers +
            b"Connection: close\r\n\r\n" + body)


def main():
    kind = sys.argv[1]
    tap = T.Tap()
    s = T.Server(kind)
    R = s.resource_path().encode()  # ends with '/'
    G = s.path().encode()
    GOOD = s.get_status()
    post = b"/validate-trainedmodel" if kind == "webhook" else R + b"x"

    def expect(name, raw, want, json_body=True):
        try:
            st, h, b, t = T.exchange(s, raw, timeout=BOUND * 2)
        except OSError as e:
            tap.ok(False, "%s: %s" % (kind, name), repr(e))
            return None, b""
        ok = st in (want if isinstance(want, tuple) else (want,)) and t < BOUND
        if ok and json_body:
            j = T.json_error(b)
            ok = (j is not None and h.get("content-type", "").startswith("application/json")
                  and T.code_matches(kind, j, st))
        tap.ok(ok, "%s: %s -> %s" % (kind, name, want), "got %r in %.2f s: %r" % (st, t, b[:160]))
        return st, b

    # RFC 9112 section 6.1 / RFC 9110 section 8.6: framing
    expect("Content-Length with Transfer-Encoding",
           req(b"POST", post, b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", b"0\r\n\r\n"), 400)
    expect("two different Content-Length headers",
           req(b"POST", post, b"Content-Length: 5\r\nContent-Length: 6\r\n", b"abcdef"), 400)
    # malformed framing the parser refuses before any handler (http1.c)
    expect("a Content-Length list of different values",
           req(b"POST", post, b"Content-Length: 5, 6\r\n", b"abcdef"), 400)
    expect("a Content-Length that is not a number",
           req(b"POST", post, b"Content-Length: 0x5\r\n", b"abcde"), 400)
    expect("a Content-Length list of one value twice",
           req(b"POST", post, b"Content-Length: 5,5\r\n", b"abcde"), 400)
    expect("a bad chunk size",
           req(b"POST", post, b"Transfer-Encoding: chunked\r\n", b"zz\r\n"), 400)
    expect("a header line without a colon",
           req(b"GET", G, b"Bogus\r\n"), 400)
    expect("HTTP/2.0 in the request line",
           req(b"GET", G).replace(b"HTTP/1.1", b"HTTP/2.0", 1), 505)
    expect("Transfer-Encoding: xchunked (unknown coding)",
           req(b"POST", post, b"Transfer-Encoding: xchunked\r\n", b"0\r\n\r\n"), 501)
    expect("Transfer-Encoding: gzip, chunked",
           req(b"POST", post, b"Transfer-Encoding: gzip, chunked\r\n", b"0\r\n\r\n"), 501)
    # neighbours: the same value twice, and plain chunked, are fine (not refused by the front)
    st, _ = expect("the same Content-Length twice is accepted",
                   req(b"GET", G, b"Content-Length: 0\r\nContent-Length: 0\r\n"), GOOD, json_body=False)
    expect("Transfer-Encoding: chunked is accepted",
           req(b"GET", G, b"Transfer-Encoding: Chunked\r\n", b"0\r\n\r\n"), GOOD, json_body=False)

    # RFC 9112 section 3.2: Host, exactly one in HTTP/1.1; HTTP/1.0 may omit it
    expect("an HTTP/1.1 request without Host",
           b"GET " + G + b" HTTP/1.1\r\nConnection: close\r\n\r\n", 400)
    expect("two Host fields", req(b"GET", G, b"Host: other\r\n"), 400)
    expect("an HTTP/1.0 request without Host is served",
           b"GET " + G + b" HTTP/1.0\r\n\r\n", GOOD, json_body=False)

    # RFC 9112 section 3.2: bytes of the request target
    expect("a raw NUL in the target", req(b"GET", R + b"a\x00b"), 400)
    expect("a raw NUL before a fake version", req(b"GET", R + b"a\x00HTTP/1.1"), 400)
    expect("a control byte in the target", req(b"GET", R + b"a\x01b"), 400)
    expect("a DEL byte in the target", req(b"GET", R + b"a\x7fb"), 400)
    expect("a space inside the target", req(b"GET", R + b"a b"), 400)
    expect("a raw non-ASCII byte in the target", req(b"GET", R + b"caf\xc3\xa9"), 400)

    # decoding: once, and UTF-8
    expect("%FF in the path", req(b"GET", R + b"%FF"), 400)
    expect("an overlong UTF-8 form %C0%AF in the path", req(b"GET", R + b"%C0%AF"), 400)
    expect("a UTF-16 surrogate %ED%A0%80 in the path", req(b"GET", R + b"%ED%A0%80"), 400)
    expect("%00 in the path", req(b"GET", R + b"a%00b"), 400)
    expect("a bad escape %zz in the path", req(b"GET", R + b"%zz"), 400)
    expect("%FF in a query value", req(b"GET", G + b"?pageSize=%FF"), 400)
    expect("%00 in a query value", req(b"GET", G + b"?a=b%00c"), 400)
    st, b = expect("valid UTF-8 %C3%A9 is not refused by the front",
                   req(b"GET", R + b"caf%C3%A9"), (200, 400, 404, 405, 422), json_body=False)
    tap.ok(b"UTF-8" not in b, "%s: valid UTF-8 is not called invalid" % kind, repr(b[:120]))

    # lengths: the target, the path, the number of query parameters
    expect("a path of 2048 bytes is not refused for its length",
           req(b"GET", R + b"0" * (2048 - len(R))), (200, 400, 404, 405), json_body=False)
    expect("a path of 2049 bytes", req(b"GET", R + b"0" * (2049 - len(R))), 414)
    expect("a 4,104-byte path (once truncated and routed elsewhere)",
           req(b"GET", R + b"0" * 4080 + b"1/versions"), 414)
    expect("a target of 8193 bytes", req(b"GET", G + b"?q=" + b"a" * (8193 - len(G) - 3)), 414)
    expect("a 40 KB target", req(b"GET", R + b"0" * 40000), 414)
    q256 = b"&".join(b"k%d=v" % i for i in range(256))
    expect("256 query parameters are accepted", req(b"GET", G + b"?" + q256), GOOD, json_body=False)
    q257 = b"&".join(b"k%d=v" % i for i in range(257))
    expect("257 query parameters", req(b"GET", G + b"?" + q257), 414)
    q1000 = b"&".join(b"a%d=b" % i for i in range(1000))
    expect("1,000 query parameters (once a silent close)", req(b"GET", G + b"?" + q1000), 414)
    expect("32 KiB of headers are accepted",
           req(b"GET", G, b"X-Big: " + b"a" * 32000 + b"\r\n"), GOOD, json_body=False)
    expect("a 40 KB header", req(b"GET", G, b"X-Big: " + b"a" * 40000 + b"\r\n"), 431)
    expect("101 headers", req(b"GET", G, b"".join(b"X-H%d: v\r\n" % i for i in range(101))), 431)
    expect("a 100 KB header",
           req(b"GET", G, b"X-Big: " + b"a" * 100000 + b"\r\n"), 431)

    # bodies: 413 with the JSON body, for Content-Length and for a 100 MB chunked body
    expect("a Content-Length of 100 MB", req(b"POST", post, b"Content-Length: 104857600\r\n"), 413)
    c = T.connect(s, timeout=BOUND * 6)
    t0 = time.monotonic()
    try:
        c.sendall(b"POST " + post + b" HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json"
                  b"\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"10000\r\n" + b"a" * 65536 + b"\r\n"
        for _ in range(100 * 16):
            c.sendall(chunk)
        c.sendall(b"0\r\n\r\n")
        st, h, b = T.recv_response(c)
    except OSError as e:
        st, b = repr(e), b""
    c.close()
    tap.ok(st == 413 and T.json_error(b) is not None,
           "%s: a 100 MB chunked body -> 413 with a JSON body" % kind,
           "got %r after %.1f s: %r" % (st, time.monotonic() - t0, b[:120]))

    if kind == "registry":
        base = b"/api/model_registry/v1alpha3/registered_models"
        body = json.dumps({"name": "torture-one"}).encode()
        st, _, b, _ = T.exchange(s, req(b"POST", base, b"Content-Type: application/json\r\n"
                                        b"Content-Length: %d\r\n" % len(body), body))
        mid = json.loads(b).get("id") if st == 201 else None
        tap.ok(mid is not None, "registry: a registered model is created", "%r %r" % (st, b[:100]))
        st, _, b, _ = T.exchange(s, req(b"GET", base + b"/%25" + b"%x" % (0x30 + int(mid or 1))))
        tap.ok(st in (400, 404), "registry: %%25%x is decoded once (%%%x), not to id %s" %
               (0x30 + int(mid or 1), 0x30 + int(mid or 1), mid), "%r %r" % (st, b[:120]))
        st, _, b, _ = T.exchange(s, req(b"GET", base + b"/%" + b"%x" % (0x30 + int(mid or 1))))
        tap.ok(st == 200 and json.loads(b).get("id") == mid,
               "registry: %%%x is decoded to id %s" % (0x30 + int(mid or 1), mid), "%r" % st)
        st, _, b, _ = T.exchange(s, req(b"GET", base + b"/" + b"0" * 2030 + mid.encode() + b"/versions"))
        tap.ok(st == 414, "registry: a padded id with /versions past the path limit is 414, "
               "never the model", "%r %r" % (st, b[:100]))
        # the registry's own error shape: {"code": reason, "message": ...}
        st, _, b, _ = T.exchange(s, req(b"GET", base + b"/%FF"))
        j = T.json_error(b)
        tap.ok(st == 400 and j is not None and isinstance(j.get("code"), str),
               "registry: refusals keep the registry's error shape", repr(b[:120]))

    st, _, _, _ = T.exchange(s, req(b"GET", G))
    tap.ok(st == GOOD, "%s: still serving" % kind, repr(st))
    tap.ok(s.alive(), "%s: still running" % kind)
    s.stop()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
