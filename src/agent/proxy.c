/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/http-msg.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/time-util.h"
#include "util/uuid.h"

#define HEAD_MAX             ((size_t)64 * 1024)
#define FDS_MAX              4096
#define TAP_BODY_MAX_DEFAULT ((size_t)16 << 20)
#define BATCH_BODY_MAX       ((size_t)64 << 20)

struct proxy {
        struct proxy_config c;
        char *upstream_host;
        int lfd;
        uint16_t port;
        pthread_t accept_thread;
        pthread_mutex_t lock;
        pthread_cond_t idle;
        int fds[FDS_MAX]; /* open client/upstream fds, for shutdown at stop */
        unsigned n_conns;
        bool stopping;
};

struct conn {
        struct proxy *p;
        struct http_msg_rd client;
        struct http_msg_rd up;
        char peer[INET6_ADDRSTRLEN];
};

static void track(struct proxy *p, int fd, bool add)
{
        pthread_mutex_lock(&p->lock);
        for (size_t i = 0; i < FDS_MAX; i++)
                if (add ? p->fds[i] < 0 : p->fds[i] == fd) {
                        p->fds[i] = add ? fd : -1;
                        break;
                }
        if (add && p->stopping)
                shutdown(fd, SHUT_RDWR);
        pthread_mutex_unlock(&p->lock);
}

static bool hop_by_hop(const struct http_msg_head *hd, const char *name)
{
        static const char *const hop[] = { "Connection",
                                           "Keep-Alive",
                                           "Proxy-Connection",
                                           "Proxy-Authenticate",
                                           "Proxy-Authorization",
                                           "TE",
                                           "Trailer",
                                           "Upgrade",
                                           "Transfer-Encoding",
                                           "Content-Length",
                                           "Expect" };

        for (size_t i = 0; i < ELEMENTSOF(hop); i++)
                if (strcasecmp(hop[i], name) == 0)
                        return true;
        for (size_t i = 0; i < hd->n; i++)
                if (strcasecmp(hd->h[i].name, "Connection") == 0 &&
                    http_msg_token_in_list(hd->h[i].value, name))
                        return true;
        return false;
}

static void reply(int fd, unsigned code, const char *reason, const char *body, bool close_conn)
{
        char head[512];
        int n = snprintf(head, sizeof(head),
                         "HTTP/1.1 %u %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                         "Content-Length: %zu\r\n%s\r\n",
                         code, reason, strlen(body), close_conn ? "Connection: close\r\n" : "");
        if (http_msg_write_all(fd, head, (size_t)n) == 0)
                (void)!http_msg_write_all(fd, body, strlen(body));
}

static int upstream_connect(struct conn *c)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
        char port[8];
        int fd = -1, one = 1;
        struct timeval tv = { .tv_sec = c->p->c.upstream_timeout_sec };

        snprintf(port, sizeof(port), "%u", c->p->c.upstream_port);
        if (getaddrinfo(c->p->upstream_host, port, &hints, &res) != 0)
                return -EHOSTUNREACH;
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
                fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        continue;
                if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
                        break;
                close(fd);
                fd = -1;
        }
        freeaddrinfo(res);
        if (fd < 0)
                return -ECONNREFUSED;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        track(c->p, fd, true);
        c->up = (struct http_msg_rd){ .fd = fd, .tee = c->up.tee };
        return 0;
}

static void upstream_close(struct conn *c)
{
        if (c->up.fd >= 0) {
                track(c->p, c->up.fd, false);
                close(c->up.fd);
        }
        c->up.fd = -1;
}

/* A kept-alive upstream connection that the server closed meanwhile is readable (EOF). */
static bool upstream_stale(struct conn *c)
{
        struct pollfd pfd = { .fd = c->up.fd, .events = POLLIN };
        return poll(&pfd, 1, 0) != 0;
}

static int forward_head(int fd, const struct http_msg_head *hd, const char *first,
                        const char *extra)
{
        struct buf b = BUF_INIT(HEAD_MAX * 2);
        int r = buf_puts(&b, first);

        for (size_t i = 0; i < hd->n && r >= 0; i++)
                if (!hop_by_hop(hd, hd->h[i].name))
                        r = buf_printf(&b, "%s: %s\r\n", hd->h[i].name, hd->h[i].value);
        if (r >= 0 && extra)
                r = buf_puts(&b, extra);
        if (r >= 0)
                r = buf_puts(&b, "\r\n");
        if (r >= 0)
                r = http_msg_write_all(fd, b.p, b.len);
        buf_release(&b);
        return r;
}

/* One exchange in flight: both heads (their strings point into reqb/respb) and what they decide. */
struct exch {
        struct conn *c;
        struct buf reqb, respb;
        struct buf reqbody, respbody; /* tapped bodies */
        const char *pre;              /* a request body already read (batcher pass-through) */
        size_t pre_len;
        bool tapping;
        char id[128];
        uint64_t t_req;
        struct http_msg_head rq, rs;
        enum http_msg_framing rqf, rsf;
        uint64_t rql, rsl;
        bool keep, http10, head_req, up_keep;
        unsigned code;
};

static void exch_release(struct exch *x)
{
        buf_release(&x->reqb);
        buf_release(&x->respb);
        buf_release(&x->reqbody);
        buf_release(&x->respbody);
        x->c->client.tee = NULL;
        x->c->up.tee = NULL;
}

/* The id KServe's logger gives an exchange: the request's Ce-Id, else (modelplane) its
 * X-Request-Id, else a random UUID. */
static void tap_id(struct exch *x)
{
        const char *id = http_msg_head_get(&x->rq, "Ce-Id");

        if (!id || !*id)
                id = http_msg_head_get(&x->rq, "X-Request-Id");
        if (id && *id && strlen(id) < sizeof(x->id)) {
                (void)snprintf(x->id, sizeof(x->id), "%s", id);
                return;
        }
        if (uuid_random(x->id) < 0)
                (void)snprintf(x->id, sizeof(x->id), "%llx-%p", (unsigned long long)now_realtime(),
                               (void *)x);
}

/* Hands a request or response to the tap, unless its body did not fit. */
static void tap_call(struct exch *x, bool response, const char *body, size_t len, bool over)
{
        const struct proxy_config *cfg = &x->c->p->c;
        struct proxy_tap_msg m = {
                .response = response,
                .id = x->id,
                .req = &x->rq,
                .content_type = http_msg_head_get(response ? &x->rs : &x->rq, "Content-Type"),
                .body = body,
                .body_len = len,
                .code = response ? x->code : 0,
                .time_usec = response ? now_realtime() : x->t_req,
        };

        if (!x->tapping)
                return;
        if (response && !m.content_type)
                m.content_type = http_msg_head_get(&x->rq, "Content-Type");
        if (over) {
                if (cfg->tap_skipped)
                        cfg->tap_skipped(cfg->tap_userdata);
                return;
        }
        cfg->tap(cfg->tap_userdata, &m);
}

/* How a step of an exchange ended. */
enum step {
        STEP_OK,            /* go on */
        STEP_CLOSE,         /* close the client connection; whatever was owed is sent */
        STEP_UPSTREAM_FAIL, /* drop the upstream and answer 502 */
};

static bool is_probe(const struct http_msg_head *rq)
{
        const char *ua = http_msg_head_get(rq, "User-Agent");

        return http_msg_head_get(rq, "K-Network-Probe") ||
               (ua && strncmp(ua, "kube-probe/", 11) == 0);
}

/* Knative's and the kubelet's probes, answered from the readiness callback. */
static int serve_probe(struct exch *x)
{
        struct conn *c = x->c;
        const char *probe = http_msg_head_get(&x->rq, "K-Network-Probe");
        enum http_msg_framing f;
        uint64_t len = 0;

        if (probe && !streq(probe, "queue"))
                reply(c->client.fd, 400, "Bad Request", "unexpected probe header value\n",
                      !x->keep);
        else if (c->p->c.ready(c->p->c.ready_userdata))
                reply(c->client.fd, 200, "OK", "queue", !x->keep);
        else
                reply(c->client.fd, 503, "Service Unavailable", "model server not ready\n",
                      !x->keep);
        if (http_msg_framing_of(&x->rq, &f, &len) < 0 || f != HTTP_MSG_FRAME_NONE)
                return 0; /* a probe has no body; do not try to skip one */
        return x->keep;
}

static bool is_get_of(const struct exch *x, const char *path)
{
        return path && streq(x->rq.start[0], "GET") && streq(x->rq.start[1], path);
}

static const char *reason_of(unsigned code)
{
        switch (code) {
        case 200:
                return "OK";
        case 400:
                return "Bad Request";
        case 404:
                return "Not Found";
        case 500:
                return "Internal Server Error";
        case 502:
                return "Bad Gateway";
        case 503:
                return "Service Unavailable";
        default:
                return "Status";
        }
}

/* A complete answer of the proxy's own: @code, @ctype, @body. Returns 1 to keep the client. */
static int send_answer(struct exch *x, unsigned code, const char *ctype, const char *body)
{
        char h[256];
        int n;

        n = snprintf(h, sizeof(h),
                     "HTTP/1.1 %u %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n", code,
                     reason_of(code), ctype, strlen(body), x->keep ? "" : "Connection: close\r\n");
        if (http_msg_write_all(x->c->client.fd, h, (size_t)n) < 0 ||
            http_msg_write_all(x->c->client.fd, body, strlen(body)) < 0)
                return 0;
        return x->keep;
}

static bool is_batchable(const struct exch *x)
{
        return x->c->p->c.batch && streq(x->rq.start[0], "POST");
}

/* A POST for the batcher: its body read whole, then answered by the batch or passed on. Returns
 * -1 to proxy it (x->pre set), else 1 to keep the client connection, 0 to close it. */
static int serve_batched(struct exch *x)
{
        struct conn *c = x->c;
        const struct proxy_config *cfg = &c->p->c;
        AUTOFREE char *answer = NULL;
        unsigned code = 0;
        int r;

        r = http_msg_framing_of(&x->rq, &x->rqf, &x->rql);
        if (r < 0) {
                reply(c->client.fd, r == -ENOTSUP ? 501 : 400,
                      r == -ENOTSUP ? "Not Implemented" : "Bad Request", "bad message framing\n",
                      true);
                return 0;
        }
        if (x->rqf == HTTP_MSG_FRAME_LENGTH && x->rql > BATCH_BODY_MAX) {
                reply(c->client.fd, 413, "Content Too Large", "request body too large\n", true);
                return 0;
        }
        buf_release(&x->reqbody);
        x->reqbody = BUF_INIT(BATCH_BODY_MAX);
        c->client.tee = &x->reqbody;
        c->client.tee_over = false;
        if (http_msg_token_in_list(http_msg_head_get(&x->rq, "Expect"), "100-continue") &&
            x->rqf != HTTP_MSG_FRAME_NONE && !x->http10 &&
            http_msg_write_all(c->client.fd, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0)
                return 0;
        if (http_msg_copy_body(&c->client, -1, x->rqf, x->rql) < 0)
                return 0;
        c->client.tee = NULL;
        if (c->client.tee_over) {
                reply(c->client.fd, 413, "Content Too Large", "request body too large\n", true);
                return 0;
        }
        if (buf_puts(&x->reqbody, "") < 0) /* NUL-terminated, also when empty */
                return 0;
        r = cfg->batch(cfg->batch_userdata, x->rq.start[1], x->reqbody.p, x->reqbody.len, &code,
                       &answer);
        if (r == -EMEDIUMTYPE) {
                x->pre = x->reqbody.p;
                x->pre_len = x->reqbody.len;
                x->rqf = HTTP_MSG_FRAME_LENGTH;
                x->rql = x->reqbody.len;
                return -1;
        }
        if (r < 0) {
                reply(c->client.fd, 500, "Internal Server Error", "batcher failed\n", true);
                return 0;
        }
        tap_call(x, false, x->reqbody.p, x->reqbody.len, false);
        r = send_answer(x, code, "application/json", answer);
        if (code == 200 && x->tapping) {
                x->code = 200;
                x->rs = (struct http_msg_head){ 0 };
                tap_call(x, true, answer, strlen(answer), false);
        }
        return r;
}

static bool is_status_request(const struct exch *x)
{
        return is_get_of(x, x->c->p->c.status_path) || is_get_of(x, x->c->p->c.metrics_path);
}

/* The agent's own status document, or its metrics. */
static int serve_status(struct exch *x)
{
        struct conn *c = x->c;
        bool metrics = is_get_of(x, c->p->c.metrics_path);
        AUTOFREE char *json = metrics ? c->p->c.metrics(c->p->c.ready_userdata)
                                      : c->p->c.status(c->p->c.ready_userdata);
        enum http_msg_framing f;
        uint64_t len = 0;
        char h[256];
        int n, r;

        r = http_msg_framing_of(&x->rq, &f, &len);
        if (!json || r < 0 || f != HTTP_MSG_FRAME_NONE) {
                reply(c->client.fd, 500, "Internal Server Error", "no status\n", true);
                return 0;
        }
        n = snprintf(h, sizeof(h),
                     "HTTP/1.1 200 OK\r\nContent-Type: %s\r\n"
                     "Content-Length: %zu\r\n%s\r\n",
                     metrics ? "text/plain; version=0.0.4" : "application/json", strlen(json),
                     x->keep ? "" : "Connection: close\r\n");
        if (http_msg_write_all(c->client.fd, h, (size_t)n) < 0 ||
            http_msg_write_all(c->client.fd, json, strlen(json)) < 0)
                return 0;
        return x->keep;
}

/* The request head as the model server gets it: HTTP/1.1, X-Forwarded-For, our framing. */
static enum step forward_request_head(struct exch *x)
{
        AUTOFREE char *first = NULL, *extra = NULL;
        const char *xff = http_msg_head_get(&x->rq, "X-Forwarded-For");
        char cl[64] = "";

        if (x->rqf == HTTP_MSG_FRAME_LENGTH)
                (void)snprintf(cl, sizeof(cl), "Content-Length: %llu\r\n",
                               (unsigned long long)x->rql);
        if (asprintf(&first, "%s %s HTTP/1.1\r\n", x->rq.start[0], x->rq.start[1]) < 0) {
                first = NULL;
                return STEP_CLOSE;
        }
        if (asprintf(&extra, "X-Forwarded-For: %s%s%s\r\n%s%s", xff ? xff : "", xff ? ", " : "",
                     x->c->peer,
                     x->rqf == HTTP_MSG_FRAME_CHUNKED ? "Transfer-Encoding: chunked\r\n" : "",
                     cl) < 0) {
                extra = NULL;
                return STEP_CLOSE;
        }
        if (forward_head(x->c->up.fd, &x->rq, first, extra) < 0)
                return STEP_UPSTREAM_FAIL;
        return STEP_OK;
}

/* Checks the request framing, (re)connects upstream and passes the request on. */
static enum step forward_request(struct exch *x)
{
        struct conn *c = x->c;
        enum step st;
        int r;

        r = x->pre ? 0 : http_msg_framing_of(&x->rq, &x->rqf, &x->rql);
        if (r == -ENOTSUP) {
                reply(c->client.fd, 501, "Not Implemented", "unsupported transfer coding\n", true);
                return STEP_CLOSE;
        }
        if (r < 0) {
                reply(c->client.fd, 400, "Bad Request", "bad message framing\n", true);
                return STEP_CLOSE;
        }
        if (c->up.fd >= 0 && upstream_stale(c))
                upstream_close(c);
        if (c->up.fd < 0 && upstream_connect(c) < 0) {
                reply(c->client.fd, 502, "Bad Gateway", "model server unreachable\n", true);
                return STEP_CLOSE;
        }
        /* the header values point into reqb: forward before anything else */
        st = forward_request_head(x);
        if (st != STEP_OK)
                return st;
        if (http_msg_token_in_list(http_msg_head_get(&x->rq, "Expect"), "100-continue") &&
            x->rqf != HTTP_MSG_FRAME_NONE && !x->http10 && !x->pre &&
            http_msg_write_all(c->client.fd, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0)
                return STEP_CLOSE;
        if (x->pre ? http_msg_write_all(c->up.fd, x->pre, x->pre_len) < 0
                   : http_msg_copy_body(&c->client, c->up.fd, x->rqf, x->rql) < 0) {
                upstream_close(c); /* a half-sent request must not be reused */
                return STEP_CLOSE;
        }
        if (x->pre)
                tap_call(x, false, x->pre, x->pre_len, false);
        else
                tap_call(x, false, x->reqbody.p ? x->reqbody.p : "", x->reqbody.len,
                         c->client.tee_over);
        return STEP_OK;
}

/* An HTTP/1.x status line with a three-digit code 1xx-5xx. */
static bool status_line_valid(const struct http_msg_head *rs)
{
        const char *code = rs->start[1];

        return strncmp(rs->start[0], "HTTP/1.", 7) == 0 && strlen(code) == 3 &&
               strspn(code, "0123456789") == 3 && code[0] >= '1' && code[0] <= '5';
}

/* Reads the final response head, passing interim 1xx answers on (except a 100 the client did
 * not ask for, which we already sent). */
static enum step read_response_head(struct exch *x)
{
        struct conn *c = x->c;
        const char *code;

        for (;;) {
                buf_reset(&x->respb);
                if (http_msg_read_head(&c->up, &x->respb) < 0)
                        return STEP_UPSTREAM_FAIL;
                if (http_msg_parse_head(x->respb.p, &x->rs) < 0 || !status_line_valid(&x->rs))
                        return STEP_UPSTREAM_FAIL;
                code = x->rs.start[1];
                x->code = (unsigned)((code[0] - '0') * 100 + (code[1] - '0') * 10 +
                                     (code[2] - '0'));
                if (x->code >= 200 || x->code == 101)
                        break;
                if (x->code != 100 ||
                    !http_msg_token_in_list(http_msg_head_get(&x->rq, "Expect"), "100-continue"))
                        if (http_msg_write_all(c->client.fd, x->respb.p, x->respb.len) < 0)
                                return STEP_CLOSE;
        }
        if (http_msg_framing_of(&x->rs, &x->rsf, &x->rsl) < 0 || x->code == 101)
                return STEP_UPSTREAM_FAIL;
        return STEP_OK;
}

/* The response head as the client gets it. Returns 0 or negative (close the client). */
static int forward_response_head(struct exch *x)
{
        AUTOFREE char *first = NULL, *extra = NULL;
        const char *te = x->rsf == HTTP_MSG_FRAME_CHUNKED ? "Transfer-Encoding: chunked\r\n" : "";
        const char *orig_cl = http_msg_head_get(&x->rs, "Content-Length");
        char cl[64] = "";
        int r;

        if (x->head_req && orig_cl)
                (void)snprintf(cl, sizeof(cl), "Content-Length: %s\r\n", orig_cl);
        else if (x->rsf == HTTP_MSG_FRAME_LENGTH)
                (void)snprintf(cl, sizeof(cl), "Content-Length: %llu\r\n",
                               (unsigned long long)x->rsl);
        if (asprintf(&first, "HTTP/1.1 %s %s\r\n", x->rs.start[1], x->rs.start[2]) < 0) {
                first = NULL;
                return -ENOMEM;
        }
        if (asprintf(&extra, "%s%s%s", te, cl, x->keep ? "" : "Connection: close\r\n") < 0) {
                extra = NULL;
                return -ENOMEM;
        }
        r = forward_head(x->c->client.fd, &x->rs, first, extra);
        if (r < 0)
                upstream_close(x->c);
        return r;
}

/* Decides the response framing and passes the response on. Returns 1 to keep the client. */
static int forward_response(struct exch *x)
{
        struct conn *c = x->c;
        int r;

        x->up_keep = !http_msg_token_in_list(http_msg_head_get(&x->rs, "Connection"), "close") &&
                     streq(x->rs.start[0], "HTTP/1.1");
        if (x->head_req || x->code == 204 || x->code == 304)
                x->rsf = HTTP_MSG_FRAME_NONE;
        else if (x->rsf == HTTP_MSG_FRAME_NONE)
                x->rsf = HTTP_MSG_FRAME_EOF;
        if (x->rsf == HTTP_MSG_FRAME_EOF) {
                x->keep = false;
                x->up_keep = false;
        }
        if (forward_response_head(x) < 0)
                return 0;
        r = http_msg_copy_body(&c->up, c->client.fd, x->rsf, x->rsl);
        if (r < 0 || !x->up_keep)
                upstream_close(c);
        if (r >= 0 && x->code == 200)
                tap_call(x, true, x->respbody.p ? x->respbody.p : "", x->respbody.len,
                         c->up.tee_over);
        return r < 0 ? 0 : x->keep;
}

/* One request/response exchange. Returns 1 to keep the client connection, 0 to close it. */
static int exchange(struct conn *c)
{
        CLEANUP(exch_release)
        struct exch x = { .c = c, .reqb = BUF_INIT(HEAD_MAX), .respb = BUF_INIT(HEAD_MAX) };
        enum step st;
        int r;

        r = http_msg_read_head(&c->client, &x.reqb);
        if (r == -EMSGSIZE) {
                reply(c->client.fd, 431, "Request Header Fields Too Large",
                      "request head too large\n", true);
                return 0;
        }
        if (r < 0)
                return 0; /* EOF, idle timeout, reset */
        if (http_msg_parse_head(x.reqb.p, &x.rq) < 0 || strncmp(x.rq.start[2], "HTTP/1.", 7) != 0 ||
            !*x.rq.start[1]) {
                reply(c->client.fd, 400, "Bad Request", "malformed request head\n", true);
                return 0;
        }
        x.http10 = streq(x.rq.start[2], "HTTP/1.0");
        x.keep = !x.http10 &&
                 !http_msg_token_in_list(http_msg_head_get(&x.rq, "Connection"), "close");
        x.head_req = streq(x.rq.start[0], "HEAD");

        if (is_probe(&x.rq))
                return serve_probe(&x);
        if (is_status_request(&x))
                return serve_status(&x);
        if (c->p->c.tap) {
                size_t max = c->p->c.tap_body_max ? c->p->c.tap_body_max : TAP_BODY_MAX_DEFAULT;

                x.tapping = true;
                x.t_req = now_realtime();
                tap_id(&x);
                x.reqbody = BUF_INIT(max);
                x.respbody = BUF_INIT(max);
                c->client.tee = &x.reqbody;
                c->client.tee_over = false;
                c->up.tee = &x.respbody;
                c->up.tee_over = false;
        }
        if (is_batchable(&x)) {
                r = serve_batched(&x);
                if (r >= 0)
                        return r;
        }

        st = forward_request(&x);
        if (st == STEP_OK)
                st = read_response_head(&x);
        if (st == STEP_OK)
                return forward_response(&x);
        if (st == STEP_UPSTREAM_FAIL) {
                upstream_close(c);
                reply(c->client.fd, 502, "Bad Gateway",
                      "model server closed the connection or answered garbage\n", true);
        }
        return 0;
}

static void conn_release_slot(struct proxy *p)
{
        pthread_mutex_lock(&p->lock);
        if (--p->n_conns == 0)
                pthread_cond_broadcast(&p->idle);
        pthread_mutex_unlock(&p->lock);
}

static void *conn_thread(void *userdata)
{
        struct conn *c = userdata;
        struct proxy *p = c->p;

        while (exchange(c) > 0)
                ;
        upstream_close(c);
        track(p, c->client.fd, false);
        close(c->client.fd);
        free(c);
        conn_release_slot(p);
        return NULL;
}

/* After a failed accept(): whether to go on (a transient error while not stopping). */
static bool accept_should_retry(struct proxy *p, int err)
{
        bool stop;

        if (err != EINTR && err != ECONNABORTED && err != EMFILE && err != ENFILE)
                return false;
        if (err == EMFILE || err == ENFILE)
                usleep(10000);
        pthread_mutex_lock(&p->lock);
        stop = p->stopping;
        pthread_mutex_unlock(&p->lock);
        return !stop;
}

/* Counts a new connection in, unless stopping or at max_connections. */
static bool conn_admit(struct proxy *p)
{
        bool full;

        pthread_mutex_lock(&p->lock);
        full = p->stopping || p->n_conns >= p->c.max_connections;
        if (!full)
                p->n_conns++;
        pthread_mutex_unlock(&p->lock);
        return !full;
}

static void peer_name(const struct sockaddr_storage *ss, char *buf, socklen_t len)
{
        if (ss->ss_family == AF_INET)
                inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, buf, len);
        else if (ss->ss_family == AF_INET6)
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, buf, len);
}

/* Hands @fd to a detached connection thread. Returns false when that failed (@fd still ours). */
static bool conn_spawn(struct proxy *p, int fd, const struct sockaddr_storage *ss)
{
        struct conn *c = calloc(1, sizeof(*c));
        pthread_attr_t attr;
        pthread_t t;
        int r;

        if (!c)
                return false;
        c->p = p;
        c->client = (struct http_msg_rd){ .fd = fd };
        c->up.fd = -1;
        peer_name(ss, c->peer, sizeof(c->peer));
        track(p, fd, true);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, (size_t)256 * 1024);
        r = pthread_create(&t, &attr, conn_thread, c);
        pthread_attr_destroy(&attr);
        if (r == 0)
                return true;
        track(p, fd, false);
        free(c);
        return false;
}

static void *accept_thread(void *userdata)
{
        struct proxy *p = userdata;

        for (;;) {
                struct sockaddr_storage ss = { 0 }; /* peer_name() reads ss_family */
                socklen_t sl = sizeof(ss);
                int fd = accept4(p->lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC), one = 1;
                struct timeval tv = { .tv_sec = p->c.idle_timeout_sec };

                if (fd < 0) {
                        if (accept_should_retry(p, errno))
                                continue;
                        break;
                }
                if (!conn_admit(p)) {
                        reply(fd, 503, "Service Unavailable", "too many connections\n", true);
                        close(fd);
                        continue;
                }
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
                if (conn_spawn(p, fd, &ss))
                        continue;
                close(fd);
                conn_release_slot(p);
        }
        return NULL;
}

int proxy_start(const struct proxy_config *cfg, struct proxy **ret)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                                  .ai_flags = AI_PASSIVE | AI_NUMERICHOST },
                        *res = NULL;
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        struct proxy *p;
        char port[8];
        int one = 1, r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->c = *cfg;
        if (!p->c.max_connections)
                p->c.max_connections = 1024;
        if (p->c.max_connections > FDS_MAX / 2)
                p->c.max_connections = FDS_MAX / 2;
        if (!p->c.idle_timeout_sec)
                p->c.idle_timeout_sec = 120;
        if (!p->c.upstream_timeout_sec)
                p->c.upstream_timeout_sec = 600;
        for (size_t i = 0; i < FDS_MAX; i++)
                p->fds[i] = -1;
        p->upstream_host = strdup(cfg->upstream_host ? cfg->upstream_host : "127.0.0.1");
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->idle, NULL);
        p->lfd = -1;
        snprintf(port, sizeof(port), "%u", cfg->port);
        if (!p->upstream_host) {
                r = -ENOMEM;
                goto fail;
        }
        if (getaddrinfo(cfg->address ? cfg->address : "0.0.0.0", port, &hints, &res) != 0) {
                r = -EINVAL;
                goto fail;
        }
        p->lfd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (p->lfd < 0 || setsockopt(p->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            bind(p->lfd, res->ai_addr, res->ai_addrlen) < 0 || listen(p->lfd, 512) < 0 ||
            getsockname(p->lfd, (struct sockaddr *)&ss, &sl) < 0) {
                r = negative_errno();
                freeaddrinfo(res);
                goto fail;
        }
        freeaddrinfo(res);
        p->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
        r = -pthread_create(&p->accept_thread, NULL, accept_thread, p);
        if (r < 0)
                goto fail;
        *ret = p;
        return 0;
fail:
        if (p->lfd >= 0)
                close(p->lfd);
        free(p->upstream_host);
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->idle);
        free(p);
        return r;
}

uint16_t proxy_port(const struct proxy *p)
{
        return p->port;
}

struct proxy *proxy_stop(struct proxy *p)
{
        if (!p)
                return NULL;
        pthread_mutex_lock(&p->lock);
        p->stopping = true;
        pthread_mutex_unlock(&p->lock);
        shutdown(p->lfd, SHUT_RDWR);
        pthread_join(p->accept_thread, NULL);
        close(p->lfd);
        pthread_mutex_lock(&p->lock);
        for (size_t i = 0; i < FDS_MAX; i++)
                if (p->fds[i] >= 0)
                        shutdown(p->fds[i], SHUT_RDWR);
        while (p->n_conns > 0)
                pthread_cond_wait(&p->idle, &p->lock);
        pthread_mutex_unlock(&p->lock);
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->idle);
        free(p->upstream_host);
        free(p);
        return NULL;
}
