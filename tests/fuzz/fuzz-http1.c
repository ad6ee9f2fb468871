/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP/1.1 request-head parser and chunked decoder (src/http/http1.c). The first byte picks
 * the piece size the input is fed in; the rest is a request. Checks that feeding it in pieces and
 * at once agree (state, status, head end, decoded body), that a refusal has one of the documented
 * statuses and a message, and that every offset stays inside the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/http1.h"
#include "http1-pieces.h"

static enum http1_state head_in_pieces(struct http1_head *h, const char *in, size_t len,
                                       size_t step)
{
        enum http1_state st = HTTP1_NEED_MORE;

        http1_head_init(h, NULL);
        for (size_t n = step < len ? step : len; st == HTTP1_NEED_MORE; n += step) {
                st = http1_head_feed(h, in, n < len ? n : len);
                if (n >= len)
                        break;
        }
        return st;
}

static void check_refusal(unsigned status, const char *message)
{
        if (status != 400 && status != 414 && status != 431 && status != 501 && status != 505)
                __builtin_trap();
        if (memchr(message, '\0', HTTP1_MESSAGE_MAX) == NULL || message[0] == '\0')
                __builtin_trap();
}

static void check_body(const char *in, size_t len, size_t step)
{
        struct http1_chunked a, b;
        char *out_a = malloc(len + 1), *out_b = malloc(len + 1);
        size_t na, nb, ea, eb;
        enum http1_state sa, sb;

        if (!out_a || !out_b)
                goto out;
        sa = http1_chunked_feed_pieces(&a, in, len, len ? len : 1, out_a, &na, &ea);
        sb = http1_chunked_feed_pieces(&b, in, len, step, out_b, &nb, &eb);
        if (sa != sb || na != nb || memcmp(out_a, out_b, na) != 0 || a.status != b.status)
                __builtin_trap();
        if (sa == HTTP1_COMPLETE && (ea != eb || a.body_len != na))
                __builtin_trap();
        if (sa == HTTP1_REFUSE)
                check_refusal(a.status, a.message);
out:
        free(out_a);
        free(out_b);
}

/* The stream's trace (http1-pieces.h); a refusal must be one of the documented ones. */
static size_t stream_trace(const char *in, size_t len, size_t step, char *buf, char *t)
{
        struct http1_stream s;
        size_t tl;

        http1_stream_init(&s, NULL);
        tl = http1_stream_trace(&s, in, len, step, false, buf, t);
        if (s.status != 0)
                check_refusal(s.status, s.message);
        return tl;
}

static void check_stream(const char *in, size_t len, size_t step)
{
        char *buf = malloc(len + 1), *ta = malloc(4 * len + 16), *tb = malloc(4 * len + 16);
        size_t la, lb;

        if (buf && ta && tb) {
                la = stream_trace(in, len, len ? len : 1, buf, ta);
                lb = stream_trace(in, len, step, buf, tb);
                if (la != lb || memcmp(ta, tb, la) != 0)
                        __builtin_trap();
        }
        free(buf);
        free(ta);
        free(tb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct http1_head whole, pieces;
        const char *in = (const char *)data + 1, *n, *v;
        size_t len, step, cur = 0, nl, vl;
        enum http1_state st;

        if (size == 0)
                return 0;
        len = size - 1;
        step = (size_t)data[0] % 64 + 1;
        check_stream(in, len, step);
        http1_head_init(&whole, NULL);
        st = http1_head_feed(&whole, in, len);
        if (head_in_pieces(&pieces, in, len, step) != st || pieces.status != whole.status ||
            pieces.head_len != whole.head_len)
                __builtin_trap();
        if (st == HTTP1_REFUSE)
                check_refusal(whole.status, whole.message);
        if (st != HTTP1_COMPLETE)
                return 0;
        if (whole.head_len > len || whole.target_off + whole.target_len > whole.head_len ||
            whole.method_len == 0 || whole.target_len == 0 || whole.version_minor > 1)
                __builtin_trap();
        while (http1_head_next_field(&whole, in, &cur, &n, &nl, &v, &vl))
                if (nl == 0 || v + vl > in + whole.head_len || cur > whole.head_len)
                        __builtin_trap();
        if (whole.chunked)
                check_body(in + whole.head_len, len - whole.head_len, step);
        return 0;
}
