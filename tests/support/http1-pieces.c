/* SPDX-License-Identifier: Apache-2.0 */
#include "http1-pieces.h"

#include <stdlib.h>
#include <string.h>

enum http1_state http1_chunked_feed_pieces(struct http1_chunked *c, const char *in, size_t len,
                                           size_t step, char *out, size_t *ret_out_len,
                                           size_t *ret_end)
{
        size_t off = 0, avail = 0, n = 0;
        enum http1_state st = HTTP1_NEED_MORE;

        http1_chunked_init(c, NULL);
        while (st == HTTP1_NEED_MORE) {
                size_t used, doff, dlen;

                if (off == avail) {
                        if (avail == len)
                                break;
                        avail = avail + step > len ? len : avail + step;
                }
                st = http1_chunked_feed(c, in + off, avail - off, &used, &doff, &dlen);
                if (used > avail - off || doff + dlen > used)
                        abort();
                memcpy(out + n, in + off + doff, dlen);
                n += dlen;
                off += used;
        }
        *ret_out_len = n;
        *ret_end = off;
        return st;
}

/* Appends n bytes to the trace t. */
static void put(char *t, size_t *tl, const void *p, size_t n)
{
        memcpy(t + *tl, p, n);
        *tl += n;
}

/* One event into the trace; true when it ends the run (a refusal). */
static bool trace_event(const struct http1_stream *s, enum http1_event ev, const char *buf,
                        const struct http1_step *st, char *t, size_t *tl)
{
        if (ev == HTTP1_EV_HEAD) {
                put(t, tl, "H", 1);
                if (s->response)
                        put(t, tl, &s->head.code, sizeof(s->head.code));
                else
                        put(t, tl, buf + s->head.target_off, s->head.target_len);
        } else if (ev == HTTP1_EV_DATA)
                put(t, tl, buf + st->data_off, st->data_len);
        else if (ev == HTTP1_EV_END)
                put(t, tl, "E", 1);
        else if (ev == HTTP1_EV_REFUSE) {
                put(t, tl, "R", 1);
                put(t, tl, &s->status, sizeof(s->status));
                return true;
        }
        return false;
}

size_t http1_stream_trace(struct http1_stream *s, const char *in, size_t len, size_t step, bool eof,
                          char *buf, char *t)
{
        size_t have = 0, fed = 0, tl = 0;

        for (;;) {
                struct http1_step st;
                enum http1_event ev = http1_stream_feed(s, buf, have, &st);

                if (st.consumed > have || st.data_off + st.data_len > st.consumed)
                        abort();
                if (trace_event(s, ev, buf, &st, t, &tl))
                        return tl;
                memmove(buf, buf + st.consumed, have - st.consumed);
                have -= st.consumed;
                if (ev != HTTP1_EV_NEED_MORE)
                        continue;
                if (fed == len) {
                        if (eof)
                                (void)trace_event(s, http1_stream_eof(s, have), buf, &st, t, &tl);
                        return tl;
                }
                st.consumed = len - fed < step ? len - fed : step;
                memcpy(buf + have, in + fed, st.consumed);
                have += st.consumed;
                fed += st.consumed;
        }
}
