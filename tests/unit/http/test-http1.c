/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP/1.1 request-head parser and chunked decoder: one test per rule of docs/http.md. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "http/http1.h"
#include "http1-pieces.h"

/* Feeds the head at once and, separately, one byte at a time; both must agree. */
static enum http1_state parse(const char *s, struct http1_head *h)
{
        struct http1_head slow;
        enum http1_state st = HTTP1_NEED_MORE, whole;
        size_t len = strlen(s);

        http1_head_init(h, NULL);
        whole = http1_head_feed(h, s, len);
        http1_head_init(&slow, NULL);
        for (size_t i = 1; i <= len && st == HTTP1_NEED_MORE; i++)
                st = http1_head_feed(&slow, s, i);
        cr_assert_eq(st, whole, "byte-wise %d, at once %d for %s", st, whole, s);
        cr_assert_eq(slow.status, h->status);
        cr_assert_eq(slow.head_len, h->head_len);
        return whole;
}

static void refused(const char *s, unsigned status, const char *in_message)
{
        struct http1_head h;

        cr_assert_eq(parse(s, &h), HTTP1_REFUSE, "not refused: %s", s);
        cr_assert_eq(h.status, status, "%u instead of %u for %s (%s)", h.status, status, s,
                     h.message);
        cr_assert(strstr(h.message, in_message), "message \"%s\" lacks \"%s\"", h.message,
                  in_message);
}

static void accepted(const char *s)
{
        struct http1_head h;

        cr_assert_eq(parse(s, &h), HTTP1_COMPLETE, "not complete (%u %s): %s", h.status, h.message,
                     s);
        cr_assert_eq(h.head_len, strlen(s));
}

Test(http1_head, a_simple_request)
{
        const char *s = "GET /a/b?c=d HTTP/1.1\r\nHost: x\r\nX-A:  v 1 \r\n\r\nbody";
        struct http1_head h;
        const char *n, *v;
        size_t nl, vl, cur = 0;

        http1_head_init(&h, NULL);
        cr_assert_eq(http1_head_feed(&h, s, strlen(s)), HTTP1_COMPLETE);
        cr_assert_eq(h.head_len, strlen(s) - 4);
        cr_assert_eq(h.method_len, 3);
        cr_assert_eq(strncmp(s + h.target_off, "/a/b?c=d", h.target_len), 0);
        cr_assert_eq(h.target_len, 8);
        cr_assert_eq(h.version_minor, 1);
        cr_assert(http1_head_keep_alive(&h));
        cr_assert(http1_head_next_field(&h, s, &cur, &n, &nl, &v, &vl));
        cr_assert(nl == 4 && strncmp(n, "Host", 4) == 0 && vl == 1 && *v == 'x');
        cr_assert(http1_head_next_field(&h, s, &cur, &n, &nl, &v, &vl));
        cr_assert(nl == 3 && vl == 3 && strncmp(v, "v 1", 3) == 0);
        cr_assert_not(http1_head_next_field(&h, s, &cur, &n, &nl, &v, &vl));
        /* once complete, it stays complete */
        cr_assert_eq(http1_head_feed(&h, s, strlen(s)), HTTP1_COMPLETE);
}

Test(http1_head, need_more_until_the_empty_line)
{
        struct http1_head h;
        const char *s = "GET / HTTP/1.1\r\nHost: x\r\n";

        http1_head_init(&h, NULL);
        cr_assert_eq(http1_head_feed(&h, s, strlen(s)), HTTP1_NEED_MORE);
        cr_assert_eq(http1_head_feed(&h, "", 0), HTTP1_NEED_MORE);
}

Test(http1_head, line_ends_and_leading_empty_lines)
{
        accepted("GET / HTTP/1.1\nHost: x\n\n");
        accepted("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n");
        refused("GET / HTTP/1.1\rHost: x\r\n\r\n", 400, "bare CR");
        refused("GET / HTTP/1.1\r\nHost: x\ry\r\n\r\n", 400, "bare CR");
}

Test(http1_head, request_line_syntax)
{
        refused("GET\r\n\r\n", 400, "method target version");
        refused("GET /\r\n\r\n", 400, "method target version");
        refused(" GET / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "starts with a space");
        refused("G(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "method");
        refused("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "request target");
        refused("GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", 400, "0x20");
        refused("GET /\x01 HTTP/1.1\r\nHost: h\r\n\r\n", 400, "0x01");
        refused("GET /\x7f HTTP/1.1\r\nHost: h\r\n\r\n", 400, "0x7f");
        refused("GET /\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n", 400, "0xc3");
        refused("GET a/b HTTP/1.1\r\nHost: h\r\n\r\n", 400, "not a path");
        refused("GET * HTTP/1.1\r\nHost: h\r\n\r\n", 400, "not a path");
        accepted("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n");
        accepted("CONNECT example.com:443 HTTP/1.1\r\nHost: h\r\n\r\n");
        accepted("GET http://example.com/x HTTP/1.1\r\nHost: h\r\n\r\n");
}

Test(http1_head, a_raw_nul_in_the_head)
{
        struct http1_head h;
        const char s[] = "GET /a\0b HTTP/1.1\r\nHost: h\r\n\r\n";

        http1_head_init(&h, NULL);
        cr_assert_eq(http1_head_feed(&h, s, sizeof(s) - 1), HTTP1_REFUSE);
        cr_assert_eq(h.status, 400);
        cr_assert(strstr(h.message, "0x00"));
}

Test(http1_head, versions)
{
        struct http1_head h;

        refused("GET / HTTP/2.0\r\n\r\n", 505, "HTTP/2.0");
        refused("GET / HTTP/0.9\r\n\r\n", 505, "not supported");
        refused("GET / HTTP/1.10\r\n\r\n", 400, "HTTP version");
        refused("GET / http/1.1\r\n\r\n", 400, "HTTP version");
        refused("GET / HTTP/1\r\n\r\n", 400, "HTTP version");
        cr_assert_eq(parse("GET / HTTP/1.0\r\n\r\n", &h), HTTP1_COMPLETE);
        cr_assert_eq(h.version_minor, 0);
        cr_assert_not(http1_head_keep_alive(&h));
        cr_assert_eq(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &h), HTTP1_COMPLETE);
        cr_assert(http1_head_keep_alive(&h));
        cr_assert_eq(parse("GET / HTTP/1.2\r\nHost: h\r\n\r\n", &h), HTTP1_COMPLETE);
        cr_assert_eq(h.version_minor, 1);
        cr_assert_eq(parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: foo, close\r\n\r\n", &h),
                     HTTP1_COMPLETE);
        cr_assert_not(http1_head_keep_alive(&h));
}

Test(http1_head, field_syntax)
{
        refused("GET / HTTP/1.1\r\nHost: h\r\nX-A b\r\n\r\n", 400, "no colon");
        refused("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n folded\r\n\r\n", 400, "folding");
        refused("GET / HTTP/1.1\r\nHost: h\r\n\tX-A: a\r\n\r\n", 400, "folding");
        refused("GET / HTTP/1.1\r\nHost: h\r\nX-A : a\r\n\r\n", 400, "whitespace between");
        refused("GET / HTTP/1.1\r\nHost: h\r\n: a\r\n\r\n", 400, "empty field name");
        refused("GET / HTTP/1.1\r\nHost: h\r\nX(A: a\r\n\r\n", 400, "field name");
        refused("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\x01z\r\n\r\n", 400, "X-A");
        refused("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\x7fz\r\n\r\n", 400, "0x7f");
        accepted("GET / HTTP/1.1\r\nHost: h\r\nX-A: caf\xc3\xa9\t!\r\nX-B:\r\n\r\n");
        refused("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "Host");
}

/* RFC 9112 §3.2: an HTTP/1.1 request without Host is 400, HTTP/1.0 may omit it. */
Test(http1_head, host_is_required_in_http_1_1)
{
        struct http1_head h;

        refused("GET / HTTP/1.1\r\n\r\n", 400, "without a Host field");
        refused("GET / HTTP/1.1\r\nX-Host: a\r\n\r\n", 400, "without a Host field");
        refused("GET / HTTP/1.2\r\nUser-Agent: u\r\n\r\n", 400, "without a Host field");
        refused("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
                "without a Host field");
        refused("GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", 400, "more than one Host");
        accepted("GET / HTTP/1.1\r\nhost: a\r\n\r\n");
        accepted("GET / HTTP/1.1\r\nHost:\r\n\r\n"); /* empty is allowed (no authority) */
        cr_assert_eq(parse("GET / HTTP/1.0\r\n\r\n", &h), HTTP1_COMPLETE);
        cr_assert_eq(h.version_minor, 0);
        cr_assert_eq(parse("POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\n", &h), HTTP1_COMPLETE);
        cr_assert_eq(h.content_length, 2);
}

Test(http1_head, content_length)
{
        struct http1_head h;

        cr_assert_eq(parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n", &h),
                     HTTP1_COMPLETE);
        cr_assert(h.has_content_length);
        cr_assert_eq(h.content_length, 5);
        cr_assert_eq(
                parse("POST / HTTP/1.1\r\nHost: h\r\ncontent-length: 7\r\nContent-Length:7\r\n\r\n",
                      &h),
                HTTP1_COMPLETE);
        cr_assert_eq(h.content_length, 7);
        refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 6\r\n\r\n", 400, "one decimal");
        refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5,5\r\n\r\n", 400, "one decimal");
        refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x5\r\n\r\n", 400, "one decimal");
        refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400, "one decimal");
        refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +1\r\n\r\n", 400, "one decimal");
        refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n", 400, "empty");
        refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n", 400,
                "too large");
        refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400,
                "different");
        accepted("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 18446744073709551609\r\n\r\n");
}

Test(http1_head, transfer_encoding)
{
        struct http1_head h;

        cr_assert_eq(parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n", &h),
                     HTTP1_COMPLETE);
        cr_assert(h.chunked);
        cr_assert_eq(parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: , chunked ,\r\n\r\n",
                           &h),
                     HTTP1_COMPLETE);
        cr_assert(h.chunked);
        refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
                400, "Content-Length together");
        refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: xchunked\r\n\r\n", 501,
                "xchunked");
        refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501,
                "gzip");
        refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
                501, "gzip");
        refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400,
                "last");
        refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
                400, "twice");
        refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n\r\n", 400, "empty");
        refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: a(b\r\n\r\n", 400,
                "list of codings");
        refused("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "HTTP/1.0");
}

Test(http1_head, expect_continue)
{
        struct http1_head h;

        cr_assert_eq(parse("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\n\r\n", &h),
                     HTTP1_COMPLETE);
        cr_assert(h.expect_continue);
}

static char *repeat(const char *prefix, char c, size_t n, const char *suffix)
{
        size_t pl = strlen(prefix), sl = strlen(suffix);
        char *s = malloc(pl + n + sl + 1);

        cr_assert_not_null(s);
        memcpy(s, prefix, pl);
        memset(s + pl, c, n);
        memcpy(s + pl + n, suffix, sl + 1);
        return s;
}

static void append(char *buf, size_t size, const char *s)
{
        size_t n = strlen(buf), l = strlen(s);

        cr_assert_lt(n + l, size);
        memcpy(buf + n, s, l + 1);
}

Test(http1_head, limits)
{
        char *s;
        struct http1_head h;
        char many[4096] = "GET / HTTP/1.1\r\nHost: h\r\n";

        s = repeat("GET /", 'a', 8191, " HTTP/1.1\r\nHost: h\r\n\r\n"); /* target of 8,192 bytes */
        accepted(s);
        free(s);
        s = repeat("GET /", 'a', 8192, " HTTP/1.1\r\nHost: h\r\n\r\n");
        refused(s, 414, "8192");
        free(s);
        /* refused before the request line ends */
        s = repeat("GET /", 'a', 9000, "");
        http1_head_init(&h, NULL);
        cr_assert_eq(http1_head_feed(&h, s, strlen(s)), HTTP1_REFUSE);
        cr_assert_eq(h.status, 414);
        free(s);
        s = repeat("GET / HTTP/1.1\r\nHost: h\r\nX-Big: ", 'a', 40000, "\r\n\r\n");
        refused(s, 431, "32768");
        free(s);
        s = repeat("GET / HTTP/1.1\r\nHost: h\r\nX-Big: ", 'a', 100000, "\r\n\r\n");
        refused(s, 431, "");
        free(s);
        /* a head over 64 KiB made of small fields (within the field limits: more fields) */
        for (int i = 0; i < 101; i++)
                append(many, sizeof(many), "X-H: v\r\n");
        append(many, sizeof(many), "\r\n");
        refused(many, 431, "100 header fields");
}

Test(http1_head, head_limit_alone)
{
        struct http1_limits l = HTTP1_LIMITS_DEFAULT;
        struct http1_head h;
        char *s = repeat("GET / HTTP/1.1\r\nHost: h\r\nX: ", 'a', 200, "\r\n\r\n");

        l.head_max = 100;
        http1_head_init(&h, &l);
        cr_assert_eq(http1_head_feed(&h, s, strlen(s)), HTTP1_REFUSE);
        cr_assert_eq(h.status, 431);
        cr_assert(strstr(h.message, "head is over 100 bytes"));
        free(s);
}

static void chunked_ok(const char *in, const char *data)
{
        char out[256];
        struct http1_chunked c;

        for (size_t step = 1; step <= strlen(in); step++) {
                size_t n, end;

                cr_assert_eq(http1_chunked_feed_pieces(&c, in, strlen(in), step, out, &n, &end),
                             HTTP1_COMPLETE, "%s (step %zu): %u %s", in, step, c.status, c.message);
                cr_assert_eq(n, strlen(data));
                cr_assert_eq(memcmp(out, data, n), 0);
                cr_assert_eq(end, strlen(in) - strlen("NEXT"));
                cr_assert_eq(c.body_len, n);
        }
}

static void chunked_refused(const char *in, unsigned status, const char *in_message)
{
        char out[256];
        size_t n, end;
        struct http1_chunked c;

        cr_assert_eq(http1_chunked_feed_pieces(&c, in, strlen(in), 1, out, &n, &end), HTTP1_REFUSE,
                     "%s", in);
        cr_assert_eq(c.status, status, "%s: %u %s", in, c.status, c.message);
        cr_assert(strstr(c.message, in_message), "message \"%s\" lacks \"%s\"", c.message,
                  in_message);
}

Test(http1_chunked, decodes)
{
        chunked_ok("0\r\n\r\nNEXT", "");
        chunked_ok("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\nNEXT", "hello world");
        chunked_ok("A\r\n0123456789\r\n0\r\n\r\nNEXT", "0123456789");
        chunked_ok("0005;a=b;c=\"d e\"\r\nhello\r\n0 ; x\r\n\r\nNEXT", "hello");
        chunked_ok("3\r\nabc\r\n0\r\nX-T: v\r\nY:\r\n\r\nNEXT", "abc");
}

Test(http1_chunked, refuses_bad_framing)
{
        chunked_refused("zz\r\n", 400, "not a hexadecimal");
        chunked_refused("\r\n", 400, "not a hexadecimal");
        chunked_refused("-1\r\n", 400, "not a hexadecimal");
        chunked_refused("0x5\r\n", 400, "0x78");
        chunked_refused("5 \r\nhello\r\n", 400, "whitespace after");
        chunked_refused("5\nhello\r\n", 400, "0x0a");
        chunked_refused("5\r\r\n", 400, "CRLF");
        chunked_refused("11111111111111111\r\n", 400, "16 hex digits");
        chunked_refused("5\r\nhelloX\r\n", 400, "not followed by CRLF");
        chunked_refused("5\r\nhello\rX", 400, "not followed by CRLF");
        chunked_refused("5\r\nhello\n0\r\n\r\n", 400, "not followed by CRLF");
        chunked_refused("5;\x01\r\n", 400, "extension");
        chunked_refused("0\r\nX-T\r\n\r\n", 400, "without a colon");
        chunked_refused("0\r\nX-T : v\r\n\r\n", 400, "trailer field name");
        chunked_refused("0\r\n x: v\r\n\r\n", 400, "whitespace");
        chunked_refused("0\r\nX: \x01\r\n\r\n", 400, "trailer field value");
        chunked_refused("0\r\nX: v\rX", 400, "CRLF");
        chunked_refused("0\r\n\rX", 400, "not ended by CRLF");
        chunked_refused("0\r\n\n", 400, "0x0a");
}

Test(http1_chunked, limits_and_sizes)
{
        struct http1_chunked c;
        size_t used, doff, dlen;
        char *ext = repeat("5;", 'a', 5000, "\r\n");
        const char *big = "ffffffffffffffff\r\nab";

        chunked_refused(ext, 400, "extensions over 4096");
        free(ext);
        http1_chunked_init(&c, NULL);
        cr_assert_eq(http1_chunked_feed(&c, big, strlen(big), &used, &doff, &dlen),
                     HTTP1_NEED_MORE);
        cr_assert_eq(used, strlen(big));
        cr_assert_eq(doff, strlen(big) - 2);
        cr_assert_eq(dlen, 2);
        cr_assert_eq(c.remaining, UINT64_MAX - 2);
        /* a second chunk that would overflow the body length */
        http1_chunked_init(&c, NULL);
        c.body_len = UINT64_MAX - 1;
        cr_assert_eq(http1_chunked_feed(&c, "2\r\n", 3, &used, &doff, &dlen), HTTP1_REFUSE);
        cr_assert(strstr(c.message, "too large"));
        /* once refused or complete, it stays so */
        cr_assert_eq(http1_chunked_feed(&c, "0\r\n\r\n", 5, &used, &doff, &dlen), HTTP1_REFUSE);
        cr_assert_eq(used, 0);
}

Test(http1_chunked, trailer_limits)
{
        char *s = repeat("0\r\nX: ", 'a', 40000, "\r\n\r\n");
        char many[2048] = "0\r\n";

        chunked_refused(s, 431, "trailer fields over");
        free(s);
        for (int i = 0; i < 101; i++)
                append(many, sizeof(many), "X: v\r\n");
        append(many, sizeof(many), "\r\n");
        chunked_refused(many, 431, "over 100 trailer fields");
}

/* How trace() runs a stream: of responses (the first one answering a HEAD request or not), and
 * whether the connection closes after the input (http1_stream_eof()). */
struct trace_opts {
        bool response, head_request, eof;
};

static size_t trace_event(struct http1_stream *s, enum http1_event ev, const char *buf,
                          const struct http1_step *st, char *out, size_t out_size)
{
        switch (ev) {
        case HTTP1_EV_HEAD:
                if (s->response)
                        return (size_t)snprintf(out, out_size, "H%u ", s->head.code);
                return (size_t)snprintf(out, out_size, "H%.*s ", (int)s->head.target_len,
                                        buf + s->head.target_off);
        case HTTP1_EV_DATA:
                return (size_t)snprintf(out, out_size, "D%.*s ", (int)st->data_len,
                                        buf + st->data_off);
        case HTTP1_EV_END:
                return (size_t)snprintf(out, out_size, "E ");
        case HTTP1_EV_REFUSE:
                return (size_t)snprintf(out, out_size, "R%u", s->status);
        default:
                return 0;
        }
}

/*
 * Runs a connection's bytes through a stream, arriving step bytes at a time into a buffer that
 * keeps what was not consumed; writes the events as text: "H<target>" (a response: "H<code>")
 * "D<bytes>" "E" "R<status>". Checks that the bytes consumed by the events of a body are that
 * body as it came (what a proxy passes on): *ret_raw gets them, heads excluded.
 */
static void trace_with(const char *in, size_t len, size_t step, const struct trace_opts *o,
                       char *out, size_t out_size, char *raw)
{
        struct http1_stream s;
        char buf[4096];
        size_t have = 0, fed = 0, n_out = 0, n_raw = 0;
        bool closed = false; /* bytes after the last message are ignored, not a body's */

        if (o->response)
                http1_stream_init_response(&s, NULL);
        else
                http1_stream_init(&s, NULL);
        http1_stream_set_head_request(&s, o->head_request);
        out[0] = raw[0] = '\0';
        for (;;) {
                struct http1_step st;
                enum http1_event ev = http1_stream_feed(&s, buf, have, &st);

                cr_assert_leq(st.consumed, have);
                n_out += trace_event(&s, ev, buf, &st, out + n_out, out_size - n_out);
                cr_assert_lt(n_out, out_size);
                if (ev == HTTP1_EV_REFUSE)
                        return;
                if (ev != HTTP1_EV_HEAD && !closed) {
                        memcpy(raw + n_raw, buf, st.consumed);
                        raw[n_raw += st.consumed] = '\0';
                }
                closed = closed || (ev == HTTP1_EV_END && s.close_after) ||
                         (ev == HTTP1_EV_HEAD && s.response && s.head.code == 101);
                memmove(buf, buf + st.consumed, have - st.consumed);
                have -= st.consumed;
                if (ev == HTTP1_EV_NEED_MORE) {
                        size_t n = len - fed < step ? len - fed : step;

                        if (n == 0) {
                                if (o->eof)
                                        (void)trace_event(&s, http1_stream_eof(&s, have), buf, &st,
                                                          out + n_out, out_size - n_out);
                                return;
                        }
                        cr_assert_lt(have + n, sizeof(buf));
                        memcpy(buf + have, in + fed, n);
                        have += n;
                        fed += n;
                }
        }
}

static void trace(const char *in, size_t len, size_t step, char *out, size_t out_size)
{
        char raw[4096];

        trace_with(in, len, step, &(struct trace_opts){ 0 }, out, out_size, raw);
}

/* Data events are merged for comparison: "D" pieces differ with the step. */
static void merge_data(const char *in, char *out)
{
        bool in_data = false;

        for (; *in; in++) {
                if (in[0] == 'D') {
                        if (!in_data)
                                *out++ = 'D';
                        in_data = true;
                        continue;
                }
                if (in_data && in[0] == ' ' && in[1] == 'D') {
                        continue;
                }
                if (in_data && in[0] == ' ')
                        in_data = false;
                *out++ = *in;
        }
        *out = '\0';
}

static void stream_is(const char *in, const char *want)
{
        char got[1024], merged[1024];

        for (size_t step = 1; step <= strlen(in) + 1; step++) {
                trace(in, strlen(in), step, got, sizeof(got));
                merge_data(got, merged);
                cr_assert_str_eq(merged, want, "step %zu: %s", step, got);
        }
}

Test(http1_stream, keep_alive_and_pipelining)
{
        stream_is("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n",
                  "H/a E H/b E ");
        stream_is(
                "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhelloGET /b HTTP/1.1\r\nHost: h\r\n\r\n",
                "H/a Dhello E H/b E ");
        stream_is(
                "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhe\r\n3\r\nllo\r\n"
                "0\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n",
                "H/a Dhello E H/b E ");
}

Test(http1_stream, the_last_request)
{
        /* Connection: close and HTTP/1.0 end the stream; what follows is ignored */
        stream_is(
                "GET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n",
                "H/a E ");
        stream_is("GET /a HTTP/1.0\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n", "H/a E ");
        stream_is(
                "GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n",
                "H/a E H/b E ");
}

Test(http1_stream, refusals_on_later_requests)
{
        /* the second request's head, and a chunked body's framing, refused in the stream */
        stream_is("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/2.0\r\n\r\n", "H/a E R505");
        stream_is("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n",
                  "H/a E R400");
        stream_is(
                "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhe\r\nzz\r\n",
                "H/a Dhe R400");
        stream_is(
                "GET /a HTTP/1.1\r\nHost: h\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 0x5\r\n\r\n",
                "H/a E R400");
}

/* ---- responses: the agent's proxy reads its upstream's answers with them ---- */

static void response_is(const char *in, const struct trace_opts *o, const char *want,
                        const char *want_raw)
{
        char got[1024], merged[1024], raw[4096];

        for (size_t step = 1; step <= strlen(in) + 1; step++) {
                trace_with(in, strlen(in), step, o, got, sizeof(got), raw);
                merge_data(got, merged);
                cr_assert_str_eq(merged, want, "step %zu: %s", step, got);
                if (want_raw)
                        cr_assert_str_eq(raw, want_raw, "step %zu", step);
        }
}

#define RESPONSE     (&(struct trace_opts){ .response = true })
#define RESPONSE_EOF (&(struct trace_opts){ .response = true, .eof = true })

Test(http1_response, status_line_and_fields)
{
        const char *s = "HTTP/1.1 404 Not Found Here\r\nX-A: v\r\nContent-Length: 0\r\n\r\n";
        struct http1_head h;
        const char *n, *v;
        size_t nl, vl, cur = 0;

        http1_head_init_response(&h, NULL);
        cr_assert_eq(http1_head_feed(&h, s, strlen(s)), HTTP1_COMPLETE);
        cr_assert_eq(h.code, 404);
        cr_assert_eq(h.reason_len, 14);
        cr_assert_eq(strncmp(s + h.reason_off, "Not Found Here", 14), 0);
        cr_assert(http1_head_next_field(&h, s, &cur, &n, &nl, &v, &vl));
        cr_assert(nl == 3 && strncmp(n, "X-A", 3) == 0 && vl == 1 && *v == 'v');
        /* no reason, with or without the space before it; no Host needed */
        s = "HTTP/1.1 200\r\n\r\n";
        http1_head_init_response(&h, NULL);
        cr_assert_eq(http1_head_feed(&h, s, strlen(s)), HTTP1_COMPLETE);
        cr_assert_eq(h.code, 200);
        cr_assert_eq(h.reason_len, 0);
        s = "HTTP/1.0 200 \r\n\r\n";
        http1_head_init_response(&h, NULL);
        cr_assert_eq(http1_head_feed(&h, s, strlen(s)), HTTP1_COMPLETE);
        cr_assert_not(http1_head_keep_alive(&h));
}

static void response_refused(const char *s, const char *in_message)
{
        struct http1_head h;

        http1_head_init_response(&h, NULL);
        cr_assert_eq(http1_head_feed(&h, s, strlen(s)), HTTP1_REFUSE, "not refused: %s", s);
        cr_assert_eq(h.status, 502, "%u for %s", h.status, s);
        cr_assert(strstr(h.message, in_message), "message \"%s\" lacks \"%s\"", h.message,
                  in_message);
}

/* Every refusal of a response is 502, with the rule in the message. */
Test(http1_response, refusals_are_502)
{
        response_refused("HTTP/2.0 200 OK\r\n\r\n", "not supported");
        response_refused("HTTX/1.1 200 OK\r\n\r\n", "HTTP version");
        response_refused("HTTP/1.1 2000 OK\r\n\r\n", "version code reason");
        response_refused("HTTP/1.1 20 OK\r\n\r\n", "version code reason");
        response_refused("HTTP/1.1 2x0 OK\r\n\r\n", "three digits");
        response_refused("HTTP/1.1 099 OK\r\n\r\n", "between 100 and 599");
        response_refused("HTTP/1.1 600 OK\r\n\r\n", "between 100 and 599");
        response_refused("HTTP/1.1 200 O\x01K\r\n\r\n", "reason phrase");
        response_refused("HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", "no colon");
        response_refused("HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n", "folding");
        response_refused("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                         "different values");
        response_refused(
                "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
                "together");
        response_refused("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "not supported");
        response_refused("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                         "HTTP/1.0 response");
        response_refused("HTTP/1.1 200 OK\rX: y\r\n\r\n", "response head");
}

Test(http1_response, framings)
{
        /* Content-Length, keep-alive: the next response follows */
        response_is("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
                    "HTTP/1.1 204 No Content\r\n\r\n",
                    RESPONSE, "H200 Dhello E H204 E ", "hello");
        /* chunked: the framing, extensions and trailers consumed as they came */
        response_is("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "5;x=y\r\nhello\r\n1\r\n!\r\n0\r\nT: v\r\n\r\n"
                    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                    RESPONSE, "H200 Dhello! E H200 Dok E ",
                    "5;x=y\r\nhello\r\n1\r\n!\r\n0\r\nT: v\r\n\r\nok");
        /* neither: until the server closes, and the last one */
        response_is("HTTP/1.1 200 OK\r\n\r\nuntil-close", RESPONSE_EOF, "H200 Duntil-close E ",
                    "until-close");
        /* HTTP/1.0 without keep-alive: the last one; what follows is ignored */
        response_is("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n",
                    RESPONSE, "H200 Dok E ", NULL);
        response_is("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nokjunk",
                    RESPONSE, "H200 Dok E ", NULL);
}

Test(http1_response, no_body)
{
        /* a HEAD request's answer keeps its Content-Length and has no body; the next one does */
        response_is("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
                    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                    &(struct trace_opts){ .response = true, .head_request = true },
                    "H200 E H200 Dok E ", "ok");
        response_is("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n"
                    "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
                    RESPONSE, "H304 E H204 E H200 E ", "");
}

Test(http1_response, interim_and_switching)
{
        /* 100 and 103 before the final answer, no end between them */
        response_is("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                    RESPONSE, "H100 H103 H200 Dok E ", "ok");
        /* 101: another protocol follows, not read as HTTP */
        response_is("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\nHTTP/1.1 x",
                    RESPONSE, "H101 ", NULL);
}

Test(http1_response, refused_in_the_stream_and_cut_short)
{
        response_is("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhe\r\nzz\r\n",
                    RESPONSE, "H200 Dhe R502", NULL);
        response_is("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", RESPONSE_EOF,
                    "H200 Dhel R502", NULL);
        response_is("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
                    RESPONSE_EOF, "H200 Dhello R502", NULL);
        response_is("HTTP/1.1 200 OK\r\nContent-", RESPONSE_EOF, "R502", NULL);
        response_is("HTTP/1.1 100 Continue\r\n\r\n", RESPONSE_EOF, "H100 R502", NULL);
        /* a close between responses is no refusal */
        response_is("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", RESPONSE_EOF, "H200 Dok E ",
                    "ok");
}

/* ---- requests through a proxy: Host optional, the end of the connection ---- */

Test(http1_stream, host_optional_and_cut_short)
{
        struct http1_limits l = HTTP1_LIMITS_DEFAULT;
        struct http1_head h;
        const char *s = "GET / HTTP/1.1\r\nK-Network-Probe: queue\r\n\r\n";

        l.host_optional = true;
        http1_head_init(&h, &l);
        cr_assert_eq(http1_head_feed(&h, s, strlen(s)), HTTP1_COMPLETE);
        response_is("POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhel",
                    &(struct trace_opts){ .eof = true }, "H/a Dhel R400", NULL);
        response_is("POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "2\r\nhe\r\n0\r\n\r\n",
                    &(struct trace_opts){ .eof = true }, "H/a Dhe E ", "2\r\nhe\r\n0\r\n\r\n");
        response_is("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HT",
                    &(struct trace_opts){ .eof = true }, "H/a E R400", NULL);
}

/* The framing a message's head decides, as the proxy reads it to write its own head. */
static enum http1_body body_of(const char *in, bool response, bool head_request)
{
        struct http1_stream s;
        struct http1_step st;

        if (response)
                http1_stream_init_response(&s, NULL);
        else
                http1_stream_init(&s, NULL);
        http1_stream_set_head_request(&s, head_request);
        cr_assert_eq(http1_stream_feed(&s, in, strlen(in), &st), HTTP1_EV_HEAD, "%s", in);
        return s.body;
}

Test(http1_stream, body_framing)
{
        cr_assert_eq(body_of("GET / HTTP/1.1\r\nHost: h\r\n\r\n", false, false), HTTP1_BODY_NONE);
        cr_assert_eq(body_of("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", false,
                             false),
                     HTTP1_BODY_LENGTH);
        cr_assert_eq(body_of("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
                             false, false),
                     HTTP1_BODY_CHUNKED);
        cr_assert_eq(body_of("HTTP/1.1 200 OK\r\n\r\n", true, false), HTTP1_BODY_UNTIL_CLOSE);
        cr_assert_eq(body_of("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", true, true),
                     HTTP1_BODY_NONE);
        cr_assert_eq(body_of("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", true, false),
                     HTTP1_BODY_LENGTH);
        cr_assert_eq(body_of("HTTP/1.1 304 Not Modified\r\n\r\n", true, false), HTTP1_BODY_NONE);
        cr_assert_eq(body_of("HTTP/1.1 100 Continue\r\n\r\n", true, false), HTTP1_BODY_NONE);
}
