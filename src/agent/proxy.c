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
#include <time.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/forward.h"
#include "agent/http-conn.h"
#include "agent/infer-path.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/time-util.h"
#include "util/uuid.h"

#define HEAD_MAX             ((size_t)64 * 1024)
#define FIELDS_MAX           HTTP_CONN_FIELDS_MAX
#define FDS_MAX              4096
#define TAP_BODY_MAX_DEFAULT ((size_t)16 << 20)
#define BATCH_BODY_MAX       ((size_t)64 << 20)
#define HOP_HEADER           "Modelplane-Forwarded-By"

static const struct http1_limits proxy_limits = HTTP_CONN_LIMITS_INIT;

struct proxy {
        struct proxy_config c;
        char *upstream_host;
        char *pod;             /* the hop header's value */
        struct forwarder *fwd; /* placement; NULL without a route port */
        int lfd;
        int wake_fd; /* eventfd: the stop wakes the accept thread (which takes what is queued) */
        uint16_t port;
        pthread_t accept_thread;
        pthread_mutex_t lock;
        pthread_cond_t idle;
        int fds[FDS_MAX]; /* open client/upstream fds, for shutdown at stop */
        unsigned n_conns;
        bool stopping;
        struct conn *conns; /* the client connections, under lock (the stop's idle ones) */
};

struct conn {
        struct proxy *p;
        struct conn *next, *prev; /* p->conns, under p->lock */
        bool busy;                /* between a request's head and its response's end; p->lock */
        bool served;              /* one exchange done: at the stop, idle means closed at once */
        struct http_conn client;
        struct http_conn up; /* the model server; fd -1 while none */
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

/* ---- heads ---- */

/* A head copied out of its connection's buffer, its fields split into C strings: what an
 * exchange looks up, rebuilds and hands to the tap. */
struct msg {
        char *text;          /* owned */
        struct http1_head h; /* offsets into text */
        enum http1_body body;
        const char *method, *target; /* request */
        const char *reason;          /* response */
        const char *name[FIELDS_MAX], *value[FIELDS_MAX];
        size_t n;
};

static void msg_release(struct msg *m)
{
        free(m->text);
        *m = (struct msg){ 0 };
}

/* Terminates the view text[off..off+len) in place (the byte after it is a separator). */
static const char *cut(char *text, size_t off, size_t len)
{
        text[off + len] = '\0';
        return text + off;
}

/* Copies the head of event @ev of @from into @m, fields split. */
static int msg_copy(struct msg *m, const struct http_conn *from, const struct http_conn_event *ev)
{
        size_t cur = 0, nl[FIELDS_MAX], vl[FIELDS_MAX];
        const char *n, *v;

        msg_release(m);
        m->text = malloc(ev->len + 1);
        if (!m->text)
                return -ENOMEM;
        memcpy(m->text, ev->bytes, ev->len);
        m->text[ev->len] = '\0';
        m->h = from->st.head;
        m->body = from->st.body;
        while (m->n < FIELDS_MAX &&
               http1_head_next_field(&m->h, m->text, &cur, &n, &nl[m->n], &v, &vl[m->n])) {
                m->name[m->n] = n;
                m->value[m->n++] = v;
        }
        /* only now: http1_head_next_field() reads the lines whole */
        for (size_t i = 0; i < m->n; i++) {
                m->name[i] = cut(m->text, (size_t)(m->name[i] - m->text), nl[i]);
                m->value[i] = cut(m->text, (size_t)(m->value[i] - m->text), vl[i]);
        }
        if (m->h.response)
                m->reason = cut(m->text, m->h.reason_off, m->h.reason_len);
        else {
                m->method = cut(m->text, m->h.method_off, m->h.method_len);
                m->target = cut(m->text, m->h.target_off, m->h.target_len);
        }
        return 0;
}

/* The value of the first field @name (case-insensitive), borrowed from @m, or NULL. */
static const char *msg_get(const struct msg *m, const char *name)
{
        for (size_t i = 0; i < m->n; i++)
                if (strcasecmp(m->name[i], name) == 0)
                        return m->value[i];
        return NULL;
}

/* Whether the comma-separated @list (may be NULL) holds @token, case-insensitively. */
static bool token_in_list(const char *list, const char *token)
{
        size_t tl = strlen(token);

        for (const char *p = list; p && *p;) {
                size_t n, e;

                p += strspn(p, " \t,");
                n = strcspn(p, ",");
                e = n;
                while (e > 0 && (p[e - 1] == ' ' || p[e - 1] == '\t'))
                        e--;
                if (e == tl && strncasecmp(p, token, tl) == 0)
                        return true;
                p += n;
        }
        return false;
}

/* @placement: the hop header is one too (without placement it is nobody's business). */
static bool hop_by_hop(const struct msg *m, const char *name, bool placement)
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
        if (placement && strcasecmp(name, HOP_HEADER) == 0)
                return true;
        for (size_t i = 0; i < m->n; i++)
                if (strcasecmp(m->name[i], "Connection") == 0 && token_in_list(m->value[i], name))
                        return true;
        return false;
}

/* Sends @first, @m's end-to-end fields, @extra and the empty line to @fd. */
static int forward_head(int fd, const struct msg *m, const char *first, const char *extra,
                        bool placement)
{
        struct buf b = BUF_INIT(HEAD_MAX * 4); /* a head, a first line, X-Forwarded-For */
        int r = buf_puts(&b, first);

        for (size_t i = 0; i < m->n && r >= 0; i++)
                if (!hop_by_hop(m, m->name[i], placement))
                        r = buf_printf(&b, "%s: %s\r\n", m->name[i], m->value[i]);
        if (r >= 0)
                r = buf_printf(&b, "%s\r\n", extra);
        if (r >= 0)
                r = http_conn_write_all(fd, b.p, b.len);
        buf_release(&b);
        return r;
}

/* ---- answers of the proxy's own ---- */

static const char *reason_of(unsigned code)
{
        static const struct {
                unsigned code;
                const char *reason;
        } reasons[] = {
                { 200, "OK" },
                { 400, "Bad Request" },
                { 404, "Not Found" },
                { 413, "Content Too Large" },
                { 414, "URI Too Long" },
                { 431, "Request Header Fields Too Large" },
                { 500, "Internal Server Error" },
                { 501, "Not Implemented" },
                { 502, "Bad Gateway" },
                { 503, "Service Unavailable" },
                { 505, "HTTP Version Not Supported" },
        };

        for (size_t i = 0; i < ELEMENTSOF(reasons); i++)
                if (reasons[i].code == code)
                        return reasons[i].reason;
        return "Status";
}

/* A complete answer: @code, @ctype, @extra header lines, @body. Returns 0 or negative. */
static int answer(int fd, unsigned code, const char *ctype, const char *extra, const char *body,
                  bool close_conn)
{
        char head[512];
        int n = snprintf(head, sizeof(head),
                         "HTTP/1.1 %u %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n",
                         code, reason_of(code), ctype, strlen(body), extra,
                         close_conn ? "Connection: close\r\n" : "");

        if (n < 0 || (size_t)n >= sizeof(head))
                return -ENOBUFS;
        if (http_conn_write_all(fd, head, (size_t)n) < 0)
                return -EPIPE;
        return http_conn_write_all(fd, body, strlen(body));
}

static void reply(int fd, unsigned code, const char *body, bool close_conn)
{
        (void)answer(fd, code, "text/plain; charset=utf-8", "", body, close_conn);
}

/* ---- the model server's connection ---- */

static int upstream_connect(struct conn *c)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
        char port[8];
        int fd = -1, one = 1;
        struct timeval tv = { .tv_sec = c->p->c.upstream_timeout_sec };

        (void)snprintf(port, sizeof(port), "%u", c->p->c.upstream_port);
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
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        track(c->p, fd, true);
        http_conn_release(&c->up);
        http_conn_init(&c->up, fd, true, &proxy_limits);
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

/* A kept-alive upstream connection that the server closed meanwhile is readable (EOF); one with
 * bytes after its last answer is not to be trusted either. */
static bool upstream_stale(struct conn *c)
{
        struct pollfd pfd = { .fd = c->up.fd, .events = POLLIN };

        return http_conn_has_unread(&c->up) || poll(&pfd, 1, 0) != 0;
}

/* ---- one exchange ---- */

/* One exchange in flight: both heads and what they decide. */
struct exch {
        struct conn *c;
        struct msg rq, rs;
        struct http_conn *up;         /* where the request goes: &c->up, or a replica's */
        struct forward_conn *fwd;     /* placement: the replica's connection */
        struct buf reqbody, respbody; /* tapped bodies */
        bool req_over, resp_over;     /* a tapped body went over its limit */
        const char *pre;              /* a request body already read (batcher pass-through) */
        size_t pre_len;
        bool tapping;
        char id[128];
        uint64_t t_req;
        bool keep, head_req, sent_100;
};

/* How a step of an exchange ended. */
enum step {
        STEP_OK,            /* go on */
        STEP_CLOSE,         /* close the client connection; whatever was owed is sent */
        STEP_UPSTREAM_FAIL, /* drop the upstream and answer 502 */
};

static void exch_release(struct exch *x)
{
        msg_release(&x->rq);
        msg_release(&x->rs);
        buf_release(&x->reqbody);
        buf_release(&x->respbody);
}

/* Hands the replica's connection back (placement), counted as @outcome. */
static void forward_finish(struct exch *x, enum forward_outcome outcome)
{
        if (!x->fwd)
                return;
        track(x->c->p, x->fwd->conn.fd, false);
        forwarder_done(x->c->p->fwd, x->fwd, outcome);
        x->fwd = NULL;
        x->up = &x->c->up;
}

/* The upstream connection failed or is not reusable. */
static void up_drop(struct exch *x)
{
        if (x->fwd)
                forward_finish(x, FORWARD_FAILED);
        else
                upstream_close(x->c);
}

/* Appends a body's payload to a tapped body, noting when it no longer fits. */
static void tee(struct buf *b, bool *over, const char *p, size_t len)
{
        if (b->max > 0 && !*over && len > 0 && buf_append(b, p, len) < 0)
                *over = true;
}

/*
 * Passes the body of the message @from is in to @out (< 0: reads it without passing it on), its
 * bytes as they came (the chunk framing checked by http1 first), the payload kept in @b when it
 * has a limit. Returns 0 at the message's end, -EBADMSG when the body was refused or cut short,
 * another negative errno for the sockets.
 */
static int copy_body(struct http_conn *from, int out, struct buf *b, bool *over)
{
        for (;;) {
                struct http_conn_event ev;
                int r = http_conn_next(from, &ev);

                if (r < 0)
                        return r;
                if (ev.kind != HTTP_CONN_BODY && ev.kind != HTTP_CONN_END)
                        return -EBADMSG;
                if (out >= 0 && ev.len > 0) {
                        r = http_conn_write_all(out, ev.bytes, ev.len);
                        if (r < 0)
                                return r;
                }
                tee(b, over, ev.data, ev.kind == HTTP_CONN_BODY ? ev.data_len : 0);
                if (ev.kind == HTTP_CONN_END)
                        return 0;
        }
}

/* Whether the request has a body to read (a chunked one, or a Content-Length above 0). */
static bool has_body(const struct msg *rq)
{
        return rq->body == HTTP1_BODY_CHUNKED ||
               (rq->body == HTTP1_BODY_LENGTH && rq->h.content_length > 0);
}

/* The end of a request without a body, before the next one. Returns 1 to keep the client. */
static int request_done(struct exch *x, int keep)
{
        if (!keep || has_body(&x->rq))
                return 0; /* a body is not skipped: the connection closes */
        return copy_body(&x->c->client, -1, &x->reqbody, &x->req_over) < 0 ? 0 : 1;
}

/* The id KServe's logger gives an exchange: the request's Ce-Id, else (modelplane) its
 * X-Request-Id, else a random UUID. */
static void tap_id(struct exch *x)
{
        const char *id = msg_get(&x->rq, "Ce-Id");

        if (!id || !*id)
                id = msg_get(&x->rq, "X-Request-Id");
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
                .names = x->rq.name,
                .values = x->rq.value,
                .n_headers = x->rq.n,
                .content_type = msg_get(response ? &x->rs : &x->rq, "Content-Type"),
                .body = body ? body : "",
                .body_len = len,
                .code = response ? x->rs.h.code : 0,
                .time_usec = response ? now_realtime() : x->t_req,
        };

        if (!x->tapping)
                return;
        if (response && !m.content_type)
                m.content_type = msg_get(&x->rq, "Content-Type");
        if (over) {
                if (cfg->tap_skipped)
                        cfg->tap_skipped(cfg->tap_userdata);
                return;
        }
        cfg->tap(cfg->tap_userdata, &m);
}

static void tap_start(struct exch *x)
{
        const struct proxy_config *cfg = &x->c->p->c;
        size_t max = cfg->tap_body_max ? cfg->tap_body_max : TAP_BODY_MAX_DEFAULT;

        if (!cfg->tap)
                return;
        x->tapping = true;
        x->t_req = now_realtime();
        tap_id(x);
        x->reqbody = BUF_INIT(max);
        x->respbody = BUF_INIT(max);
}

static bool is_probe(const struct msg *rq)
{
        const char *ua = msg_get(rq, "User-Agent");

        return msg_get(rq, "K-Network-Probe") || (ua && strncmp(ua, "kube-probe/", 11) == 0);
}

/* Knative's and the kubelet's probes, answered from the readiness callback. */
static int serve_probe(struct exch *x)
{
        struct conn *c = x->c;
        const char *probe = msg_get(&x->rq, "K-Network-Probe");
        bool close_conn = !x->keep || has_body(&x->rq); /* a probe has no body: not skipped */

        if (probe && strcmp(probe, "queue") != 0)
                reply(c->client.fd, 400, "unexpected probe header value\n", close_conn);
        else if (c->p->c.ready(c->p->c.ready_userdata))
                reply(c->client.fd, 200, "queue", close_conn);
        else
                reply(c->client.fd, 503, "model server not ready\n", close_conn);
        return request_done(x, x->keep);
}

static bool is_get_of(const struct exch *x, const char *path)
{
        return path && strcmp(x->rq.method, "GET") == 0 && strcmp(x->rq.target, path) == 0;
}

static bool is_status_request(const struct exch *x)
{
        return is_get_of(x, x->c->p->c.status_path) || is_get_of(x, x->c->p->c.metrics_path);
}

/* The agent's metrics, with the forwarder's after them (placement). */
static char *metrics_text(struct proxy *p)
{
        AUTOFREE char *own = p->c.metrics(p->c.ready_userdata), *fwd = NULL;
        char *all = NULL;

        if (!own || !p->fwd)
                return TAKE_PTR(own);
        fwd = forwarder_metrics(p->fwd);
        if (!fwd || asprintf(&all, "%s%s", own, fwd) < 0)
                return NULL;
        return all;
}

/* The agent's own status document, or its metrics. */
static int serve_status(struct exch *x)
{
        struct conn *c = x->c;
        bool metrics = is_get_of(x, c->p->c.metrics_path);
        AUTOFREE char *text = metrics ? metrics_text(c->p) : c->p->c.status(c->p->c.ready_userdata);

        if (!text || has_body(&x->rq)) {
                reply(c->client.fd, 500, "no status\n", true);
                return 0;
        }
        if (answer(c->client.fd, 200, metrics ? "text/plain; version=0.0.4" : "application/json",
                   "", text, !x->keep) < 0)
                return 0;
        return request_done(x, x->keep);
}

/* Reads a request body whole into x->reqbody (the batcher's). Returns 0, or 1 when answered. */
static int read_whole_body(struct exch *x)
{
        struct conn *c = x->c;

        if (x->rq.body == HTTP1_BODY_LENGTH && x->rq.h.content_length > BATCH_BODY_MAX) {
                reply(c->client.fd, 413, "request body too large\n", true);
                return 1;
        }
        buf_release(&x->reqbody);
        x->reqbody = BUF_INIT(BATCH_BODY_MAX);
        x->req_over = false;
        if (x->rq.h.expect_continue && has_body(&x->rq) && x->rq.h.version_minor >= 1 &&
            http_conn_write_all(c->client.fd, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0)
                return 1;
        if (copy_body(&c->client, -1, &x->reqbody, &x->req_over) < 0)
                return 1;
        if (x->req_over) {
                reply(c->client.fd, 413, "request body too large\n", true);
                return 1;
        }
        if (buf_puts(&x->reqbody, "") < 0) /* NUL-terminated, also when empty */
                return 1;
        return 0;
}

/* A POST for the batcher: its body read whole, then answered by the batch or passed on. Returns
 * -1 to proxy it (x->pre set), else 1 to keep the client connection, 0 to close it. */
static int serve_batched(struct exch *x)
{
        const struct proxy_config *cfg = &x->c->p->c;
        AUTOFREE char *body = NULL;
        unsigned code = 0;
        int r;

        if (read_whole_body(x) > 0)
                return 0;
        r = cfg->batch(cfg->batch_userdata, x->rq.target, x->reqbody.p, x->reqbody.len, &code,
                       &body);
        if (r == -EMEDIUMTYPE) {
                x->pre = x->reqbody.p;
                x->pre_len = x->reqbody.len;
                return -1;
        }
        if (r < 0) {
                reply(x->c->client.fd, 500, "batcher failed\n", true);
                return 0;
        }
        tap_call(x, false, x->reqbody.p, x->reqbody.len, false);
        if (answer(x->c->client.fd, code, "application/json", "", body, !x->keep) < 0)
                return 0;
        if (code == 200 && x->tapping) {
                msg_release(&x->rs);
                x->rs.h.code = 200;
                tap_call(x, true, body, strlen(body), false);
        }
        return x->keep;
}

/* Placement: 503 for a model no replica can serve now, with Retry-After and a JSON body. */
static int serve_unavailable(struct exch *x, const char *model, const char *hop)
{
        struct buf b = BUF_INIT(4096);
        char msg[1024];
        int r;

        if (hop)
                (void)snprintf(msg, sizeof(msg),
                               "model %s is not loaded on this replica, and the request was "
                               "forwarded here already (by %.128s)",
                               model, hop);
        else
                (void)snprintf(msg, sizeof(msg), "model %s is not loaded on any replica yet; retry",
                               model);
        /* the model name comes from the path, the hop header from the client: escaped */
        r = buf_puts(&b, "{\"error\":");
        if (r >= 0)
                r = buf_put_json_string(&b, msg, strlen(msg));
        if (r >= 0)
                r = buf_puts(&b, "}");
        if (r >= 0)
                r = answer(x->c->client.fd, 503, "application/json", "Retry-After: 1\r\n", b.p,
                           !x->keep || has_body(&x->rq));
        buf_release(&b);
        return r < 0 ? 0 : request_done(x, x->keep);
}

/*
 * Placement: where a request goes. Returns -1 to go on (to the model server, or x->fwd set to a
 * replica that holds the model), else the exchange's result (answered 503).
 */
static int route(struct exch *x)
{
        struct proxy *p = x->c->p;
        char model[INFER_PATH_MODEL_MAX + 1];
        const char *hop = msg_get(&x->rq, HOP_HEADER);

        if (!p->fwd || infer_path_model(x->rq.target, strlen(x->rq.target), model) == 0)
                return -1;
        switch (forwarder_route(p->fwd, model, hop != NULL, &x->fwd)) {
        case FORWARD_LOCAL:
                return -1;
        case FORWARD_PEER:
                track(p, x->fwd->conn.fd, true);
                x->up = &x->fwd->conn;
                return -1;
        default:
                return serve_unavailable(x, model, hop);
        }
}

/* The request head as the next hop gets it: HTTP/1.1, X-Forwarded-For, our framing, and the
 * hop header when it goes to another replica. */
static enum step forward_request_head(struct exch *x)
{
        struct buf first = BUF_INIT(HEAD_MAX * 2), extra = BUF_INIT(HEAD_MAX * 2);
        const char *xff = msg_get(&x->rq, "X-Forwarded-For");
        int r;

        r = buf_printf(&first, "%s %s HTTP/1.1\r\n", x->rq.method, x->rq.target);
        if (r >= 0)
                r = buf_printf(&extra, "X-Forwarded-For: %s%s%s\r\n", xff ? xff : "",
                               xff ? ", " : "", x->c->peer);
        if (r >= 0 && x->pre)
                r = buf_printf(&extra, "Content-Length: %zu\r\n", x->pre_len);
        else if (r >= 0 && x->rq.body == HTTP1_BODY_CHUNKED)
                r = buf_puts(&extra, "Transfer-Encoding: chunked\r\n");
        else if (r >= 0 && x->rq.body == HTTP1_BODY_LENGTH)
                r = buf_printf(&extra, "Content-Length: %llu\r\n",
                               (unsigned long long)x->rq.h.content_length);
        if (r >= 0 && x->fwd)
                r = buf_printf(&extra, "%s: %s\r\n", HOP_HEADER, x->c->p->pod);
        if (r >= 0)
                r = forward_head(x->up->fd, &x->rq, buf_str(&first), buf_str(&extra),
                                 x->c->p->fwd != NULL);
        buf_release(&first);
        buf_release(&extra);
        return r < 0 ? STEP_UPSTREAM_FAIL : STEP_OK;
}

/* (Re)connects to the model server unless the request goes to a replica. */
static bool upstream_ready(struct exch *x)
{
        struct conn *c = x->c;

        if (x->fwd)
                return true;
        if (c->up.fd >= 0 && upstream_stale(c))
                upstream_close(c);
        return c->up.fd >= 0 || upstream_connect(c) >= 0;
}

/* Passes the request on: head, 100 Continue to the client when it asked, body. */
static enum step forward_request(struct exch *x)
{
        struct conn *c = x->c;
        enum step st;
        int r;

        if (!upstream_ready(x)) {
                reply(c->client.fd, 502, "model server unreachable\n", true);
                return STEP_CLOSE;
        }
        st = forward_request_head(x);
        if (st != STEP_OK)
                return st;
        if (x->rq.h.expect_continue && has_body(&x->rq) && x->rq.h.version_minor >= 1 && !x->pre) {
                if (http_conn_write_all(c->client.fd, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0)
                        return STEP_CLOSE;
                x->sent_100 = true;
        }
        r = x->pre ? http_conn_write_all(x->up->fd, x->pre, x->pre_len)
                   : copy_body(&c->client, x->up->fd, &x->reqbody, &x->req_over);
        if (r < 0) {
                up_drop(x); /* a half-sent request must not be reused */
                return STEP_CLOSE;
        }
        if (x->pre)
                tap_call(x, false, x->pre, x->pre_len, false);
        else
                tap_call(x, false, x->reqbody.p, x->reqbody.len, x->req_over);
        return STEP_OK;
}

/* Reads the final response head, passing interim 1xx answers on (except a 100 the client asked
 * for, which the proxy sent already). */
static enum step read_response_head(struct exch *x)
{
        http1_stream_set_head_request(&x->up->st, x->head_req);
        for (;;) {
                struct http_conn_event ev;

                if (http_conn_next(x->up, &ev) < 0 || ev.kind != HTTP_CONN_HEAD)
                        return STEP_UPSTREAM_FAIL;
                if (msg_copy(&x->rs, x->up, &ev) < 0)
                        return STEP_UPSTREAM_FAIL;
                if (x->rs.h.code >= 200)
                        return STEP_OK;
                if (x->rs.h.code == 101) /* upgrades are not proxied */
                        return STEP_UPSTREAM_FAIL;
                if ((x->rs.h.code != 100 || !x->rq.h.expect_continue) &&
                    http_conn_write_all(x->c->client.fd, ev.bytes, ev.len) < 0)
                        return STEP_CLOSE;
        }
}

/* The response head as the client gets it. Returns 0 or negative (close the client). */
static int forward_response_head(struct exch *x)
{
        const struct msg *rs = &x->rs;
        const char *close_conn = x->keep ? "" : "Connection: close\r\n";
        struct buf first = BUF_INIT(HEAD_MAX * 2);
        char framing[128];
        int r;

        if (rs->body == HTTP1_BODY_CHUNKED)
                (void)snprintf(framing, sizeof(framing), "Transfer-Encoding: chunked\r\n%s",
                               close_conn);
        else if (rs->body == HTTP1_BODY_LENGTH ||
                 (rs->body == HTTP1_BODY_NONE && rs->h.has_content_length && rs->h.code != 204))
                (void)snprintf(framing, sizeof(framing), "Content-Length: %llu\r\n%s",
                               (unsigned long long)rs->h.content_length, close_conn);
        else /* no body, or until the server closes */
                (void)snprintf(framing, sizeof(framing), "%s", close_conn);
        r = buf_printf(&first, "HTTP/1.1 %u %s\r\n", rs->h.code, rs->reason);
        if (r >= 0)
                r = forward_head(x->c->client.fd, rs, buf_str(&first), framing,
                                 x->c->p->fwd != NULL);
        buf_release(&first);
        return r;
}

/* Passes the response on. Returns 1 to keep the client. */
static int forward_response(struct exch *x)
{
        int r;

        if (x->rs.body == HTTP1_BODY_UNTIL_CLOSE)
                x->keep = false;
        if (forward_response_head(x) < 0) {
                up_drop(x);
                return 0;
        }
        r = copy_body(x->up, x->c->client.fd, &x->respbody, &x->resp_over);
        if (r < 0)
                up_drop(x);
        else if (x->fwd)
                forward_finish(x,
                               x->up->st.close_after ? FORWARD_ANSWERED_CLOSE : FORWARD_ANSWERED);
        else if (x->up->st.close_after)
                upstream_close(x->c);
        if (r >= 0 && x->rs.h.code == 200)
                tap_call(x, true, x->respbody.p, x->respbody.len, x->resp_over);
        return r < 0 ? 0 : x->keep;
}

/* A request head http1 refused: its status (400 for a version other than 1.x, as the proxy
 * always answered) and message. */
static void refuse_request(struct conn *c)
{
        char body[HTTP1_MESSAGE_MAX + 2];
        unsigned status = c->client.st.status == 505 ? 400 : c->client.st.status;

        (void)snprintf(body, sizeof(body), "%s\n", c->client.st.message);
        reply(c->client.fd, status, body, true);
}

/* Reads the next request head. Returns 1 with x->rq set, 0 when the connection is done. */
static int read_request_head(struct exch *x)
{
        struct conn *c = x->c;
        struct http_conn_event ev;

        if (http_conn_next(&c->client, &ev) < 0)
                return 0; /* idle timeout, reset */
        if (ev.kind == HTTP_CONN_REFUSE) {
                refuse_request(c);
                return 0;
        }
        if (ev.kind != HTTP_CONN_HEAD || msg_copy(&x->rq, &c->client, &ev) < 0)
                return 0; /* closed */
        x->keep = x->rq.h.version_minor >= 1 && !c->client.st.close_after;
        x->head_req = x->rq.method && strcmp(x->rq.method, "HEAD") == 0;
        return 1;
}

/* Passes the request on and the answer back: to the model server or (placement) a replica. */
static int proxy_exchange(struct exch *x)
{
        enum step st = forward_request(x);

        if (st == STEP_OK)
                st = read_response_head(x);
        if (st == STEP_OK)
                return forward_response(x);
        if (st == STEP_UPSTREAM_FAIL) {
                bool replica = x->fwd != NULL;

                up_drop(x);
                reply(x->c->client.fd, 502,
                      replica ? "the replica that holds the model closed the connection or "
                                "answered garbage\n"
                              : "model server closed the connection or answered garbage\n",
                      true);
        }
        forward_finish(x, FORWARD_FAILED);
        return 0;
}

/* @c is in an exchange (@busy) or waits for the next request: a stop cuts only the latter.
 * Returns whether the proxy is stopping. */
static bool conn_set_busy(struct conn *c, bool busy)
{
        bool stopping;

        pthread_mutex_lock(&c->p->lock);
        c->busy = busy;
        if (!busy)
                c->served = true;
        stopping = c->p->stopping;
        pthread_mutex_unlock(&c->p->lock);
        return stopping;
}

/* One request/response exchange. Returns 1 to keep the client connection, 0 to close it. */
static int exchange(struct conn *c)
{
        CLEANUP(exch_release) struct exch x = { .c = c, .up = &c->up };
        int r;

        if (read_request_head(&x) == 0)
                return 0;
        conn_set_busy(c, true);
        if (is_probe(&x.rq))
                return serve_probe(&x);
        if (is_status_request(&x))
                return serve_status(&x);
        r = route(&x);
        if (r >= 0)
                return r;
        if (!x.fwd) {
                tap_start(&x);
                if (c->p->c.batch && strcmp(x.rq.method, "POST") == 0) {
                        r = serve_batched(&x);
                        if (r >= 0)
                                return r;
                }
        }
        return proxy_exchange(&x);
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

        /* after an exchange the stop closes the connection (an exchange in flight ends first) */
        while (exchange(c) > 0 && !conn_set_busy(c, false))
                ;
        pthread_mutex_lock(&p->lock);
        if (c->prev)
                c->prev->next = c->next;
        else
                p->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        pthread_mutex_unlock(&p->lock);
        upstream_close(c);
        http_conn_release(&c->up);
        track(p, c->client.fd, false);
        close(c->client.fd);
        http_conn_release(&c->client);
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

/* Counts a new connection in, unless at max_connections (or stopping, but for @queued: one
 * that was waiting in the listen queue when the stop came, which is served). */
static bool conn_admit(struct proxy *p, bool queued)
{
        bool full;

        pthread_mutex_lock(&p->lock);
        full = (p->stopping && !queued) || p->n_conns >= p->c.max_connections;
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
        http_conn_init(&c->client, fd, false, &proxy_limits);
        http_conn_init(&c->up, -1, true, &proxy_limits);
        peer_name(ss, c->peer, sizeof(c->peer));
        track(p, fd, true);
        pthread_mutex_lock(&p->lock);
        c->next = p->conns;
        if (p->conns)
                p->conns->prev = c;
        p->conns = c;
        pthread_mutex_unlock(&p->lock);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, (size_t)256 * 1024);
        r = pthread_create(&t, &attr, conn_thread, c);
        pthread_attr_destroy(&attr);
        if (r == 0)
                return true;
        pthread_mutex_lock(&p->lock);
        p->conns = c->next;
        if (c->next)
                c->next->prev = NULL;
        pthread_mutex_unlock(&p->lock);
        track(p, fd, false);
        free(c);
        return false;
}

/* Accepts one connection (the listener is non-blocking) and hands it to a thread; @queued: the
 * stop came (see conn_admit()). Returns false when nothing is waiting or the listener failed. */
static bool accept_one(struct proxy *p, bool queued)
{
        struct sockaddr_storage ss = { 0 }; /* peer_name() reads ss_family */
        socklen_t sl = sizeof(ss);
        int fd = accept4(p->lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC), one = 1;
        struct timeval tv = { .tv_sec = p->c.idle_timeout_sec };

        if (fd < 0)
                return !queued && errno != EAGAIN && accept_should_retry(p, errno);
        if (!conn_admit(p, queued)) {
                reply(fd, 503, "too many connections\n", true);
                close(fd);
                return true;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        if (!conn_spawn(p, fd, &ss)) {
                close(fd);
                conn_release_slot(p);
        }
        return true;
}

static void *accept_thread(void *userdata)
{
        struct proxy *p = userdata;

        for (;;) {
                struct pollfd pf[2] = { { .fd = p->lfd, .events = POLLIN },
                                        { .fd = p->wake_fd, .events = POLLIN } };

                if (poll(pf, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (pf[1].revents) {
                        /* the stop: what waits in the listen queue was sent before it, and is
                         * served (the listener closes after this; later connections are refused) */
                        while (accept_one(p, true))
                                ;
                        break;
                }
                if (pf[0].revents & (POLLERR | POLLNVAL))
                        break;
                while (accept_one(p, false))
                        ;
        }
        return NULL;
}

/* Placement's forwarder, when a route port is set. */
static int forwarder_start(struct proxy *p)
{
        if (!p->c.route)
                return 0;
        if (!p->c.model_loaded)
                return -EINVAL;
        p->pod = strdup(p->c.pod_name && *p->c.pod_name ? p->c.pod_name : "unknown");
        if (!p->pod)
                return -ENOMEM;
        return forwarder_new(
                &(struct forwarder_config){
                        .route = *p->c.route,
                        .local = p->c.model_loaded,
                        .local_userdata = p->c.ready_userdata,
                        .wait = (usec_t)(p->c.forward_wait_ms ? p->c.forward_wait_ms : 10000) *
                                USEC_PER_MSEC,
                        .max_per_peer = p->c.forward_max_per_peer,
                        .io_timeout_sec = p->c.upstream_timeout_sec,
                        .limits = proxy_limits,
                },
                &p->fwd);
}

static void proxy_free(struct proxy *p)
{
        if (p->lfd >= 0)
                close(p->lfd);
        if (p->wake_fd >= 0)
                close(p->wake_fd);
        p->fwd = forwarder_free(p->fwd);
        free(p->upstream_host);
        free(p->pod);
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->idle);
        free(p);
}

static int proxy_listen(struct proxy *p, const struct proxy_config *cfg)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                                  .ai_flags = AI_PASSIVE | AI_NUMERICHOST },
                        *res = NULL;
        union {
                struct sockaddr sa;
                struct sockaddr_in in;
                struct sockaddr_in6 in6;
                struct sockaddr_storage ss;
        } bound;
        socklen_t sl = sizeof(bound);
        char port[8];
        int one = 1, r = 0;

        memset(&bound, 0, sizeof(bound));

        (void)snprintf(port, sizeof(port), "%u", cfg->port);
        if (getaddrinfo(cfg->address ? cfg->address : "0.0.0.0", port, &hints, &res) != 0)
                return -EINVAL;
        p->lfd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (p->lfd < 0 || setsockopt(p->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            bind(p->lfd, res->ai_addr, res->ai_addrlen) < 0 || listen(p->lfd, 512) < 0 ||
            getsockname(p->lfd, &bound.sa, &sl) < 0)
                r = negative_errno();
        freeaddrinfo(res);
        if (r < 0)
                return r;
        p->port = ntohs(bound.sa.sa_family == AF_INET6 ? bound.in6.sin6_port : bound.in.sin_port);
        return 0;
}

int proxy_start(const struct proxy_config *cfg, struct proxy **ret)
{
        struct proxy *p = calloc(1, sizeof(*p));
        int r;

        if (!p)
                return -ENOMEM;
        p->c = *cfg;
        if (!p->c.max_connections)
                p->c.max_connections = 1024;
        if (p->c.max_connections > FDS_MAX / 3) /* client, model server, another replica */
                p->c.max_connections = FDS_MAX / 3;
        if (!p->c.idle_timeout_sec)
                p->c.idle_timeout_sec = 120;
        if (!p->c.upstream_timeout_sec)
                p->c.upstream_timeout_sec = 600;
        if (!p->c.stop_grace_ms)
                p->c.stop_grace_ms = 10000;
        for (size_t i = 0; i < FDS_MAX; i++)
                p->fds[i] = -1;
        p->lfd = -1;
        pthread_mutex_init(&p->lock, NULL);
        {
                pthread_condattr_t ca;

                pthread_condattr_init(&ca);
                pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
                pthread_cond_init(&p->idle, &ca);
                pthread_condattr_destroy(&ca);
        }
        p->wake_fd = eventfd(0, EFD_CLOEXEC);
        p->upstream_host = strdup(cfg->upstream_host ? cfg->upstream_host : "127.0.0.1");
        r = p->wake_fd < 0 ? negative_errno() : p->upstream_host ? forwarder_start(p) : -ENOMEM;
        if (r >= 0)
                r = proxy_listen(p, cfg);
        if (r >= 0)
                r = -pthread_create(&p->accept_thread, NULL, accept_thread, p);
        if (r < 0) {
                proxy_free(p);
                return r;
        }
        *ret = p;
        return 0;
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
        (void)!eventfd_write(p->wake_fd, 1);
        pthread_join(p->accept_thread, NULL);
        close(p->lfd); /* from now on a connection is refused */
        p->lfd = -1;
        if (p->fwd)
                forwarder_stop(p->fwd); /* requests waiting for a model answer now */
        pthread_mutex_lock(&p->lock);
        /* as Go's http.Server.Shutdown: connections waiting for a request are closed, those in
         * an exchange finish it (then close), within the grace period; then every one is cut */
        for (struct conn *c = p->conns; c; c = c->next)
                if (!c->busy && c->served) /* a new one's request is on its way: it is served */
                        shutdown(c->client.fd, SHUT_RDWR);
        if (p->n_conns > 0) {
                struct timespec ts = usec_to_timespec(now_monotonic() +
                                                      p->c.stop_grace_ms * USEC_PER_MSEC);

                while (p->n_conns > 0 &&
                       pthread_cond_timedwait(&p->idle, &p->lock, &ts) != ETIMEDOUT)
                        ;
        }
        for (size_t i = 0; i < FDS_MAX; i++)
                if (p->fds[i] >= 0)
                        shutdown(p->fds[i], SHUT_RDWR);
        while (p->n_conns > 0)
                pthread_cond_wait(&p->idle, &p->lock);
        pthread_mutex_unlock(&p->lock);
        proxy_free(p);
        return NULL;
}
