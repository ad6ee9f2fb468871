/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP server's API (server.h) on the connection engine (http/engine.c over http1.c, TLS on
 * http/tls-conn.c): the request target's checks and decode-once query, the accessors, the
 * response builders, the refusals in the caller's error shape, and the TLS source. The engine
 * does the rest (framing, limits, deadlines, shedding).
 */
#include "http/server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "http/engine.h"
#include "http/errors.h"
#include "http/router.h"
#include "http/tls-conn.h"
#include "http/tls-source.h"
#include "util/string-util.h"

struct http_server {
        struct http_engine *engine;
        struct http_server_config cfg; /* address, PEM and path pointers are not used after start */
        uint16_t port;
        struct tls_source *tls;          /* owned; NULL for plain HTTP */
        bool tls_static;                 /* s->tls is from PEM */
        bool tls_mode;                   /* HTTPS, from files or PEM */
        struct tls_conn_server *tls_srv; /* owned; the engine's TLS sessions */
        struct cidr *trusted;            /* owned copy of cfg->trusted_proxies */
};

/* One query argument, decoded once; value NULL for a key without '='. */
struct http_arg {
        char *key;
        char *value;
};

/* Per-request state, from the engine's request to the handler's return. */
struct conn_state {
        struct http_req req;
        const struct http_engine_req *ereq; /* borrowed; the engine's request */
        struct http_arg *args;
        size_t n_args;
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

        return st->ereq ? http_engine_req_field(st->ereq, name) : NULL;
}

const struct sockaddr *http_req_client_address(const struct http_req *req)
{
        const struct conn_state *st = req_state(req);

        return st->ereq ? st->ereq->peer : NULL;
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
        if (status == 413 && s->cfg.too_large_json)
                http_resp_set_text(resp, status, NULL, s->cfg.too_large_json);
        else
                http_resp_set_json(resp, status, error_json(s, status, msg));
        /* a refused request may have left a body unread: never reuse the connection */
        if (status != 200 && http_resp_add_header(resp, "Connection", "close") < 0)
                resp->status = 500;
}

/* Percent-decodes s once, refusing bad escapes, %00 and anything that is not UTF-8. */
static int decode_utf8(const char *s, char **ret)
{
        char *d = NULL;
        int r = percent_decode(s, strlen(s), &d);

        if (r < 0)
                return r;
        if (!http_utf8_valid(d, strlen(d))) {
                free(d);
                return -EILSEQ;
        }
        *ret = d;
        return 0;
}

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

static void engine_refuse(void *userdata, unsigned status, const char *message,
                          struct http_resp *resp)
{
        error_resp(userdata, status, message, resp);
}

/* Form encoding's '+' is a space in query arguments, then decoded. */
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

/* The target's path (into *ret_path, owned) and query, each checked and decoded once. */
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

/* A TLS server: the source (from PEM if not from files) and the sessions' credentials
 * (http/tls-conn.c). */
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
                .clock = cfg->clock,
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

size_t http_server_input_buffers(struct http_server *s)
{
        return s && s->engine ? http_engine_input_buffers(s->engine) : 0;
}

uint64_t http_server_shed_count(struct http_server *s)
{
        return s && s->engine ? http_engine_shed_count(s->engine) : 0;
}

uint64_t http_server_deadline_cuts(struct http_server *s)
{
        return s && s->engine ? http_engine_deadline_cuts(s->engine) : 0;
}

uint64_t http_server_tls_generation(struct http_server *s)
{
        return s->tls_static ? 0 : tls_source_generation(s->tls);
}

/*
 * Every connection takes a descriptor: raise the soft limit towards the hard one so that
 * max_connections fit with room to spare (connections accepted before shedding, the process's
 * other files); where they cannot, lower max_connections to what fits.
 */
static void raise_nofile(unsigned *max_connections)
{
        rlim_t want = (rlim_t)*max_connections * 2U + 256U;
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
                *max_connections = rl.rlim_cur > 512U ? (unsigned)((rl.rlim_cur - 256U) / 2U) : 64U;
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

/* The server before its engine: the configuration without the borrowed pointers, the TLS
 * source from files (loaded), the descriptor limit raised. */
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

int http_server_start(const struct http_server_config *cfg, struct http_server **ret)
{
        struct http_server *s = NULL;
        int r;

        r = config_check(cfg);
        if (r < 0)
                return r;
        r = server_new(cfg, &s);
        if (r < 0)
                return r;
        r = engine_start(s, cfg);
        if (r < 0) {
                (void)http_server_free(s);
                return r;
        }
        s->port = http_engine_port(s->engine);
        *ret = s;
        return 0;
}

struct http_server *http_server_free(struct http_server *s)
{
        if (!s)
                return NULL;
        s->engine = http_engine_free(s->engine); /* every connection closed, every handler done */
        s->tls_srv = tls_conn_server_free(s->tls_srv);
        tls_source_free(s->tls);
        free(s->trusted);
        free(s);
        return NULL;
}

uint16_t http_server_port(const struct http_server *s)
{
        return s->port;
}
