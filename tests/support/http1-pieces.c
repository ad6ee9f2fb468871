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
