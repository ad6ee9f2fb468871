/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the agent's proxy parses (src/agent/proxy.c): a client's requests under the proxy's
 * limits (agent/http-conn.h), a server's responses (src/http/http1.c's response side), and the
 * model each request target names (agent/infer-path.h). The first byte: bits 0-5 pick the piece
 * size the rest arrives in, bit 6 says the first response answers a HEAD, bit 7 that the
 * connection closes after the input. Checks:
 *  - fed in pieces and at once, both streams give the same events (http1-pieces.h's trace);
 *  - a response refusal is 502, a request refusal one of the statuses the proxy answers;
 *  - the bytes the proxy passes on for the first chunked body (what the next hop reads) decode
 *    to the same payload and end exactly where the body ended: no request smuggling through it;
 *  - a model name is within its limit, has no '/', '?', '#' or blank, and is in the target.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/http-conn.h"
#include "agent/infer-path.h"
#include "http/http1.h"
#include "http1-pieces.h"

static const struct http1_limits limits = HTTP_CONN_LIMITS_INIT;

static void check_refusal(const struct http1_stream *s)
{
        if (s->response ? s->status != 502
                        : s->status != 400 && s->status != 414 && s->status != 431 &&
                                  s->status != 501 && s->status != 505)
                __builtin_trap();
        if (!s->message || s->message[0] == '\0')
                __builtin_trap();
}

static void stream_init(struct http1_stream *s, bool response, bool head_request)
{
        if (response)
                http1_stream_init_response(s, &limits);
        else
                http1_stream_init(s, &limits);
        http1_stream_set_head_request(s, head_request);
}

/* Pieces and whole agree. */
static void check_stream(const char *in, size_t len, size_t step, bool response, bool head,
                         bool eof)
{
        char *buf = malloc(len + 1), *ta = malloc(4 * len + 16), *tb = malloc(4 * len + 16);
        struct http1_stream a, b;
        size_t la, lb;

        if (buf && ta && tb) {
                stream_init(&a, response, head);
                stream_init(&b, response, head);
                la = http1_stream_trace(&a, in, len, len ? len : 1, eof, buf, ta);
                lb = http1_stream_trace(&b, in, len, step, eof, buf, tb);
                if (la != lb || memcmp(ta, tb, la) != 0 || a.status != b.status)
                        __builtin_trap();
                if (a.status != 0)
                        check_refusal(&a);
        }
        free(buf);
        free(ta);
        free(tb);
}

/* The first message's chunked body as passed on: the bytes its events consumed. */
static size_t passed_on(struct http1_stream *s, const char *in, size_t len, char *raw, char *data,
                        size_t *ret_data_len)
{
        size_t off = 0, rl = 0, dl = 0;
        struct http1_step st;

        if (http1_stream_feed(s, in, len, &st) != HTTP1_EV_HEAD || s->body != HTTP1_BODY_CHUNKED)
                return SIZE_MAX;
        for (off = st.consumed;;) {
                enum http1_event ev = http1_stream_feed(s, in + off, len - off, &st);

                memcpy(raw + rl, in + off, st.consumed);
                rl += st.consumed;
                memcpy(data + dl, in + off + st.data_off, st.data_len);
                dl += st.data_len;
                off += st.consumed;
                if (ev == HTTP1_EV_END)
                        break;
                if (ev == HTTP1_EV_REFUSE || (ev == HTTP1_EV_NEED_MORE && st.consumed == 0))
                        return SIZE_MAX;
        }
        *ret_data_len = dl;
        return rl;
}

/* What the next hop reads from the passed-on bytes is the same body, ending at the same byte. */
static void check_pass_on(const char *in, size_t len, bool response)
{
        char *raw = malloc(len + 1), *data = malloc(len + 1), *again = malloc(len + 1);
        size_t rl, dl = 0, al, end;
        struct http1_stream s;
        struct http1_chunked c;

        stream_init(&s, response, false);
        if (raw && data && again && (rl = passed_on(&s, in, len, raw, data, &dl)) != SIZE_MAX) {
                if (http1_chunked_feed_pieces(&c, raw, rl, rl ? rl : 1, again, &al, &end) !=
                            HTTP1_COMPLETE ||
                    end != rl || al != dl || memcmp(again, data, dl) != 0)
                        __builtin_trap();
        }
        free(raw);
        free(data);
        free(again);
}

/* Every request target at once: the model it names. */
static void check_targets(const char *in, size_t len)
{
        struct http1_stream s;
        size_t off = 0;

        http1_stream_init(&s, &limits);
        while (off <= len) {
                char name[INFER_PATH_MODEL_MAX + 1];
                struct http1_step st;
                enum http1_event ev = http1_stream_feed(&s, in + off, len - off, &st);
                size_t n;

                if (ev == HTTP1_EV_HEAD) {
                        const char *t = in + off + s.head.target_off;

                        n = infer_path_model(t, s.head.target_len, name);
                        if (n > INFER_PATH_MODEL_MAX || strlen(name) != n ||
                            strcspn(name, "/?# \t") != n ||
                            (n > 0 && !memmem(t, s.head.target_len, name, n)))
                                __builtin_trap();
                }
                if (ev == HTTP1_EV_REFUSE || (ev == HTTP1_EV_NEED_MORE && st.consumed == 0))
                        return;
                off += st.consumed;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *in = (const char *)data + 1;
        size_t len, step;
        bool head, eof;

        if (size == 0)
                return 0;
        len = size - 1;
        step = (size_t)(data[0] & 0x3f) + 1;
        head = (data[0] & 0x40) != 0;
        eof = (data[0] & 0x80) != 0;
        check_stream(in, len, step, false, false, eof);
        check_stream(in, len, step, true, head, eof);
        check_pass_on(in, len, false);
        check_pass_on(in, len, true);
        check_targets(in, len);
        return 0;
}
