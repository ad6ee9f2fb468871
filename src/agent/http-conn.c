/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/http-conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/macro.h"

#define READ_SIZE ((size_t)16384)

void http_conn_init(struct http_conn *c, int fd, bool response, const struct http1_limits *limits)
{
        *c = (struct http_conn){ .fd = fd };
        if (response)
                http1_stream_init_response(&c->st, limits);
        else
                http1_stream_init(&c->st, limits);
        c->max = c->st.limits.head_max + READ_SIZE;
}

void http_conn_release(struct http_conn *c)
{
        free(c->b);
        c->b = NULL;
        c->cap = c->s = c->e = c->used = 0;
}

/* Room for one more read: the unused bytes moved to the front; the buffer grown (up to max)
 * only when they fill it, which only a head does (a body is handed out as it comes). */
static int make_room(struct http_conn *c)
{
        char *nb;
        size_t ncap;

        if (!c->b) {
                c->b = malloc(READ_SIZE);
                if (!c->b)
                        return -ENOMEM;
                c->cap = READ_SIZE;
                c->s = c->e = 0;
                return 0;
        }
        if (c->s == c->e)
                c->s = c->e = 0;
        if (c->e < c->cap)
                return 0;
        if (c->s > 0) {
                memmove(c->b, c->b + c->s, c->e - c->s);
                c->e -= c->s;
                c->s = 0;
                return 0;
        }
        if (c->cap >= c->max)
                return -EMSGSIZE; /* http1 refuses a head before it gets here */
        ncap = c->cap > 0 ? c->cap * 2 : READ_SIZE;
        if (ncap > c->max)
                ncap = c->max;
        nb = realloc(c->b, ncap);
        if (!nb)
                return -ENOMEM;
        c->b = nb;
        c->cap = ncap;
        return 0;
}

static int fill(struct http_conn *c)
{
        ssize_t n;
        int r = make_room(c);

        if (r < 0)
                return r;
        do
                n = recv(c->fd, c->b + c->e, c->cap - c->e, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        if (n == 0)
                c->eof = true;
        c->e += (size_t)n;
        return 0;
}

/* The peer closed and http1 wants more: the end of a body read until close, a close between
 * messages, or a message cut short. */
static void eof_event(struct http_conn *c, struct http_conn_event *ret)
{
        enum http1_event ev = http1_stream_eof(&c->st, c->e - c->s);

        c->s = c->e; /* whatever is left is no message */
        *ret = (struct http_conn_event){ .kind = ev == HTTP1_EV_END      ? HTTP_CONN_END
                                                 : ev == HTTP1_EV_REFUSE ? HTTP_CONN_REFUSE
                                                                         : HTTP_CONN_CLOSED };
}

static enum http_conn_kind kind_of(enum http1_event ev)
{
        switch (ev) {
        case HTTP1_EV_HEAD:
                return HTTP_CONN_HEAD;
        case HTTP1_EV_END:
                return HTTP_CONN_END;
        case HTTP1_EV_REFUSE:
                return HTTP_CONN_REFUSE;
        default: /* data, or chunk framing consumed with NEED_MORE */
                return HTTP_CONN_BODY;
        }
}

int http_conn_next(struct http_conn *c, struct http_conn_event *ret)
{
        int k = c->b ? 0 : make_room(c); /* the buffer, at the first read */

        if (k < 0)
                return k;
        c->s += c->used;
        c->used = 0;
        for (;;) {
                struct http1_step step;
                enum http1_event ev = http1_stream_feed(&c->st, c->b + c->s, c->e - c->s, &step);
                int r;

                if (ev == HTTP1_EV_NEED_MORE && step.consumed == 0) {
                        if (c->eof) {
                                eof_event(c, ret);
                                return 0;
                        }
                        r = fill(c);
                        if (r < 0)
                                return r;
                        continue;
                }
                *ret = (struct http_conn_event){ .kind = kind_of(ev),
                                                 .bytes = c->b + c->s,
                                                 .len = step.consumed,
                                                 .data = c->b + c->s + step.data_off,
                                                 .data_len = step.data_len };
                c->used = step.consumed;
                return 0;
        }
}

bool http_conn_has_unread(const struct http_conn *c)
{
        return c->e > c->s + c->used;
}

int http_conn_write_all(int fd, const void *data, size_t len)
{
        const char *p = data;

        while (len > 0) {
                ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}
