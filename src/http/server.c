/* SPDX-License-Identifier: Apache-2.0 */
#include "http/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "http/router.h"

struct http_server {
        struct MHD_Daemon *daemon;
        struct http_server_config cfg; /* address and PEM pointers are not used after start */
        uint16_t port;
};

/* Per-connection request state, created on the first callback and freed on completion. */
struct conn_state {
        struct http_req req;
        bool too_large;
        bool responded;
};

const char *http_req_query(const struct http_req *req, const char *key)
{
        return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *http_req_header(const struct http_req *req, const char *name)
{
        return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

struct foreach_ctx {
        int (*fn)(void *userdata, const char *key, const char *value);
        void *userdata;
        int r;
};

static enum MHD_Result foreach_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
        struct foreach_ctx *ctx = cls;

        (void)kind;
        ctx->r = ctx->fn(ctx->userdata, key, value ? value : "");
        return ctx->r < 0 ? MHD_NO : MHD_YES;
}

int http_req_query_foreach(const struct http_req *req,
                           int (*fn)(void *userdata, const char *key, const char *value),
                           void *userdata)
{
        struct foreach_ctx ctx = { .fn = fn, .userdata = userdata, .r = 0 };

        (void)MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, foreach_arg, &ctx);
        return ctx.r < 0 ? ctx.r : 0;
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

static void resp_release(struct http_resp *resp)
{
        free(resp->content_type);
        buf_release(&resp->body);
        for (size_t i = 0; i < resp->n_headers; i++) {
                free(resp->headers[i].name);
                free(resp->headers[i].value);
        }
        free(resp->headers);
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
                                      resp->content_type ? resp->content_type
                                                         : "application/json");
        for (size_t i = 0; i < resp->n_headers; i++)
                (void)MHD_add_response_header(r, resp->headers[i].name, resp->headers[i].value);
        ret = MHD_queue_response(conn, resp->status ? resp->status : 500, r);
        MHD_destroy_response(r);
        return ret;
}

static enum MHD_Result send_simple(struct MHD_Connection *conn, unsigned status, const char *msg)
{
        struct http_resp resp = { .status = status, .body = BUF_INIT(HTTP_RESPONSE_MAX) };
        json_t *body = json_pack("{s:s,s:i}", "message", msg, "code", (int)status);
        enum MHD_Result r;

        http_resp_set_json(&resp, status, body);
        r = send_resp(conn, &resp);
        resp_release(&resp);
        return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
        struct http_server *s = cls;
        struct conn_state *st = *con_cls;
        struct http_resp resp = { 0 };
        enum MHD_Result ret;
        int r;

        (void)version;
        if (!st) {
                const char *cl;
                uint64_t clen;

                st = calloc(1, sizeof(*st));
                if (!st)
                        return MHD_NO;
                buf_init(&st->req.body, s->cfg.body_max + 1);
                st->req.conn = conn;
                st->req.method = method;
                st->req.path = url;
                *con_cls = st;
                cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
                if (cl && sscanf(cl, "%" SCNu64, &clen) == 1 && clen > s->cfg.body_max) {
                        st->too_large = true;
                        st->responded = true;
                        return send_simple(conn, MHD_HTTP_CONTENT_TOO_LARGE,
                                           "request body too large");
                }
                return MHD_YES;
        }

        if (*upload_data_size > 0) {
                if (!st->too_large &&
                    buf_append(&st->req.body, upload_data, *upload_data_size) < 0) {
                        st->too_large = true;
                        buf_release(&st->req.body);
                }
                *upload_data_size = 0;
                if (st->too_large && !st->responded) {
                        st->responded = true;
                        return send_simple(conn, MHD_HTTP_CONTENT_TOO_LARGE,
                                           "request body too large");
                }
                return MHD_YES;
        }
        if (st->responded)
                return MHD_YES;
        st->responded = true;

        buf_init(&resp.body, HTTP_RESPONSE_MAX);
        resp.status = 200;
        r = s->cfg.handler(s->cfg.userdata, &st->req, &resp);
        if (r < 0)
                http_resp_set_json(&resp, 500,
                                   json_pack("{s:s,s:i}", "message", "internal server error",
                                             "code", 500));
        ret = send_resp(conn, &resp);
        resp_release(&resp);
        return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
        struct conn_state *st = *con_cls;

        (void)cls;
        (void)conn;
        (void)toe;
        if (!st)
                return;
        http_req_params_release(&st->req);
        buf_release(&st->req.body);
        free(st);
        *con_cls = NULL;
}

int http_server_start(const struct http_server_config *cfg, struct http_server **ret)
{
        struct sockaddr_storage ss = { 0 };
        socklen_t sl;
        const union MHD_DaemonInfo *info;
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                         MHD_USE_POLL;
        struct http_server *s;

        if (!cfg || !cfg->handler || cfg->body_max == 0)
                return -EINVAL;
        if (!!cfg->tls_cert_pem != !!cfg->tls_key_pem)
                return -EINVAL;

        if (cfg->address && strchr(cfg->address, ':')) {
                struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
                a6->sin6_family = AF_INET6;
                a6->sin6_port = htons(cfg->port);
                if (inet_pton(AF_INET6, cfg->address, &a6->sin6_addr) != 1)
                        return -EINVAL;
                sl = sizeof(*a6);
                flags |= MHD_USE_IPv6;
        } else {
                struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
                a4->sin_family = AF_INET;
                a4->sin_port = htons(cfg->port);
                if (inet_pton(AF_INET, cfg->address ? cfg->address : "0.0.0.0", &a4->sin_addr) !=
                    1)
                        return -EINVAL;
                sl = sizeof(*a4);
        }
        (void)sl;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->cfg = *cfg;
        s->cfg.address = NULL;
        s->cfg.tls_cert_pem = NULL;
        s->cfg.tls_key_pem = NULL;

        if (cfg->tls_cert_pem) {
                flags |= MHD_USE_TLS;
                s->daemon = MHD_start_daemon(
                        flags, cfg->port, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, &ss,
                        MHD_OPTION_CONNECTION_TIMEOUT, cfg->connection_timeout,
                        MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections,
                        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_HTTPS_MEM_CERT,
                        cfg->tls_cert_pem, MHD_OPTION_HTTPS_MEM_KEY, cfg->tls_key_pem,
                        MHD_OPTION_HTTPS_PRIORITIES,
                        "NORMAL:-VERS-SSL3.0:-VERS-TLS1.0:-VERS-TLS1.1", MHD_OPTION_END);
        } else
                s->daemon = MHD_start_daemon(flags, cfg->port, NULL, NULL, on_request, s,
                                             MHD_OPTION_SOCK_ADDR, &ss,
                                             MHD_OPTION_CONNECTION_TIMEOUT,
                                             cfg->connection_timeout, MHD_OPTION_CONNECTION_LIMIT,
                                             cfg->max_connections, MHD_OPTION_NOTIFY_COMPLETED,
                                             on_completed, s, MHD_OPTION_END);
        if (!s->daemon) {
                free(s);
                return -EADDRINUSE;
        }
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
                MHD_stop_daemon(s->daemon);
        free(s);
        return NULL;
}

uint16_t http_server_port(const struct http_server *s)
{
        return s->port;
}
