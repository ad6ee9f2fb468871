/* SPDX-License-Identifier: Apache-2.0 */
#include "http/engine.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/errors.h"
#include "http/http1.h"
#include "util/time-util.h"

#define LOOPS_MAX      64U
#define EVENTS_MAX     64
#define ACCEPT_BURST   64
#define TICK_MS        250
#define READ_CHUNK     ((size_t)16 * 1024)
#define IN_MAX         (HTTP1_HEAD_MAX + READ_CHUNK)
#define DRAIN_USEC     (2 * USEC_PER_SEC) /* reading after a refusal, so the answer is not reset */
#define OUT_HEAD_MAX   ((size_t)64 * 1024)
#define LISTEN_BACKLOG 1024
#define EV_LISTEN      ((void *)1)
#define EV_STOP        ((void *)2)
#define ADDR_BUCKETS   1024U /* a power of two; 4,096 connections at most by default */

struct loop;

struct addr_key {
        sa_family_t family;
        uint8_t bytes[16]; /* the IPv4 or IPv6 address, zero-padded */
};

struct addr_count {
        struct addr_count *next; /* in its bucket */
        struct addr_key key;
        unsigned n;
};

struct conn {
        struct conn *prev, *next;           /* on http_engine.conns (newest first), under lock */
        struct conn *loop_prev, *loop_next; /* on loop.conns, loop thread only */
        struct loop *loop;
        int fd;
        void *tp;         /* the transport's state (TLS), NULL for plain TCP */
        bool handshaking; /* the transport's handshake is not done yet */
        usec_t last_io;   /* the last byte read or written (idle_timeout) */
        struct sockaddr_storage peer;
        socklen_t peer_len;
        struct addr_count *addr; /* counted under this address (under lock); NULL if not */
        char *in; /* IN_MAX bytes from the first read on (NULL before); in_len not consumed yet */
        size_t in_len;
        struct buf out;
        size_t out_off;
        struct http1_stream st;
        struct http_engine_req req;
        char *arena; /* the strings of req */
        bool busy;   /* a head has arrived; its answer is not written yet (under lock) */
        bool too_large;
        uint64_t received;
        bool closing;  /* close once out is written */
        bool draining; /* write side shut: read and drop until EOF or drain_until */
        bool eof;
        bool answered; /* an answer was queued: the request ends once it is written */
        bool want_out; /* registered for EPOLLOUT */
        bool shed;     /* shut down to make room (under lock) */
        usec_t since;  /* start of the head wait or of the request */
        usec_t drain_until;
};

struct loop {
        struct http_engine *e;
        int ep;
        pthread_t thread;
        bool running;
        struct conn *conns;
};

struct http_engine {
        struct http_engine_config cfg;
        int lfd;
        int stop_fd;
        uint16_t port;
        struct loop loops[LOOPS_MAX];
        unsigned n_loops;
        pthread_mutex_t lock;
        struct conn *conns; /* newest first */
        struct conn *oldest;
        size_t n_live; /* connections not shed */
        struct addr_count *by_addr[ADDR_BUCKETS];
        uint64_t addr_seed;
        atomic_uint_fast64_t shed_total;
        atomic_uint_fast64_t cut_total;
        atomic_size_t in_bufs; /* connections holding an input buffer */
};

const char *http_engine_req_field(const struct http_engine_req *req, const char *name)
{
        for (size_t i = 0; i < req->n_fields; i++)
                if (strcasecmp(req->fields[2 * i], name) == 0)
                        return req->fields[2 * i + 1];
        return NULL;
}

/* The per-address counts: a hash of client address to the connections from it that are linked
 * and not shed, so that the limit costs O(1) per accept (under e->lock). */
static bool address_key(const struct sockaddr_storage *ss, struct addr_key *k)
{
        *k = (struct addr_key){ .family = ss->ss_family };
        if (ss->ss_family == AF_INET)
                memcpy(k->bytes, &((const struct sockaddr_in *)ss)->sin_addr,
                       sizeof(struct in_addr));
        else if (ss->ss_family == AF_INET6)
                memcpy(k->bytes, &((const struct sockaddr_in6 *)ss)->sin6_addr,
                       sizeof(struct in6_addr));
        else
                return false;
        return true;
}

/* FNV-1a over the address, from a per-engine random seed (no chosen collisions). */
static size_t address_bucket(const struct http_engine *e, const struct addr_key *k)
{
        uint64_t h = 14695981039346656037ULL ^ e->addr_seed;

        h = (h ^ k->family) * 1099511628211ULL;
        for (size_t i = 0; i < sizeof(k->bytes); i++)
                h = (h ^ k->bytes[i]) * 1099511628211ULL;
        return (size_t)(h & (ADDR_BUCKETS - 1));
}

static struct addr_count *address_find_locked(const struct http_engine *e, const struct addr_key *k)
{
        for (struct addr_count *a = e->by_addr[address_bucket(e, k)]; a; a = a->next)
                if (a->key.family == k->family &&
                    memcmp(a->key.bytes, k->bytes, sizeof(k->bytes)) == 0)
                        return a;
        return NULL;
}

/* Counts c under its address (a new entry for a new address). -ENOMEM. */
/* The time of @c's deadlines: the configured clock (tests) or the monotonic one. */
static usec_t conn_now(const struct conn *c)
{
        const struct clock *clk = c->loop->e->cfg.clock;

        return clock_now(clk ? clk : &clock_monotonic);
}

static int address_acquire_locked(struct http_engine *e, struct conn *c, const struct addr_key *k)
{
        struct addr_count *a = address_find_locked(e, k);

        if (!a) {
                size_t b = address_bucket(e, k);

                a = calloc(1, sizeof(*a));
                if (!a)
                        return -ENOMEM;
                a->key = *k;
                a->next = e->by_addr[b];
                e->by_addr[b] = a;
        }
        a->n++;
        c->addr = a;
        return 0;
}

/* Stops counting c; the entry goes when its last connection does. */
static void address_release_locked(struct http_engine *e, struct conn *c)
{
        struct addr_count *a = c->addr, **pp;

        if (!a)
                return;
        c->addr = NULL;
        if (--a->n > 0)
                return;
        for (pp = &e->by_addr[address_bucket(e, &a->key)]; *pp != a; pp = &(*pp)->next)
                ;
        *pp = a->next;
        free(a);
}

/* ---- the global list: per-address limit, total limit and shedding (under e->lock) ---- */

static void list_link_locked(struct http_engine *e, struct conn *c)
{
        c->next = e->conns;
        if (e->conns)
                e->conns->prev = c;
        e->conns = c;
        if (!e->oldest)
                e->oldest = c;
        e->n_live++;
}

static void list_unlink_locked(struct http_engine *e, struct conn *c)
{
        if (c->prev)
                c->prev->next = c->next;
        else
                e->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        else
                e->oldest = c->prev;
        c->prev = c->next = NULL;
        if (!c->shed)
                e->n_live--;
        address_release_locked(e, c);
}

/* Shuts down the oldest connection with no request in progress; false when there is none. The
 * owner loop sees the hang-up and frees it; the descriptor stays open until then. */
static bool shed_one_locked(struct http_engine *e)
{
        for (struct conn *c = e->oldest; c; c = c->prev)
                if (!c->busy && !c->shed) {
                        c->shed = true;
                        e->n_live--;
                        address_release_locked(e, c);
                        (void)shutdown(c->fd, SHUT_RDWR);
                        atomic_fetch_add(&e->shed_total, 1);
                        return true;
                }
        return false;
}

/* Whether c may be served; links it when so. Returns 0 or the status to refuse it with. */
static unsigned admit(struct http_engine *e, struct conn *c, const char **msg)
{
        bool limited = e->cfg.max_per_ip > 0;
        const struct addr_count *a;
        struct addr_key k;
        unsigned status = 0;

        limited = limited &&
                  !cidr_match(e->cfg.per_ip_exempt, e->cfg.n_per_ip_exempt,
                              (const struct sockaddr *)&c->peer) &&
                  address_key(&c->peer, &k);
        if (pthread_mutex_lock(&e->lock) != 0) {
                *msg = "server busy";
                return 503;
        }
        a = limited ? address_find_locked(e, &k) : NULL;
        if (a && a->n >= e->cfg.max_per_ip) {
                /* not 503: the server is fine, this address is over its share (RFC 6585 §4) */
                *msg = "too many connections from this client address";
                status = 429;
        } else if (e->n_live >= e->cfg.max_connections && !shed_one_locked(e)) {
                *msg = "too many connections with a request in progress";
                status = 503;
        } else if (limited && address_acquire_locked(e, c, &k) < 0) {
                *msg = "out of memory";
                status = 503;
        } else
                list_link_locked(e, c);
        (void)pthread_mutex_unlock(&e->lock);
        return status;
}

static void set_busy(struct http_engine *e, struct conn *c, bool busy)
{
        if (pthread_mutex_lock(&e->lock) != 0)
                return;
        c->busy = busy;
        (void)pthread_mutex_unlock(&e->lock);
}

/* ---- connections ---- */

static void req_release(struct conn *c)
{
        free(c->arena);
        free(c->req.fields);
        buf_release(&c->req.body);
        c->arena = NULL;
        c->req = (struct http_engine_req){ 0 };
}

static void conn_free(struct loop *l, struct conn *c, bool linked)
{
        if (linked && pthread_mutex_lock(&l->e->lock) == 0) {
                list_unlink_locked(l->e, c);
                (void)pthread_mutex_unlock(&l->e->lock);
        }
        if (c->loop_prev)
                c->loop_prev->loop_next = c->loop_next;
        else if (l->conns == c)
                l->conns = c->loop_next;
        if (c->loop_next)
                c->loop_next->loop_prev = c->loop_prev;
        if (c->tp)
                l->e->cfg.transport->close(c->tp);
        if (c->fd >= 0) {
                (void)epoll_ctl(l->ep, EPOLL_CTL_DEL, c->fd, NULL);
                (void)close(c->fd);
        }
        req_release(c);
        buf_release(&c->out);
        if (c->in)
                atomic_fetch_sub(&l->e->in_bufs, 1);
        free(c->in);
        free(c);
}

/* The status line's reason phrase (RFC 9112 §4: advisory): http/errors.c's table. */
static const char *reason(unsigned status)
{
        const char *text = http_status_text(status);

        return text ? text : status < 400 ? "OK" : http_reason_phrase(status);
}

static bool is_framing_header(const char *name)
{
        return strcasecmp(name, "Content-Length") == 0 ||
               strcasecmp(name, "Transfer-Encoding") == 0 || strcasecmp(name, "Connection") == 0;
}

/* Appends resp's status line, headers and (unless HEAD or a bodyless status) body to c->out. */
static int write_resp(struct conn *c, struct http_resp *resp, bool head_only)
{
        unsigned status = resp->status ? resp->status : 500;
        bool body = !head_only && status != 204 && status != 304;
        int r;

        for (size_t i = 0; i < resp->n_headers; i++)
                if (strcasecmp(resp->headers[i].name, "Connection") == 0 &&
                    strcasecmp(resp->headers[i].value, "close") == 0)
                        c->closing = true;
        r = buf_printf(&c->out, "HTTP/1.1 %u %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n",
                       status, reason(status),
                       resp->content_type ? resp->content_type : "application/json",
                       resp->body.len);
        for (size_t i = 0; r >= 0 && i < resp->n_headers; i++)
                if (!is_framing_header(resp->headers[i].name))
                        r = buf_printf(&c->out, "%s: %s\r\n", resp->headers[i].name,
                                       resp->headers[i].value);
        if (r >= 0 && c->closing)
                r = buf_puts(&c->out, "Connection: close\r\n");
        else if (r >= 0 && c->req.version_minor == 0)
                r = buf_puts(&c->out, "Connection: keep-alive\r\n");
        if (r >= 0)
                r = buf_puts(&c->out, "\r\n");
        if (r >= 0 && body && resp->body.len > 0)
                r = buf_append(&c->out, resp->body.p, resp->body.len);
        return r;
}

static void refuse(struct conn *c, unsigned status, const char *msg)
{
        struct http_engine *e = c->loop->e;
        struct http_resp resp = { .status = status, .body = BUF_INIT(HTTP_RESPONSE_MAX) };

        e->cfg.refuse(e->cfg.userdata, status, msg, &resp);
        c->closing = true;
        if (write_resp(c, &resp, false) < 0)
                c->eof = true; /* nothing can be sent: just close */
        http_resp_release(&resp);
}

/* Copies the head's method, target and fields out of buf into c->req (NUL-terminated). */
static int req_build(struct conn *c, const char *buf)
{
        const struct http1_head *h = &c->st.head;
        size_t cursor = 0, nl, vl, i = 0;
        const char *n, *v;
        char *p;

        c->arena = malloc(h->head_len + 2 * h->n_fields + 2);
        c->req.fields = calloc(2 * h->n_fields + 1, sizeof(*c->req.fields));
        if (!c->arena || !c->req.fields)
                return -ENOMEM;
        p = c->arena;
        c->req.method = memcpy(p, buf + h->method_off, h->method_len);
        p += h->method_len;
        *p++ = '\0';
        c->req.target = memcpy(p, buf + h->target_off, h->target_len);
        p += h->target_len;
        *p++ = '\0';
        while (i < h->n_fields && http1_head_next_field(h, buf, &cursor, &n, &nl, &v, &vl)) {
                c->req.fields[2 * i] = memcpy(p, n, nl);
                p[nl] = '\0';
                p += nl + 1;
                c->req.fields[2 * i + 1] = memcpy(p, v, vl);
                p[vl] = '\0';
                p += vl + 1;
                i++;
        }
        c->req.n_fields = i;
        c->req.version_minor = h->version_minor;
        c->req.peer = (const struct sockaddr *)&c->peer;
        c->req.peer_len = c->peer_len;
        return 0;
}

static void on_head(struct conn *c, const char *buf)
{
        struct http_engine *e = c->loop->e;
        const struct http1_head *h = &c->st.head;

        set_busy(e, c, true);
        c->since = conn_now(c);
        c->too_large = false;
        c->received = 0;
        req_release(c);
        buf_init(&c->req.body, e->cfg.body_max + 1);
        if (req_build(c, buf) < 0) {
                refuse(c, 500, "out of memory");
                return;
        }
        if (h->has_content_length && h->content_length > e->cfg.body_max) {
                refuse(c, 413, "request body too large");
                return;
        }
        if (h->expect_continue && (h->chunked || h->content_length > 0) &&
            buf_puts(&c->out, "HTTP/1.1 100 Continue\r\n\r\n") < 0)
                refuse(c, 500, "out of memory");
}

static void on_data(struct conn *c, const char *data, size_t len)
{
        c->received += len;
        if (!c->too_large && buf_append(&c->req.body, data, len) < 0) {
                c->too_large = true;
                buf_release(&c->req.body);
        }
        if (c->too_large && c->received > HTTP_DRAIN_MAX)
                refuse(c, 413, "request body too large");
}

static void on_end(struct conn *c)
{
        struct http_engine *e = c->loop->e;
        struct http_resp resp = { .status = 200, .body = BUF_INIT(HTTP_RESPONSE_MAX) };

        if (c->too_large) {
                refuse(c, 413, "request body too large");
                return;
        }
        c->closing = c->closing || c->st.close_after;
        e->cfg.serve(e->cfg.userdata, &c->req, &resp);
        if (write_resp(c, &resp, strcmp(c->req.method, "HEAD") == 0) < 0) {
                http_resp_release(&resp);
                buf_reset(&c->out);
                refuse(c, 500, "out of memory");
                return;
        }
        http_resp_release(&resp);
        c->answered = true;
        c->since = conn_now(c);
}

static void consume(struct conn *c, size_t n)
{
        memmove(c->in, c->in + n, c->in_len - n);
        c->in_len -= n;
}

/* Advances the request stream over the bytes read, one event at a time, until it needs more
 * (returns false), an answer waits to be written, or the connection is to be closed (true). */
static bool process(struct conn *c)
{
        if (!c->in)
                return false; /* nothing read yet */
        while (!c->closing && c->out.len == c->out_off) {
                struct http1_step step;
                enum http1_event ev = http1_stream_feed(&c->st, c->in, c->in_len, &step);

                switch (ev) {
                case HTTP1_EV_HEAD:
                        on_head(c, c->in);
                        break;
                case HTTP1_EV_DATA:
                        on_data(c, c->in + step.data_off, step.data_len);
                        break;
                case HTTP1_EV_END:
                        on_end(c);
                        break;
                case HTTP1_EV_REFUSE:
                        refuse(c, c->st.status, c->st.message ? c->st.message : "bad request");
                        break;
                default:
                        break;
                }
                consume(c, step.consumed);
                if (ev == HTTP1_EV_NEED_MORE && step.consumed == 0)
                        return false;
        }
        return true;
}

/* ---- the transport seam: plain TCP, or the configured transport (TLS) ---- */

static ssize_t io_recv(struct conn *c, void *p, size_t len)
{
        ssize_t n;

        n = c->tp ? c->loop->e->cfg.transport->recv(c->tp, p, len)
                  : recv(c->fd, p, len, MSG_DONTWAIT);
        if (n > 0)
                c->last_io = conn_now(c);
        return n < 0 && !c->tp ? -errno : n;
}

static ssize_t io_send(struct conn *c, const void *p, size_t len)
{
        ssize_t n;

        n = c->tp ? c->loop->e->cfg.transport->send(c->tp, p, len)
                  : send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
                c->last_io = conn_now(c);
        return n < 0 && !c->tp ? -errno : n;
}

/* Decrypted bytes waiting in the transport while the socket has none (no epoll event comes). */
static bool io_pending(struct conn *c)
{
        return c->tp && !c->want_out && !c->draining && !c->eof && c->in_len < IN_MAX &&
               c->loop->e->cfg.transport->pending(c->tp) > 0;
}

static void want_out(struct conn *c, bool on);

/* One handshake step: 1 when done, 0 when waiting, -1 when it failed (c is freed). */
static int handshake_step(struct loop *l, struct conn *c)
{
        const struct http_engine_transport *tr = l->e->cfg.transport;
        int r = tr->handshake(c->tp);

        if (r == -EAGAIN) {
                want_out(c, tr->wants_write(c->tp));
                return 0;
        }
        if (r < 0) {
                conn_free(l, c, true);
                return -1;
        }
        c->handshaking = false;
        c->since = conn_now(c); /* the head deadline starts now */
        want_out(c, false);
        return 1;
}

static void want_out(struct conn *c, bool on)
{
        struct epoll_event ev = { .events = on ? EPOLLOUT : EPOLLIN | EPOLLRDHUP, .data.ptr = c };

        if (c->want_out == on)
                return;
        c->want_out = on;
        (void)epoll_ctl(c->loop->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Writes what is pending. Returns -1 when the connection is to be freed now. */
static int flush(struct conn *c)
{
        while (c->out_off < c->out.len) {
                ssize_t n = io_send(c, c->out.p + c->out_off, c->out.len - c->out_off);

                if (n == -EAGAIN || n == -EINTR) {
                        want_out(c, true);
                        return 0;
                }
                if (n <= 0)
                        return -1;
                c->out_off += (size_t)n;
        }
        buf_reset(&c->out);
        c->out_off = 0;
        want_out(c, false);
        if (c->closing && !c->draining) {
                if (c->tp)
                        c->loop->e->cfg.transport->bye(c->tp);
                (void)shutdown(c->fd, SHUT_WR);
                c->draining = true;
                c->drain_until = now_monotonic() + DRAIN_USEC;
        } else if (!c->closing && c->answered) {
                c->answered = false;
                set_busy(c->loop->e, c, false);
        }
        return c->eof && !c->closing ? -1 : 0;
}

/*
 * The first read: the input buffer comes with the first bytes, so a connection that never sends
 * (an idle socket, a TLS session idle after its handshake) costs none. Returns 1 when c has its
 * buffer (and those bytes), 0 when nothing has arrived yet, -1 when the connection is to be freed.
 */
static int conn_first_read(struct conn *c)
{
        char first[READ_CHUNK];
        ssize_t n = io_recv(c, first, sizeof(first));

        if (n == -EAGAIN || n == -EINTR)
                return 0;
        if (n <= 0) {
                c->eof = true;
                return -1;
        }
        c->in = malloc(IN_MAX);
        if (!c->in)
                return -1;
        atomic_fetch_add(&c->loop->e->in_bufs, 1);
        memcpy(c->in, first, (size_t)n);
        c->in_len = (size_t)n;
        return 1;
}

/* Reads what arrived. Returns -1 when the connection is to be freed now. */
static int conn_read(struct conn *c)
{
        if (!c->in && !c->draining) {
                int r = conn_first_read(c);

                if (r <= 0)
                        return r;
        }
        for (;;) {
                char drop[512];
                bool drain = c->draining;
                ssize_t n;

                if (!drain && c->in_len == IN_MAX)
                        return 0; /* an answer is pending; the rest waits in the kernel */
                /* the drain drops raw bytes: TLS records need no decrypting to be dropped */
                n = drain ? recv(c->fd, drop, sizeof(drop), MSG_DONTWAIT)
                          : io_recv(c, c->in + c->in_len, IN_MAX - c->in_len);
                if (drain && n < 0)
                        n = -errno;

                if (n == -EINTR)
                        continue;
                if (n == -EAGAIN)
                        return 0;
                if (n <= 0) {
                        c->eof = true;
                        return c->draining || c->in_len == 0 ? -1 : 0;
                }
                if (!drain)
                        c->in_len += (size_t)n;
        }
}

/* Reads, answers and writes what it can. Returns -1 when c was freed. */
static int conn_round(struct loop *l, struct conn *c, uint32_t events)
{
        if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) && !c->want_out &&
            conn_read(c) < 0) {
                conn_free(l, c, true);
                return -1;
        }
        /* each round answers one request; the next pipelined one follows once it is written */
        for (;;) {
                bool more = !c->draining && process(c);

                if (flush(c) < 0) {
                        conn_free(l, c, true);
                        return -1;
                }
                if (!more || c->closing || c->want_out)
                        break;
        }
        if (c->eof && c->out.len == 0 && !c->draining) {
                conn_free(l, c, true);
                return -1;
        }
        return 0;
}

static void conn_event(struct loop *l, struct conn *c, uint32_t events)
{
        bool shed;

        if (pthread_mutex_lock(&l->e->lock) == 0) {
                shed = c->shed;
                (void)pthread_mutex_unlock(&l->e->lock);
                if (shed) {
                        conn_free(l, c, true);
                        return;
                }
        }
        if (c->handshaking && handshake_step(l, c) <= 0)
                return;
        do {
                if (conn_round(l, c, events) < 0)
                        return;
                events = EPOLLIN;
        } while (io_pending(c));
}

/* ---- accept, deadlines, loops ---- */

/* Best effort: a refusal at accept is one small write on a fresh socket, then close. A 429
 * says when to come back. */
static void refuse_at_accept(struct http_engine *e, int fd, unsigned status, const char *msg)
{
        struct http_resp resp = { .status = status, .body = BUF_INIT(HTTP_RESPONSE_MAX) };
        struct conn tmp = { .fd = fd,
                            .out = BUF_INIT(OUT_HEAD_MAX + HTTP_RESPONSE_MAX),
                            .req = { .version_minor = 1 } };
        int r = 0;

        e->cfg.refuse(e->cfg.userdata, status, msg, &resp);
        if (status == 429)
                r = http_resp_add_header(&resp, "Retry-After", HTTP_PER_IP_RETRY_AFTER);
        tmp.closing = true;
        if (r >= 0 && write_resp(&tmp, &resp, false) >= 0)
                (void)send(fd, tmp.out.p, tmp.out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
        http_resp_release(&resp);
        buf_release(&tmp.out);
        (void)close(fd);
}

static struct conn *conn_new(struct loop *l, int fd)
{
        struct conn *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        c->fd = fd;
        c->loop = l;
        buf_init(&c->out, OUT_HEAD_MAX + HTTP_RESPONSE_MAX);
        http1_stream_init(&c->st, NULL);
        c->since = c->last_io = conn_now(c);
        return c;
}

static void accept_one(struct loop *l, int fd, const struct sockaddr_storage *peer,
                       socklen_t peer_len)
{
        struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
        const char *msg = NULL;
        struct conn *c = conn_new(l, fd);
        unsigned status;

        if (!c) {
                (void)close(fd);
                return;
        }
        c->peer = *peer;
        c->peer_len = peer_len;
        status = admit(l->e, c, &msg);
        if (status) {
                c->fd = -1;
                conn_free(l, c, false);
                if (l->e->cfg.transport)
                        (void)close(fd); /* no answer without a handshake */
                else
                        refuse_at_accept(l->e, fd, status, msg);
                return;
        }
        if (l->e->cfg.transport) {
                c->tp = l->e->cfg.transport->open(l->e->cfg.transport_userdata, fd);
                c->handshaking = true;
                if (!c->tp) {
                        conn_free(l, c, true);
                        return;
                }
        }
        c->loop_next = l->conns;
        if (l->conns)
                l->conns->loop_prev = c;
        l->conns = c;
        ev.data.ptr = c;
        if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
                conn_free(l, c, true);
}

static void accept_burst(struct loop *l)
{
        for (int i = 0; i < ACCEPT_BURST; i++) {
                struct sockaddr_storage peer = { 0 };
                socklen_t len = sizeof(peer);
                int fd = accept4(l->e->lfd, (struct sockaddr *)&peer, &len,
                                 SOCK_NONBLOCK | SOCK_CLOEXEC);

                if (fd < 0)
                        return;
                accept_one(l, fd, &peer, len);
        }
}

/* Frees the connections of l whose deadline passed. */
static void tick(struct loop *l)
{
        const struct http_engine_config *cfg = &l->e->cfg;
        usec_t now = clock_now(cfg->clock ? cfg->clock : &clock_monotonic);
        usec_t mono = now_monotonic(); /* a lingering close is real time, never a test's */
        struct conn *next;

        for (struct conn *c = l->conns; c; c = next) {
                usec_t limit = c->handshaking ? cfg->handshake_timeout
                               : c->busy      ? cfg->request_timeout
                                              : cfg->header_timeout;

                next = c->loop_next;
                if (c->draining ? mono >= c->drain_until
                                : (limit > 0 && now - c->since >= limit * USEC_PER_SEC) ||
                                          (cfg->idle_timeout > 0 && !c->handshaking &&
                                           now - c->last_io >= cfg->idle_timeout * USEC_PER_SEC)) {
                        if (!c->draining)
                                atomic_fetch_add(&l->e->cut_total, 1);
                        conn_free(l, c, true);
                }
        }
}

static void *loop_thread(void *p)
{
        struct loop *l = p;
        usec_t last_tick = now_monotonic();

        for (;;) {
                struct epoll_event evs[EVENTS_MAX];
                int n = epoll_wait(l->ep, evs, EVENTS_MAX, TICK_MS);

                for (int i = 0; i < n; i++) {
                        if (evs[i].data.ptr == EV_STOP)
                                return NULL;
                        if (evs[i].data.ptr == EV_LISTEN)
                                accept_burst(l);
                        else
                                conn_event(l, evs[i].data.ptr, evs[i].events);
                }
                if (now_monotonic() - last_tick >= TICK_MS * USEC_PER_MSEC) {
                        tick(l);
                        last_tick = now_monotonic();
                }
        }
}

static int listen_socket(const struct http_engine_config *cfg, int *ret_fd, uint16_t *ret_port)
{
        struct sockaddr_storage ss = { 0 };
        socklen_t len = sizeof(ss);
        int one = 1, fd;
        bool v6 = cfg->address && strchr(cfg->address, ':');
        void *addr = v6 ? (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
                        : (void *)&((struct sockaddr_in *)&ss)->sin_addr;

        ss.ss_family = v6 ? AF_INET6 : AF_INET;
        if (inet_pton(ss.ss_family, cfg->address ? cfg->address : "0.0.0.0", addr) != 1)
                return -EINVAL;
        if (v6)
                ((struct sockaddr_in6 *)&ss)->sin6_port = htons(cfg->port);
        else
                ((struct sockaddr_in *)&ss)->sin_port = htons(cfg->port);
        fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *)&ss,
                 v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)) < 0 ||
            listen(fd, LISTEN_BACKLOG) < 0 || getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
                int r = -errno;

                (void)close(fd);
                return r;
        }
        *ret_port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                             : ((struct sockaddr_in *)&ss)->sin_port);
        *ret_fd = fd;
        return 0;
}

static int loop_start(struct http_engine *e, struct loop *l)
{
        struct epoll_event lev = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = EV_LISTEN };
        struct epoll_event sev = { .events = EPOLLIN, .data.ptr = EV_STOP };
        int r;

        l->e = e;
        l->ep = epoll_create1(EPOLL_CLOEXEC);
        if (l->ep < 0)
                return -errno;
        if (epoll_ctl(l->ep, EPOLL_CTL_ADD, e->lfd, &lev) < 0 ||
            epoll_ctl(l->ep, EPOLL_CTL_ADD, e->stop_fd, &sev) < 0)
                return -errno;
        r = -pthread_create(&l->thread, NULL, loop_thread, l);
        if (r < 0)
                return r;
        l->running = true;
        return 0;
}

int http_engine_start(const struct http_engine_config *cfg, struct http_engine **ret)
{
        CLEANUP(http_engine_freep) struct http_engine *e = NULL;
        unsigned n;
        int r;

        if (!cfg || !cfg->serve || !cfg->refuse || cfg->max_connections == 0 || cfg->body_max == 0)
                return -EINVAL;
        if (cfg->transport &&
            (!cfg->transport->open || !cfg->transport->handshake || !cfg->transport->recv ||
             !cfg->transport->send || !cfg->transport->wants_write || !cfg->transport->pending ||
             !cfg->transport->bye || !cfg->transport->close))
                return -EINVAL;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->cfg = *cfg;
        e->cfg.address = NULL;
        e->lfd = e->stop_fd = -1;
        if (getrandom(&e->addr_seed, sizeof(e->addr_seed), GRND_NONBLOCK) != sizeof(e->addr_seed))
                e->addr_seed = (uint64_t)now_monotonic(); /* only spreads the buckets */
        if (pthread_mutex_init(&e->lock, NULL) != 0) {
                free(e);
                e = NULL;
                return -ENOMEM;
        }
        e->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (e->stop_fd < 0)
                return -errno;
        r = listen_socket(cfg, &e->lfd, &e->port);
        if (r < 0)
                return r;
        n = cfg->threads == 0 ? 1 : cfg->threads > LOOPS_MAX ? LOOPS_MAX : cfg->threads;
        while (e->n_loops < n) {
                e->loops[e->n_loops].ep = -1;
                r = loop_start(e, &e->loops[e->n_loops++]);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(e);
        return 0;
}

struct http_engine *http_engine_free(struct http_engine *e)
{
        uint64_t one = 1;

        if (!e)
                return NULL;
        if (e->stop_fd >= 0 && write(e->stop_fd, &one, sizeof(one)) < 0)
                (void)0; /* an eventfd write of 1 cannot fail short of overflow */
        for (unsigned i = 0; i < e->n_loops; i++) {
                struct loop *l = &e->loops[i];

                if (l->running)
                        (void)pthread_join(l->thread, NULL);
                while (l->conns)
                        conn_free(l, l->conns, true);
                if (l->ep >= 0)
                        (void)close(l->ep);
        }
        if (e->lfd >= 0)
                (void)close(e->lfd);
        if (e->stop_fd >= 0)
                (void)close(e->stop_fd);
        (void)pthread_mutex_destroy(&e->lock);
        free(e);
        return NULL;
}

uint16_t http_engine_port(const struct http_engine *e)
{
        return e->port;
}

uint64_t http_engine_shed_count(const struct http_engine *e)
{
        return atomic_load(&e->shed_total);
}

size_t http_engine_input_buffers(const struct http_engine *e)
{
        return atomic_load(&e->in_bufs);
}

uint64_t http_engine_deadline_cuts(const struct http_engine *e)
{
        return atomic_load(&e->cut_total);
}
