/* SPDX-License-Identifier: Apache-2.0 */
/*
 * About 1,350 lines on purpose, for now: this is the one place that bends libmicrohttpd to the
 * limits of docs/http.md (head deadline, per-address and total limits with shedding, decode-once
 * paths, JSON refusals, TLS certificate rotation and session tickets), and every part works on
 * the same private struct http_server and its per-connection state. It shrinks when the
 * connection engine on http1.c replaces libmicrohttpd (docs/http.md, "What is left").
 */
#include "http/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <unistd.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>

#include "http/engine.h"
#include "http/errors.h"
#include "http/router.h"
#include "http/tls-conn.h"
#include "http/tls-source.h"
#include "util/parse-util.h"
#include "util/time-util.h"

/* libmicrohttpd's memory per connection: the request head and its parsed fields must fit (a
 * target of HTTP_TARGET_MAX bytes with HTTP_QUERY_PARAMS_MAX parameters, and headers); a head
 * past it gets libmicrohttpd's own 414 or 431. */
#define CONNECTION_MEMORY (64U * 1024U)

/* Per TLS connection (libmicrohttpd socket context and gnutls session pointer). */
struct mhd_tls {
        struct tls_source *src; /* borrowed */
        struct tls_pair *pair;  /* a reference; the pair this connection's handshake selected */
};

/*
 * Per connection (libmicrohttpd's socket context), from accept to close: the TLS binding and the
 * request deadline's state. The deadline watchdog cuts a connection off with shutdown(2) on a
 * duplicate of its socket: the duplicate stays open until the connection's close notification,
 * so the descriptor number can never be reused by another connection while the watchdog holds it.
 */
struct sock_ctx {
        struct sock_ctx *prev, *next; /* on http_server.conns (newest first), under .lock */
        struct mhd_tls tls;           /* used when the server has a tls_source */
        /* Set by the gnutls hook in the connection's thread, without the lock; kept apart from
         * the bools below, which the watchdog reads under the lock (gcc reads adjacent bools as
         * one word, which ThreadSanitizer rightly reports when that word holds this one). */
        atomic_bool handshake_done;
        int fd;          /* owned duplicate of the socket; -1 if dup failed */
        usec_t accepted; /* for the TLS handshake deadline */
        usec_t since;    /* start of the current request (or of the connection) */
        bool busy;       /* a request head has arrived; its response is not done */
        bool in_handler; /* the application handler runs: its time does not count */
        bool cut;
};

struct http_server {
        struct MHD_Daemon *daemon;
        struct http_engine *engine;    /* instead of daemon: the own engine (plain HTTP) */
        struct http_server_config cfg; /* address, PEM and path pointers are not used after start */
        uint16_t port;
        struct tls_source *tls; /* owned; NULL unless TLS from files, or PEM on the engine */
        bool tls_static;        /* s->tls is from PEM (the engine) */
        bool tls_mode;          /* HTTPS, from files or PEM */
        struct tls_conn_server *tls_srv; /* owned; the engine's TLS sessions */
        struct cidr *trusted;            /* owned copy of cfg->trusted_proxies */

        /* request deadline (cfg.request_timeout > 0) */
        pthread_mutex_t lock;
        pthread_cond_t wake;
        struct sock_ctx *conns, *oldest;
        size_t n_conns;
        uint64_t shed_total;
        bool stopping;
        bool watchdog_running;
        pthread_t watchdog;
        uint64_t cut_total;
};

/* One query argument, decoded once; value NULL for a key without '='. */
struct http_arg {
        char *key;
        char *value;
};

/*
 * Per-request state, created by the URI callback (before libmicrohttpd parses the query) and
 * freed on completion.
 */
struct conn_state {
        struct http_req req;
        const struct http_engine_req *ereq; /* the own engine's request, else NULL */
        const char *version_at; /* where the HTTP version must start if the target has no NUL */
        unsigned refuse;        /* status decided from the raw target, 0 when it is fine */
        const char *refuse_msg;
        struct http_arg *args;
        size_t n_args;
        uint64_t received; /* body bytes seen, kept or discarded */
        bool started;      /* the first access-handler call (head complete) has run */
        bool too_large;
        bool responded;
};

/* The request's state: req is the first member of conn_state. */
static const struct conn_state *req_state(const struct http_req *req)
{
        return (const struct conn_state *)(const void *)req;
}

const char *http_req_query(const struct http_req *req, const char *key)
{
        const struct conn_state *st = req_state(req);

        for (size_t i = 0; i < st->n_args; i++)
                if (streq(st->args[i].key, key))
                        return st->args[i].value;
        return NULL;
}

const char *http_req_header(const struct http_req *req, const char *name)
{
        const struct conn_state *st = req_state(req);

        if (st->ereq)
                return http_engine_req_field(st->ereq, name);
        return req->conn ? MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name) : NULL;
}

const struct sockaddr *http_req_client_address(const struct http_req *req)
{
        const struct conn_state *st = req_state(req);
        const union MHD_ConnectionInfo *ci;

        if (st->ereq)
                return st->ereq->peer;
        ci = req->conn ? MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS)
                       : NULL;
        return ci ? ci->client_addr : NULL;
}

int http_req_query_foreach(const struct http_req *req,
                           int (*fn)(void *userdata, const char *key, const char *value),
                           void *userdata)
{
        const struct conn_state *st = req_state(req);

        for (size_t i = 0; i < st->n_args; i++) {
                int r = fn(userdata, st->args[i].key, st->args[i].value ? st->args[i].value : "");

                if (r < 0)
                        return r;
        }
        return 0;
}

static void resp_reset_body(struct http_resp *resp)
{
        buf_release(&resp->body);
        buf_init(&resp->body, HTTP_RESPONSE_MAX);
}

void http_resp_set_json(struct http_resp *resp, unsigned status, json_t *body)
{
        char *s;

        resp->status = status;
        free(resp->content_type);
        resp->content_type = NULL;
        resp_reset_body(resp);
        if (!body)
                return;
        s = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
        json_decref(body);
        if (!s || buf_puts(&resp->body, s) < 0)
                resp->status = 500;
        free(s);
}

void http_resp_set_text(struct http_resp *resp, unsigned status, const char *content_type,
                        const char *text)
{
        resp->status = status;
        free(resp->content_type);
        resp->content_type = content_type ? strdup(content_type) : NULL;
        resp_reset_body(resp);
        if (text && buf_puts(&resp->body, text) < 0)
                resp->status = 500;
}

int http_resp_add_header(struct http_resp *resp, const char *name, const char *value)
{
        struct http_header *h;
        char *n, *v;

        h = reallocarray(resp->headers, resp->n_headers + 1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        resp->headers = h;
        n = strdup(name);
        v = strdup(value);
        if (!n || !v) {
                free(n);
                free(v);
                return -ENOMEM;
        }
        h[resp->n_headers++] = (struct http_header){ .name = n, .value = v };
        return 0;
}

void http_resp_release(struct http_resp *resp)
{
        free(resp->content_type);
        buf_release(&resp->body);
        for (size_t i = 0; i < resp->n_headers; i++) {
                free(resp->headers[i].name);
                free(resp->headers[i].value);
        }
        free(resp->headers);
        *resp = (struct http_resp){ 0 };
}

static enum MHD_Result send_resp(struct MHD_Connection *conn, struct http_resp *resp)
{
        struct MHD_Response *r;
        enum MHD_Result ret;
        size_t len = 0;
        char *body = buf_take(&resp->body, &len);

        if (!body)
                return MHD_NO;
        r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
        if (!r) {
                free(body);
                return MHD_NO;
        }
        (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                      resp->content_type ? resp->content_type : "application/json");
        for (size_t i = 0; i < resp->n_headers; i++)
                (void)MHD_add_response_header(r, resp->headers[i].name, resp->headers[i].value);
        ret = MHD_queue_response(conn, resp->status ? resp->status : 500, r);
        MHD_destroy_response(r);
        return ret;
}

/* The JSON body of a refusal in the server's error shape (reason phrases from http/errors). */
static json_t *error_json(const struct http_server *s, unsigned status, const char *msg)
{
        if (s->cfg.error_body)
                return s->cfg.error_body(status, msg);
        if (s->cfg.error_style == HTTP_ERROR_REASON)
                return json_pack("{s:s,s:s}", "code", http_reason_phrase(status), "message", msg);
        return json_pack("{s:s,s:i}", "message", msg, "code", (int)status);
}

/*
 * The one writer of the refusals the server sends itself, in the server's error shape. The 413
 * keeps a caller-provided body (too_large_json) so that an API can keep its own shape.
 */
static void error_resp(const struct http_server *s, unsigned status, const char *msg,
                       struct http_resp *resp)
{
        if (status == MHD_HTTP_CONTENT_TOO_LARGE && s->cfg.too_large_json)
                http_resp_set_text(resp, status, NULL, s->cfg.too_large_json);
        else
                http_resp_set_json(resp, status, error_json(s, status, msg));
        /* a refused request may have left a body unread: never reuse the connection */
        if (status != 200 && http_resp_add_header(resp, MHD_HTTP_HEADER_CONNECTION, "close") < 0)
                resp->status = 500;
}

static enum MHD_Result send_error(const struct http_server *s, struct MHD_Connection *conn,
                                  unsigned status, const char *msg)
{
        struct http_resp resp = { .status = status, .body = BUF_INIT(HTTP_RESPONSE_MAX) };
        enum MHD_Result r;

        error_resp(s, status, msg, &resp);
        r = send_resp(conn, &resp);
        http_resp_release(&resp);
        return r;
}

static enum MHD_Result send_too_large(const struct http_server *s, struct MHD_Connection *conn)
{
        return send_error(s, conn, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large");
}

static struct sock_ctx *conn_sock_ctx(struct MHD_Connection *conn)
{
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

        return ci ? ci->socket_context : NULL;
}

/*
 * The deadlines' view of a connection. A request head arrived (busy) or its response is done
 * (idle: the head deadline runs again for the next request of a keep-alive connection).
 */
static void mark_busy(struct http_server *s, struct MHD_Connection *conn, bool busy)
{
        struct sock_ctx *c = conn_sock_ctx(conn);

        if (!c || pthread_mutex_lock(&s->lock) != 0)
                return;
        if (c->busy && !busy)
                c->since = now_monotonic();
        c->busy = busy;
        c->in_handler = false;
        (void)pthread_mutex_unlock(&s->lock);
}

/* The handler starts (in = true) or has returned: the deadline pauses, then restarts for sending
 * the response. */
static void deadline_mark(struct http_server *s, struct MHD_Connection *conn, bool in)
{
        struct sock_ctx *c = conn_sock_ctx(conn);

        if (!c || pthread_mutex_lock(&s->lock) != 0)
                return;
        c->in_handler = in;
        c->since = now_monotonic();
        (void)pthread_mutex_unlock(&s->lock);
}

/*
 * libmicrohttpd is told not to decode anything (the unescape callback): the path is decoded by
 * the router, one segment at a time (so %2F stays inside its segment and %2531 means "%31"), and
 * the query by query_decode() below, each exactly once. libmicrohttpd still turns '+' into ' ' in
 * query arguments, before this callback, as form encoding wants.
 */
static size_t unescape_none(void *cls, struct MHD_Connection *conn, char *s)
{
        (void)cls;
        (void)conn;
        return strlen(s);
}

/*
 * Called with the raw request target, after the request line has been split and before
 * libmicrohttpd parses the query into arguments. Creates the request's state and judges the
 * target: bytes outside visible ASCII (RFC 9112 §3.2; a raw NUL is caught later, see version_at),
 * its length and its number of parameters. A refused target's query is emptied in the read
 * buffer (the one write into libmicrohttpd's memory, which owns the buffer and hands it out as
 * const), so that thousands of parameters never reach libmicrohttpd's per-connection pool, which
 * would close the connection without an answer when exhausted.
 */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
        struct http_server *s = cls;
        struct conn_state *st;
        size_t n = strlen(uri), path_len, params = 0;
        const char *q;

        (void)conn;
        st = calloc(1, sizeof(*st));
        if (!st)
                return NULL;
        buf_init(&st->req.body, s->cfg.body_max + 1);
        /* the line is "METHOD SP target SP version", each separator overwritten with NUL */
        st->version_at = uri + n + 1;
        q = memchr(uri, '?', n);
        path_len = q ? (size_t)(q - uri) : n;
        if (q)
                for (const char *p = q; p && p < uri + n;
                     p = memchr(p + 1, '&', (size_t)(uri + n - p - 1)))
                        params++;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)uri[i];

                if (c <= 0x20 || c >= 0x7f) {
                        st->refuse = 400;
                        st->refuse_msg = "request target has a byte that is not visible ASCII "
                                         "(RFC 9112 section 3.2)";
                        break;
                }
        }
        if (!st->refuse && (n > HTTP_TARGET_MAX || path_len > HTTP_PATH_MAX)) {
                st->refuse = 414;
                st->refuse_msg = n > HTTP_TARGET_MAX ? "request target longer than 8192 bytes"
                                                     : "request path longer than 2048 bytes";
        }
        if (!st->refuse && params > HTTP_QUERY_PARAMS_MAX) {
                st->refuse = 414;
                st->refuse_msg = "more than 256 query parameters";
        }
        if (st->refuse && q)
                ((char *)(uintptr_t)q)[1] = '\0';
        return st;
}

/* Field values of every header named name, counted; the first kept in *first. */
struct header_scan {
        const char *name;
        size_t n;
        const char *first;
        bool differ;
};

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
        struct header_scan *h = cls;

        (void)kind;
        if (strcasecmp(key, h->name) != 0)
                return MHD_YES;
        if (h->n++ == 0)
                h->first = value ? value : "";
        else if (!streq(h->first, value ? value : ""))
                h->differ = true;
        return MHD_YES;
}

static bool is_token_char_list_of_digits(const char *v)
{
        /* "5" or "5, 5" (RFC 9110 §8.6 lets a recipient accept a list of one repeated value) */
        const char *first = NULL;
        size_t first_len = 0;

        for (;;) {
                size_t len;

                v += strspn(v, " \t");
                len = strspn(v, "0123456789");
                if (len == 0 || len > 19)
                        return false;
                if (!first) {
                        first = v;
                        first_len = len;
                } else if (len != first_len || memcmp(v, first, len) != 0)
                        return false;
                v += len;
                v += strspn(v, " \t");
                if (*v == '\0')
                        return true;
                if (*v != ',')
                        return false;
                v++;
        }
}

struct header_size {
        size_t n, bytes;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
        struct header_size *h = cls;

        (void)kind;
        h->n++;
        h->bytes += strlen(key) + (value ? strlen(value) : 0);
        return MHD_YES;
}

/* RFC 9112 §6: the framing headers. Returns 0 or the status to refuse with (and its message). */
static unsigned check_framing(struct MHD_Connection *conn, const char **msg)
{
        struct header_scan cl = { .name = MHD_HTTP_HEADER_CONTENT_LENGTH };
        struct header_scan te = { .name = MHD_HTTP_HEADER_TRANSFER_ENCODING };
        struct header_size size = { 0 };

        (void)MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &size);
        if (size.n > HTTP_HEADERS_MAX || size.bytes > HTTP_HEADER_BYTES_MAX) {
                *msg = size.n > HTTP_HEADERS_MAX ? "more than 100 header fields"
                                                 : "header fields larger than 32 KiB";
                return 431;
        }

        (void)MHD_get_connection_values(conn, MHD_HEADER_KIND, scan_header, &cl);
        (void)MHD_get_connection_values(conn, MHD_HEADER_KIND, scan_header, &te);
        if (te.n > 0 && cl.n > 0) {
                *msg = "Content-Length together with Transfer-Encoding (RFC 9112 section 6.1)";
                return 400;
        }
        if (te.n > 1 || te.differ ||
            (te.n == 1 && strcasecmp(te.first + strspn(te.first, " \t"), "chunked") != 0)) {
                *msg = "transfer coding not implemented: only chunked is";
                return 501;
        }
        if (cl.differ) {
                *msg = "conflicting Content-Length values (RFC 9110 section 8.6)";
                return 400;
        }
        if (cl.n > 0 && !is_token_char_list_of_digits(cl.first)) {
                *msg = "Content-Length is not a number (RFC 9110 section 8.6)";
                return 400;
        }
        return 0;
}

/* RFC 9112 §3.2: exactly one Host field in HTTP/1.1, at most one in HTTP/1.0 (as http1.c). */
static unsigned check_host(struct MHD_Connection *conn, const char *version, const char **msg)
{
        struct header_scan host = { .name = MHD_HTTP_HEADER_HOST };

        (void)MHD_get_connection_values(conn, MHD_HEADER_KIND, scan_header, &host);
        if (host.n > 1) {
                *msg = "more than one Host field";
                return 400;
        }
        if (host.n == 0 && version && !streq(version, MHD_HTTP_VERSION_1_0)) {
                *msg = "an HTTP/1.1 request without a Host field";
                return 400;
        }
        return 0;
}

/* Percent-decodes s once, refusing bad escapes, %00 and anything that is not UTF-8. */
static int decode_utf8(const char *s, char **ret)
{
        char *d = NULL;
        int r = http_percent_decode(s, strlen(s), &d);

        if (r < 0)
                return r;
        if (!http_utf8_valid(d, strlen(d))) {
                free(d);
                return -EILSEQ;
        }
        *ret = d;
        return 0;
}

struct args_ctx {
        struct conn_state *st;
        int r;
};

/* Decodes one query argument into st->args (value NULL for a key without '='). */
static int add_arg(struct conn_state *st, const char *key, const char *value)
{
        struct http_arg *arg;
        int r;

        if (st->n_args >= HTTP_QUERY_PARAMS_MAX)
                return -E2BIG;
        arg = &st->args[st->n_args];
        r = decode_utf8(key, &arg->key);
        if (r < 0)
                return r;
        if (value) {
                r = decode_utf8(value, &arg->value);
                if (r < 0) {
                        free(arg->key);
                        arg->key = NULL;
                        return r;
                }
        }
        st->n_args++;
        return 0;
}

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
        struct args_ctx *a = cls;

        (void)kind;
        a->r = add_arg(a->st, key, value);
        return a->r < 0 ? MHD_NO : MHD_YES;
}

static void args_release(struct conn_state *st)
{
        for (size_t i = 0; i < st->n_args; i++) {
                free(st->args[i].key);
                free(st->args[i].value);
        }
        free(st->args);
        st->args = NULL;
        st->n_args = 0;
}

/* The status and message of add_arg()'s error r (0 for none). */
static unsigned query_status(int r, const char **msg)
{
        if (r >= 0)
                return 0;
        *msg = r == -ENOMEM   ? "out of memory"
               : r == -E2BIG  ? "more than 256 query parameters"
               : r == -EILSEQ ? "query parameter is not UTF-8 once percent-decoded"
                              : "query parameter has a bad percent-escape or %00";
        return r == -ENOMEM ? 500 : r == -E2BIG ? 414 : 400;
}

/* Decodes the query arguments once into st->args. Returns 0 or the status to refuse with. */
static unsigned check_query(struct conn_state *st, struct MHD_Connection *conn, const char **msg)
{
        struct args_ctx a = { .st = st };

        st->args = calloc(HTTP_QUERY_PARAMS_MAX, sizeof(*st->args));
        if (!st->args) {
                *msg = "out of memory";
                return 500;
        }
        (void)MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &a);
        return query_status(a.r, msg);
}

/*
 * The first access-handler call, when the head is complete: everything about the request line
 * and the headers that must be refused is refused here, before any body is read. Returns 0 or the
 * status to refuse with.
 */
static unsigned check_head(struct conn_state *st, struct MHD_Connection *conn, const char *url,
                           const char *version, const char **msg)
{
        char *path = NULL;
        unsigned status;
        int r;

        if (version != st->version_at) {
                /* the request line's separator before the version is not where the target's
                 * first NUL is: the target itself had a NUL byte */
                *msg = "request target has a NUL byte";
                return 400;
        }
        if (st->refuse) {
                *msg = st->refuse_msg;
                return st->refuse;
        }
        status = check_framing(conn, msg);
        if (!status)
                status = check_host(conn, version, msg);
        if (status)
                return status;
        r = decode_utf8(url, &path);
        if (r < 0) {
                *msg = r == -ENOMEM   ? "out of memory"
                       : r == -EILSEQ ? "request path is not UTF-8 once percent-decoded"
                                      : "request path has a bad percent-escape or %00";
                return r == -ENOMEM ? 500 : 400;
        }
        free(path);
        return check_query(st, conn, msg);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
        struct http_server *s = cls;
        struct conn_state *st = *con_cls;
        struct http_resp resp = { 0 };
        enum MHD_Result ret;
        int r;

        if (!st)
                return MHD_NO; /* the URI callback ran out of memory */
        if (!st->started) {
                const char *cl, *msg = NULL;
                unsigned status;
                uint64_t clen;

                st->started = true;
                st->req.conn = conn;
                st->req.method = method;
                st->req.path = url;
                mark_busy(s, conn, true);
                status = check_head(st, conn, url, version, &msg);
                if (status) {
                        st->responded = true;
                        st->too_large = true; /* nothing more is kept */
                        return send_error(s, conn, status, msg);
                }
                cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
                if (cl && safe_atou64(cl, &clen) >= 0 && clen > s->cfg.body_max) {
                        st->too_large = true;
                        st->responded = true;
                        return send_too_large(s, conn);
                }
                return MHD_YES;
        }

        if (*upload_data_size > 0) {
                st->received += *upload_data_size;
                if (!st->too_large &&
                    buf_append(&st->req.body, upload_data, *upload_data_size) < 0) {
                        st->too_large = true;
                        buf_release(&st->req.body);
                }
                *upload_data_size = 0;
                /* a chunked body over the limit is discarded up to HTTP_DRAIN_MAX, then 413 */
                if (st->too_large && !st->responded && st->received > HTTP_DRAIN_MAX) {
                        st->responded = true;
                        return send_too_large(s, conn);
                }
                return MHD_YES;
        }
        if (st->responded)
                return MHD_YES;
        st->responded = true;
        if (st->too_large)
                return send_too_large(s, conn);

        buf_init(&resp.body, HTTP_RESPONSE_MAX);
        resp.status = 200;
        deadline_mark(s, conn, true);
        r = s->cfg.handler(s->cfg.userdata, &st->req, &resp);
        deadline_mark(s, conn, false);
        if (r < 0)
                http_resp_set_json(&resp, 500, error_json(s, 500, "internal server error"));
        ret = send_resp(conn, &resp);
        http_resp_release(&resp);
        return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
        struct conn_state *st = *con_cls;

        (void)toe;
        mark_busy(cls, conn, false);
        if (!st)
                return;
        http_req_params_release(&st->req);
        buf_release(&st->req.body);
        args_release(st);
        free(st);
        *con_cls = NULL;
}

/* ---- the own engine (http/engine.c): the same checks and request state as above ---- */

static void engine_refuse(void *userdata, unsigned status, const char *message,
                          struct http_resp *resp)
{
        error_resp(userdata, status, message, resp);
}

/* Form encoding's '+' is a space in query arguments (as libmicrohttpd has it), then decoded. */
static int engine_add_arg(struct conn_state *st, char *piece)
{
        char *eq = strchr(piece, '=');

        for (char *p = piece; *p; p++)
                if (*p == '+')
                        *p = ' ';
        if (eq)
                *eq = '\0';
        return add_arg(st, piece, eq ? eq + 1 : NULL);
}

/* Splits @query (writable, at most HTTP_QUERY_PARAMS_MAX pieces) in place at '&' and adds each
 * non-empty piece to st->args. Returns 0 or a status. */
static unsigned engine_query_pieces(struct conn_state *st, char *query, const char **msg)
{
        for (char *piece = query; piece;) {
                char *amp = strchr(piece, '&');
                unsigned status;

                if (amp)
                        *amp = '\0';
                status = *piece ? query_status(engine_add_arg(st, piece), msg) : 0;
                if (status)
                        return status;
                piece = amp ? amp + 1 : NULL;
        }
        return 0;
}

/* The query after '?' into st->args (copied: split in place). Returns 0 or a status. */
static unsigned engine_query(struct conn_state *st, const char *query, const char **msg)
{
        AUTOFREE char *copy = strdup(query);
        size_t params = 1;

        if (!copy) {
                *msg = "out of memory";
                return 500;
        }
        for (const char *p = query; (p = strchr(p, '&')); p++)
                params++;
        if (params > HTTP_QUERY_PARAMS_MAX) {
                *msg = "more than 256 query parameters";
                return 414;
        }
        st->args = calloc(HTTP_QUERY_PARAMS_MAX, sizeof(*st->args));
        if (!st->args) {
                *msg = "out of memory";
                return 500;
        }
        return engine_query_pieces(st, copy, msg);
}

/* The target's path (into *ret_path, owned) and query; the libmicrohttpd path's checks. */
static unsigned engine_target(struct conn_state *st, const char *target, char **ret_path,
                              const char **msg)
{
        const char *q = strchr(target, '?');
        size_t path_len = q ? (size_t)(q - target) : strlen(target);
        char *decoded = NULL;
        int r;

        if (target[0] != '/') {
                *msg = "request target is not a path (origin form, RFC 9112 section 3.2.1)";
                return 400;
        }
        if (path_len > HTTP_PATH_MAX) {
                *msg = "request path longer than 2048 bytes";
                return 414;
        }
        *ret_path = strndup(target, path_len);
        if (!*ret_path) {
                *msg = "out of memory";
                return 500;
        }
        r = decode_utf8(*ret_path, &decoded);
        free(decoded);
        if (r < 0) {
                *msg = r == -ENOMEM   ? "out of memory"
                       : r == -EILSEQ ? "request path is not UTF-8 once percent-decoded"
                                      : "request path has a bad percent-escape or %00";
                return r == -ENOMEM ? 500 : 400;
        }
        return q ? engine_query(st, q + 1, msg) : 0;
}

static void engine_serve(void *userdata, struct http_engine_req *ereq, struct http_resp *resp)
{
        struct http_server *s = userdata;
        struct conn_state st = { .ereq = ereq };
        AUTOFREE char *path = NULL;
        const char *msg = NULL;
        unsigned status = engine_target(&st, ereq->target, &path, &msg);

        if (status) {
                error_resp(s, status, msg, resp);
                args_release(&st);
                return;
        }
        st.req.method = ereq->method;
        st.req.path = path;
        st.req.body = ereq->body;
        ereq->body = BUF_INIT(0);
        if (s->cfg.handler(s->cfg.userdata, &st.req, resp) < 0)
                http_resp_set_json(resp, 500, error_json(s, 500, "internal server error"));
        http_req_params_release(&st.req);
        buf_release(&st.req.body);
        args_release(&st);
}

/* A TLS server on the engine: the source (from PEM if not from files) and the sessions'
 * credentials (http/tls-conn.c). */
static int engine_tls(struct http_server *s, const struct http_server_config *cfg)
{
        int r;

        if (!s->tls) {
                r = tls_source_new_pem(cfg->tls_cert_pem, cfg->tls_key_pem, &s->tls);
                if (r < 0)
                        return r;
                s->tls_static = true;
        }
        return tls_conn_server_new(s->tls, &s->tls_srv);
}

static int engine_start(struct http_server *s, const struct http_server_config *cfg)
{
        struct http_engine_config ec = {
                .address = cfg->address,
                .port = cfg->port,
                .body_max = cfg->body_max,
                .header_timeout = cfg->header_timeout,
                .request_timeout = cfg->request_timeout,
                .max_connections = s->cfg.max_connections,
                .max_per_ip = cfg->max_per_ip,
                .per_ip_exempt = s->cfg.trusted_proxies, /* the server's copy */
                .n_per_ip_exempt = s->cfg.n_trusted_proxies,
                .threads = cfg->threads,
                .serve = engine_serve,
                .refuse = engine_refuse,
                .userdata = s,
                .handshake_timeout = cfg->tls_handshake_timeout,
                .idle_timeout = cfg->connection_timeout,
        };

        if (s->tls_mode) {
                int r = engine_tls(s, cfg);

                if (r < 0)
                        return r;
                ec.transport = &tls_conn_transport;
                ec.transport_userdata = s->tls_srv;
        }
        return http_engine_start(&ec, &s->engine);
}

/* Whether cfg runs on the own engine (TLS on http/tls-conn.c): by default, plain HTTP and TLS
 * alike, unless asked for libmicrohttpd (the field, or MODELPLANE_HTTP_ENGINE=mhd: the way
 * back). */
static bool use_own_engine(const struct http_server_config *cfg)
{
        const char *env;

        if (cfg->engine == HTTP_SERVER_ENGINE_MHD)
                return false;
        if (cfg->engine == HTTP_SERVER_ENGINE_OWN)
                return true;
        env = getenv("MODELPLANE_HTTP_ENGINE"); /* NOLINT(concurrency-mt-unsafe): no setenv */
        return !(env && streq(env, "mhd"));
}

/*
 * gnutls asks for the server's certificate on each handshake. The session pointer is the
 * connection's tls_conn (set when the connection started, see on_connection). The connection
 * keeps a reference on the pair it got until it closes, so a rotation never frees anything a live
 * session uses.
 */
static int tls_retrieve_cert(gnutls_session_t session, const struct gnutls_cert_retr_st *info,
                             gnutls_pcert_st **certs, unsigned int *certs_length,
                             gnutls_ocsp_data_st **ocsp, unsigned int *ocsp_length,
                             gnutls_privkey_t *privkey, unsigned int *flags)
{
        struct sock_ctx *c = gnutls_session_get_ptr(session);

        (void)info;
        if (!c || !c->tls.src ||
            tls_source_pick(c->tls.src, &c->tls.pair, certs, certs_length, privkey) < 0)
                return -1;
        *ocsp = NULL;
        *ocsp_length = 0;
        *flags = 0;
        return 0;
}

/* gnutls: the handshake's Finished message went by; the handshake deadline no longer applies. */
static int on_handshake_finished(gnutls_session_t session, unsigned htype, unsigned when,
                                 unsigned incoming, const gnutls_datum_t *msg)
{
        struct sock_ctx *c = gnutls_session_get_ptr(session);

        (void)htype;
        (void)when;
        (void)incoming;
        (void)msg;
        if (c)
                atomic_store(&c->handshake_done, true);
        return 0;
}

/* Closes c's connection from another thread: its event loop sees EOF and closes it. */
static void cut_locked(struct http_server *s, struct sock_ctx *c, uint64_t *counter)
{
        (void)s;
        c->cut = true;
        (*counter)++;
        (void)shutdown(c->fd, SHUT_RDWR);
}

/*
 * Past max_connections, the oldest connection that has no request in progress is closed, so new
 * clients are served while idle sockets are shed; when all have one, the new connection is.
 */
static void shed_locked(struct http_server *s, struct sock_ctx *newest)
{
        for (struct sock_ctx *c = s->oldest; c; c = c->prev)
                if (!c->cut && !c->busy && c != newest) {
                        cut_locked(s, c, &s->shed_total);
                        return;
                }
        cut_locked(s, newest, &s->shed_total);
}

/* Binds a new TLS connection's session to c: the Finished hook and the ticket key. */
static void tls_conn_bind(struct http_server *s, struct MHD_Connection *conn, struct sock_ctx *c)
{
        const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
        gnutls_session_t ts;

        if (!ci || !ci->tls_session)
                return;
        ts = (gnutls_session_t)ci->tls_session;
        gnutls_session_set_ptr(ts, c);
        gnutls_handshake_set_hook_function(ts, GNUTLS_HANDSHAKE_FINISHED, GNUTLS_HOOK_POST,
                                           on_handshake_finished);
        tls_source_begin(s->tls, ts);
}

/* A new connection: its context, registered with the watchdog (shedding one past the limit). */
static struct sock_ctx *conn_started(struct http_server *s, struct MHD_Connection *conn)
{
        const union MHD_ConnectionInfo *ci;
        struct sock_ctx *c = calloc(1, sizeof(*c));

        if (!c) /* on OOM: no deadline, and a TLS handshake fails */
                return NULL;
        c->fd = -1;
        c->tls.src = s->tls;
        c->since = c->accepted = now_monotonic();
        atomic_init(&c->handshake_done, false);
        if (s->tls_mode)
                tls_conn_bind(s, conn, c);
        ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (ci)
                c->fd = fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 3);
        if (c->fd >= 0 && pthread_mutex_lock(&s->lock) == 0) {
                c->next = s->conns;
                if (s->conns)
                        s->conns->prev = c;
                else
                        s->oldest = c;
                s->conns = c;
                if (++s->n_conns > s->cfg.max_connections)
                        shed_locked(s, c);
                (void)pthread_mutex_unlock(&s->lock);
        }
        return c;
}

/* A closed connection: off the watchdog's list, its duplicate closed, its TLS pair released. */
static void conn_closed(struct http_server *s, struct sock_ctx *c)
{
        if (c->fd >= 0 && pthread_mutex_lock(&s->lock) == 0) {
                if (c->prev)
                        c->prev->next = c->next;
                else if (s->conns == c)
                        s->conns = c->next;
                if (c->next)
                        c->next->prev = c->prev;
                else if (s->oldest == c)
                        s->oldest = c->prev;
                s->n_conns--;
                (void)close(c->fd);
                c->fd = -1;
                (void)pthread_mutex_unlock(&s->lock);
        }
        tls_source_release(s->tls, c->tls.pair);
        free(c);
}

/*
 * Connection start runs in the connection's thread before its handshake: register the connection
 * with the deadline watchdog (and shed an idle one past the limit) and bind a TLS session to it.
 * Close releases the pair the handshake selected and the socket duplicate.
 */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
        struct http_server *s = cls;

        if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
                *socket_context = conn_started(s, conn);
                return;
        }
        if (toe != MHD_CONNECTION_NOTIFY_CLOSED || !*socket_context)
                return;
        conn_closed(s, *socket_context);
        *socket_context = NULL;
}

/*
 * The deadlines, checked four times a second: a TLS handshake not finished tls_handshake_timeout
 * seconds after accept; a request head not complete header_timeout seconds after accept or after
 * the previous response (this also ends idle keep-alive connections); a request that has spent
 * more than request_timeout seconds outside the handler (a client trickling a byte per idle
 * timeout). Such a connection is shut down; its event loop then closes it.
 */
static void *watchdog_thread(void *p)
{
        struct http_server *s = p;
        usec_t req_limit = (usec_t)s->cfg.request_timeout * USEC_PER_SEC;
        usec_t head_limit = (usec_t)s->cfg.header_timeout * USEC_PER_SEC;
        usec_t tls_limit = (usec_t)s->cfg.tls_handshake_timeout * USEC_PER_SEC;

        if (pthread_mutex_lock(&s->lock) != 0)
                return NULL;
        while (!s->stopping) {
                struct timespec ts = usec_to_timespec(now_realtime() + 250 * USEC_PER_MSEC);
                usec_t now = now_monotonic();

                for (struct sock_ctx *c = s->conns; c; c = c->next) {
                        if (c->cut || c->in_handler)
                                continue;
                        if ((s->tls_mode && tls_limit > 0 && !atomic_load(&c->handshake_done) &&
                             now - c->accepted > tls_limit) ||
                            (!c->busy && head_limit > 0 && now - c->since > head_limit) ||
                            (req_limit > 0 && now - c->since > req_limit))
                                cut_locked(s, c, &s->cut_total);
                }
                (void)pthread_cond_timedwait(&s->wake, &s->lock, &ts);
        }
        (void)pthread_mutex_unlock(&s->lock);
        return NULL;
}

size_t http_server_input_buffers(struct http_server *s)
{
        return s && s->engine ? http_engine_input_buffers(s->engine) : 0;
}

uint64_t http_server_shed_count(struct http_server *s)
{
        uint64_t n = 0;

        if (s && s->engine)
                return http_engine_shed_count(s->engine);

        if (s && pthread_mutex_lock(&s->lock) == 0) {
                n = s->shed_total;
                (void)pthread_mutex_unlock(&s->lock);
        }
        return n;
}

uint64_t http_server_deadline_cuts(struct http_server *s)
{
        uint64_t n = 0;

        if (s && s->engine)
                return http_engine_deadline_cuts(s->engine);

        if (s && pthread_mutex_lock(&s->lock) == 0) {
                n = s->cut_total;
                (void)pthread_mutex_unlock(&s->lock);
        }
        return n;
}

uint64_t http_server_tls_generation(struct http_server *s)
{
        return s->tls_static ? 0 : tls_source_generation(s->tls);
}

/* MHD_OPTION_HTTPS_CERT_CALLBACK2 in an option array: the function as ptr_value. */
static void *cert_callback_ptr(void)
{
        gnutls_certificate_retrieve_function3 *fn = tls_retrieve_cert;
        void *p;

        _Static_assert(sizeof(p) == sizeof(fn), "function and object pointers differ in size");
        memcpy(&p, &fn, sizeof(p));
        return p;
}

/*
 * Every connection takes two descriptors (the socket and the watchdog's duplicate): raise the
 * soft limit towards the hard one so that max_connections fit; where they cannot, lower
 * max_connections to what fits.
 */
static void raise_nofile(unsigned *max_connections)
{
        rlim_t want = (rlim_t)*max_connections * 4U + 256U;
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        if (rl.rlim_cur < want) {
                rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want
                                                                                 : rl.rlim_max;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
                if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                        return;
        }
        if (rl.rlim_cur < want)
                *max_connections = rl.rlim_cur > 512U ? (unsigned)((rl.rlim_cur - 256U) / 4U) : 64U;
}

/* What http_server_start() refuses: a missing handler, half a TLS pair, two TLS sources, a
 * request deadline not above the idle timeout. */
static int config_check(const struct http_server_config *cfg)
{
        if (!cfg || !cfg->handler || cfg->body_max == 0 || cfg->max_connections == 0)
                return -EINVAL;
        if (cfg->n_trusted_proxies > 0 && !cfg->trusted_proxies)
                return -EINVAL;
        if (!!cfg->tls_cert_pem != !!cfg->tls_key_pem)
                return -EINVAL;
        if (!!cfg->tls_cert_file != !!cfg->tls_key_file)
                return -EINVAL;
        if (cfg->tls_cert_pem && cfg->tls_cert_file)
                return -EINVAL;
        /* the idle timeout must end idle keep-alive connections before the deadline would */
        if (cfg->request_timeout > 0 && cfg->connection_timeout > 0 &&
            cfg->request_timeout <= cfg->connection_timeout)
                return -EINVAL;
        return 0;
}

/* The listening address: IPv6 when it has a ':' (and MHD_USE_IPv6 in *flags), else IPv4. */
static int listen_address(const struct http_server_config *cfg, struct sockaddr_storage *ss,
                          unsigned *flags)
{
        if (cfg->address && strchr(cfg->address, ':')) {
                struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

                a6->sin6_family = AF_INET6;
                a6->sin6_port = htons(cfg->port);
                if (inet_pton(AF_INET6, cfg->address, &a6->sin6_addr) != 1)
                        return -EINVAL;
                *flags |= MHD_USE_IPv6;
        } else {
                struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

                a4->sin_family = AF_INET;
                a4->sin_port = htons(cfg->port);
                if (inet_pton(AF_INET, cfg->address ? cfg->address : "0.0.0.0", &a4->sin_addr) != 1)
                        return -EINVAL;
        }
        return 0;
}

/* The server before its daemon: the configuration without the borrowed pointers, the lock, the
 * TLS source (its files loaded), the descriptor limit raised. */
static int server_new(const struct http_server_config *cfg, struct http_server **ret)
{
        struct http_server *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->cfg = *cfg;
        s->cfg.address = NULL;
        s->cfg.tls_cert_pem = NULL;
        s->cfg.tls_key_pem = NULL;
        s->cfg.tls_cert_file = NULL;
        s->cfg.tls_key_file = NULL;
        s->cfg.trusted_proxies = NULL;
        if (cfg->n_trusted_proxies > 0) {
                s->trusted = calloc(cfg->n_trusted_proxies, sizeof(*s->trusted));
                if (!s->trusted) {
                        free(s);
                        return -ENOMEM;
                }
                memcpy(s->trusted, cfg->trusted_proxies,
                       cfg->n_trusted_proxies * sizeof(*s->trusted));
                s->cfg.trusted_proxies = s->trusted;
        }
        if (pthread_mutex_init(&s->lock, NULL) != 0) {
                free(s->trusted);
                free(s);
                return -ENOMEM;
        }
        if (pthread_cond_init(&s->wake, NULL) != 0) {
                (void)pthread_mutex_destroy(&s->lock);
                free(s->trusted);
                free(s);
                return -ENOMEM;
        }
        if (cfg->tls_cert_file) {
                int r = tls_source_new(cfg->tls_cert_file, cfg->tls_key_file, &s->tls);

                if (r < 0) {
                        (void)http_server_free(s);
                        return r;
                }
        }
        s->tls_mode = cfg->tls_cert_file || cfg->tls_cert_pem;
        raise_nofile(&s->cfg.max_connections);
        *ret = s;
        return 0;
}

#define DAEMON_OPTIONS_MAX 24

/*
 * libmicrohttpd's options for s (MHD_OPTION_ARRAY: numbers and the callback of a (callback,
 * closure) pair go in value, a lone pointer in ptr_value), ending with MHD_OPTION_END; TLS adds
 * MHD_USE_TLS to *flags.
 */
static void daemon_options(struct http_server *s, const struct http_server_config *cfg,
                           struct sockaddr_storage *ss, struct MHD_OptionItem *opts,
                           unsigned *flags)
{
        size_t n = 0;

#define OPT(o, v, p) (opts[n++] = (struct MHD_OptionItem){ (o), (intptr_t)(v), (p) })
        OPT(MHD_OPTION_SOCK_ADDR, 0, ss);
        OPT(MHD_OPTION_THREAD_POOL_SIZE, cfg->threads ? cfg->threads : 1, NULL);
        OPT(MHD_OPTION_CONNECTION_TIMEOUT, cfg->connection_timeout, NULL);
        /* the hard cap; max_connections itself is kept by shedding (on_connection), which needs
         * room above it, and libmicrohttpd splits its cap evenly over the pool's threads */
        OPT(MHD_OPTION_CONNECTION_LIMIT, 2U * s->cfg.max_connections + 16U * cfg->threads, NULL);
        if (cfg->max_per_ip)
                OPT(MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->max_per_ip, NULL);
        OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONNECTION_MEMORY, NULL);
        OPT(MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, NULL);
        OPT(MHD_OPTION_URI_LOG_CALLBACK, on_uri, s);
        OPT(MHD_OPTION_UNESCAPE_CALLBACK, unescape_none, s);
        OPT(MHD_OPTION_NOTIFY_COMPLETED, on_completed, s);
        OPT(MHD_OPTION_NOTIFY_CONNECTION, on_connection, s);
        if (cfg->tls_cert_file) {
                *flags |= MHD_USE_TLS;
                /* a one-pointer option: the function goes in ptr_value (POSIX lets it pass as void *) */
                OPT(MHD_OPTION_HTTPS_CERT_CALLBACK2, 0, cert_callback_ptr());
                OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)(uintptr_t)TLS_PRIORITIES);
        } else if (cfg->tls_cert_pem) {
                *flags |= MHD_USE_TLS;
                OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)(uintptr_t)cfg->tls_cert_pem);
                OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)(uintptr_t)cfg->tls_key_pem);
                OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)(uintptr_t)TLS_PRIORITIES);
        }
        OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
}

int http_server_start(const struct http_server_config *cfg, struct http_server **ret)
{
        struct sockaddr_storage ss = { 0 };
        struct MHD_OptionItem opts[DAEMON_OPTIONS_MAX];
        unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD;
        const union MHD_DaemonInfo *info;
        struct http_server *s = NULL;
        int r;

        r = config_check(cfg);
        if (r < 0)
                return r;
        r = listen_address(cfg, &ss, &flags);
        if (r < 0)
                return r;
        r = server_new(cfg, &s);
        if (r < 0)
                return r;
        if (use_own_engine(cfg)) {
                r = engine_start(s, cfg);
                if (r < 0) {
                        (void)http_server_free(s);
                        return r;
                }
                s->port = http_engine_port(s->engine);
                *ret = s;
                return 0;
        }
        /*
         * TLS servers poll(2) instead. In libmicrohttpd 0.9.75's epoll loop a connection whose
         * handshake waits for the client (gnutls_handshake() -> GNUTLS_E_AGAIN) keeps its
         * edge-triggered "read ready" mark, which only a record read clears, so it stays on the
         * ready list and the thread calls epoll_wait() with timeout 0 and retries the handshake
         * until the client's Finished arrives: ~1 ms of CPU per handshake, and every stalled
         * handshake spun until its deadline. poll(2) waits for the bytes. Plain servers keep epoll.
         */
        if (s->tls_mode)
                flags = (flags & ~(unsigned)MHD_USE_EPOLL_INTERNAL_THREAD) |
                        MHD_USE_POLL_INTERNAL_THREAD;
        daemon_options(s, cfg, &ss, opts, &flags);
        s->daemon = MHD_start_daemon(flags, cfg->port, NULL, NULL, on_request, s, MHD_OPTION_ARRAY,
                                     opts, MHD_OPTION_END);
        if (!s->daemon) {
                (void)http_server_free(s);
                return -EADDRINUSE;
        }
        r = -pthread_create(&s->watchdog, NULL, watchdog_thread, s);
        if (r < 0) {
                (void)http_server_free(s);
                return r;
        }
        s->watchdog_running = true;
        info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
        s->port = info ? info->port : cfg->port;
        *ret = s;
        return 0;
}

struct http_server *http_server_free(struct http_server *s)
{
        if (!s)
                return NULL;
        if (s->daemon)
                MHD_stop_daemon(s->daemon); /* every connection's close notification has run */
        s->engine = http_engine_free(s->engine);
        s->tls_srv = tls_conn_server_free(s->tls_srv);
        if (s->watchdog_running && pthread_mutex_lock(&s->lock) == 0) {
                s->stopping = true;
                (void)pthread_cond_signal(&s->wake);
                (void)pthread_mutex_unlock(&s->lock);
                (void)pthread_join(s->watchdog, NULL);
        }
        (void)pthread_cond_destroy(&s->wake);
        (void)pthread_mutex_destroy(&s->lock);
        tls_source_free(s->tls);
        free(s->trusted);
        free(s);
        return NULL;
}

uint16_t http_server_port(const struct http_server *s)
{
        return s->port;
}
