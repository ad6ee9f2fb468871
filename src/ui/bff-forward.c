/* SPDX-License-Identifier: Apache-2.0 */
/* modelplane ui's forwarding to the model registry and the catalog (bff-internal.h). */
#include "ui/bff-internal.h"

#include <errno.h>
#include <string.h>

#include "json/json-util.h"
#include "registry-client/client.h"
#include "ui/views.h"

/* the catalog's two APIs, models and MCP servers, under one base: each route names its own */
#define CATALOG_API_PATH "/api"
#define REG_PAGE_DEFAULT "100"
#define REG_PAGE_MAX     1000U
#define FILTER_QUERY_MAX ((size_t)16 * 1024)

struct query_ctx {
        const char *const *allowed;
        struct buf *b;
        const char *bad; /* the parameter over its limit */
};

static int forward_query(void *ud, const char *key, const char *value)
{
        struct query_ctx *q = ud;

        for (const char *const *a = q->allowed; *a; a++)
                if (streq(*a, key)) {
                        if (streq(key, "filterQuery") && strlen(value) > FILTER_QUERY_MAX) {
                                q->bad = key;
                                return -E2BIG;
                        }
                        return ui_query_add(q->b, key, value);
                }
        return 0;
}

/* Appends s percent-encoded as a path segment ('/' kept when keep_slash). */
static int add_segment(struct buf *b, const char *s, bool keep_slash)
{
        static const char hex[] = "0123456789ABCDEF";

        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                             (*p >= '0' && *p <= '9') || strchr("-._~", *p) ||
                             (keep_slash && *p == '/');
                char e[3] = { '%', hex[*p >> 4], hex[*p & 15] };
                int r = plain ? buf_append(b, (const char *)p, 1) : buf_append(b, e, 3);

                if (r < 0)
                        return r;
        }
        return 0;
}

static int upstream_path(const struct call *c, const struct api_route *rt, struct buf *b)
{
        const char *p = rt->path;

        while (*p) {
                const char *o = strchr(p, '{'), *e, *v;
                char name[32];
                size_t n;
                int r;

                if (!o)
                        return buf_puts(b, p);
                r = buf_append(b, p, (size_t)(o - p));
                if (r < 0)
                        return r;
                e = strchr(o, '}');
                n = (size_t)(e - o - 1);
                if (n >= sizeof(name))
                        return -EINVAL;
                memcpy(name, o + 1, n);
                name[n] = '\0';
                v = http_req_param(c->req, name);
                if (!v)
                        return -EINVAL;
                r = add_segment(b, v, streq(name, "name"));
                if (r < 0)
                        return r;
                p = e + 1;
        }
        return 0;
}

/* A client of upstream up at url: from the pool when pooled (the configured registry, the
 * catalog), else made for this request (a discovered registry); NULL on OOM. */
static struct mr_client *upstream_get(struct ui_server *s, enum upstream up, const char *url,
                                      bool pooled)
{
        struct mr_client *m = pooled ? bff_pool_get(&s->up[up]) : NULL;

        if (!m) {
                struct mr_client_config mc = {
                        .base_url = url,
                        .api_path = up == UP_CATALOG ? CATALOG_API_PATH : NULL,
                        .timeout_ms = s->timeout_ms,
                        .ca_file = s->ca_file,
                };

                if (mr_client_new(&mc, &m) < 0)
                        return NULL;
        }
        return m;
}

static void upstream_put(struct ui_server *s, enum upstream up, struct mr_client *m, bool pooled)
{
        if (pooled)
                bff_pool_put(&s->up[up], m);
        else
                (void)mr_client_free(m);
}

/* Whether the registry reg is the configured one (whose clients are pooled). */
static bool reg_pooled(const struct ui_server *s, const struct ui_registry *reg)
{
        return reg == &s->default_reg || streq(reg->url, s->default_reg.url);
}

static const char *const upstream_names[] = { "model registry", "model catalog" };
static const char *const upstream_sources[] = { "registry", "catalog" };

/* The upstream path and query of a forwarded request; 1 when a refusal is already written. */
static int forward_path(struct call *c, const struct api_route *rt, struct buf *path)
{
        struct query_ctx q = { .allowed = rt->query, .b = path };
        unsigned ps;
        int r;

        r = upstream_path(c, rt, path);
        if (r >= 0)
                r = http_req_query_foreach(c->req, forward_query, &q);
        if (r == -E2BIG && q.bad)
                return bff_refused(bff_reply_error(c->resp, 400, "ui",
                                                   "%s is longer than %zu bytes", q.bad,
                                                   FILTER_QUERY_MAX));
        if (r == -E2BIG)
                return bff_refused(bff_reply_error(c->resp, 414, "ui", "query too long"));
        if (r < 0)
                return r;
        if (!(rt->flags & F_LIST) || !streq(c->req->method, "GET"))
                return 0;
        if (bff_query_uint(c, "pageSize", 100, REG_PAGE_MAX, &ps) < 0)
                return 1;
        if (!http_req_query(c->req, "pageSize") &&
            ui_query_add(path, "pageSize", REG_PAGE_DEFAULT) < 0)
                return -ENOMEM;
        return 0;
}

int bff_body_data(struct call *c, json_t **in, json_t **ret_data)
{
        struct error_detail e = { 0 };
        json_t *data;

        *ret_data = NULL;
        if (streq(c->req->method, "GET"))
                return 0;
        if (json_parse_bounded(c->req->body.p, c->req->body.len, in, &e) < 0)
                return bff_refused(bff_reply_error(c->resp, 400, "ui",
                                                   "request body is not JSON: %s", e.message));
        data = json_object_get(*in, "data");
        if (!json_is_object(data))
                return bff_refused(bff_reply_error(c->resp, 400, "ui",
                                                   "request body must be {\"data\": {...}}"));
        *ret_data = data;
        return 0;
}

/* The reply to a failed upstream call r with err. */
static int forward_failure(struct call *c, enum upstream up, const char *url, int r,
                           const struct error_detail *err)
{
        unsigned status = ui_upstream_status(r, err->status);
        const char *src = upstream_sources[up];

        if (err->status >= 400 && err->status < 500)
                return bff_reply_error(c->resp, status, src, "%s", err->message);
        if (err->status == 0)
                return bff_reply_error(c->resp, status, src, "%s at %s is unavailable: %s",
                                       upstream_names[up], url,
                                       err->message[0] ? err->message : ui_errno_text(r));
        return bff_reply_error(c->resp, status, src, "%s at %s answered %d: %s", upstream_names[up],
                               url, err->status, err->message);
}

/* The upstream of a forwarded route, authorized for the caller: its URL; NULL after a refusal
 * (*ret_r: what writing it returned). */
static const char *forward_target(struct call *c, const struct api_route *rt,
                                  struct ui_registry *reg, int *ret_r)
{
        struct ui_server *s = c->s;
        int r;

        if (rt->up == UP_REGISTRY)
                r = bff_registry_resolve(c, http_req_param(c->req, "mr"), reg);
        else
                r = bff_authorize(c, rt->up);
        *ret_r = r < 0 ? r : 0;
        if (r != 0)
                return NULL;
        if (rt->up == UP_REGISTRY && reg->url[0])
                return reg->url;
        if (rt->up == UP_CATALOG && s->catalog_url)
                return s->catalog_url;
        *ret_r = bff_reply_error(c->resp, 503, upstream_sources[rt->up],
                                 "no %s configured for the ui server", upstream_names[rt->up]);
        return NULL;
}

int bff_forward(struct call *c, const struct api_route *rt)
{
        struct ui_server *s = c->s;
        CLEANUP(buf_releasep) struct buf path = BUF_INIT((size_t)16 * 1024 + 4096);
        CLEANUP(ui_json_decrefp) json_t *in = NULL;
        CLEANUP(ui_json_decrefp) json_t *out = NULL;
        struct ui_registry reg;
        struct error_detail err = { 0 };
        struct mr_client *m;
        json_t *data = NULL;
        const char *url;
        bool pooled;
        int r;

        url = forward_target(c, rt, &reg, &r);
        if (!url)
                return r;
        r = forward_path(c, rt, &path);
        if (r == 0)
                r = bff_body_data(c, &in, &data);
        if (r == 0 && data && (rt->flags & (F_GUARD_MODEL | F_GUARD_VERSION)))
                r = bff_archive_guard(c, rt, data);
        if (r != 0)
                return r < 0 ? r : 0;
        pooled = rt->up == UP_CATALOG || reg_pooled(s, &reg);
        m = upstream_get(s, rt->up, url, pooled);
        if (!m)
                return -ENOMEM;
        r = mr_client_call(m, c->req->method, buf_str(&path), data, &out, &err);
        upstream_put(s, rt->up, m, pooled);
        if (r < 0)
                return forward_failure(c, rt->up, url, r, &err);
        return bff_reply_data(c, (unsigned)r, TAKE_PTR(out));
}

int bff_registry_get(struct call *c, const char *path, json_t **ret)
{
        struct ui_server *s = c->s;
        const struct ui_registry *reg = c->reg ? c->reg : &s->default_reg;
        struct error_detail err = { 0 };
        struct mr_client *m;
        bool pooled = reg_pooled(s, reg);
        int r;

        if (!reg->url[0])
                return bff_refused(bff_reply_error(c->resp, 503, "registry",
                                                   "no model registry configured for the ui "
                                                   "server"));
        m = upstream_get(s, UP_REGISTRY, reg->url, pooled);
        if (!m)
                return -ENOMEM;
        r = mr_client_call(m, "GET", path, NULL, ret, &err);
        upstream_put(s, UP_REGISTRY, m, pooled);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bff_refused(forward_failure(c, UP_REGISTRY, reg->url, r, &err));
        return 0;
}

int bff_catalog_post(struct call *c, const char *path, const char *content_type, const char *body,
                     size_t len)
{
        struct ui_server *s = c->s;
        CLEANUP(ui_json_decrefp) json_t *out = NULL;
        struct error_detail err = { 0 };
        struct mr_client *m;
        int r;

        if (!s->catalog_url)
                return bff_reply_error(c->resp, 503, "catalog",
                                       "no model catalog configured for the ui server");
        m = upstream_get(s, UP_CATALOG, s->catalog_url, true);
        if (!m)
                return -ENOMEM;
        r = mr_client_call_raw(m, "POST", path, content_type, body, len, &out, &err);
        upstream_put(s, UP_CATALOG, m, true);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return forward_failure(c, UP_CATALOG, s->catalog_url, r, &err);
        return bff_reply_data(c, (unsigned)r, TAKE_PTR(out));
}
