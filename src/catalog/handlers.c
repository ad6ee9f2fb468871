/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/handlers.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "catalog/index.h"
#include "catalog/mcp-handlers.h"
#include "catalog/preview.h"
#include "catalog/reply.h"
#include "http/router.h"
#include "util/parse-util.h"

/* ---- common query parameters ---- */

struct qcheck {
        const char *bad_key;
};

static int check_nul(void *userdata, const char *key, const char *value)
{
        struct qcheck *c = userdata;

        if (strstr(value, "\\u0000") || strstr(key, "\\u0000")) {
                c->bad_key = key;
                return -EINVAL;
        }
        return 0;
}

/* ---- GET /sources ---- */

static int handle_sources(struct catalog__ctx *c, struct http_req *req, struct http_resp *resp)
{
        struct catalog_source_query q = { 0 };
        const char *ob = http_req_query(req, "orderBy");
        json_t *out = NULL;
        int r;

        if (catalog__parse_page(req, &q.page, resp) < 0)
                return 0;
        if (ob && ob[0] && !streq(ob, "ID") && !streq(ob, "NAME"))
                return catalog__reply_error(resp, 400,
                                            "unsupported order by field '%s': bad request", ob);
        q.order_by_name = ob && streq(ob, "NAME");
        q.name = http_req_query(req, "name");
        q.asset_type = http_req_query(req, "assetType");
        if (q.asset_type && q.asset_type[0] == '\0')
                q.asset_type = NULL;
        r = catalog_index_list_sources(c->idx, &q, &out);
        if (r < 0)
                return catalog__reply_errno(resp, r);
        return catalog__reply_json(resp, out);
}

/* ---- GET /models ---- */

/* A comma-separated selector into *ret; answers 400 "too many <what>" (or 500) itself. */
static int parse_csv_param(const char *v, const char *what, char ***ret, struct http_resp *resp)
{
        int r = catalog__split_csv(v, ret);

        if (r == -E2BIG) {
                catalog__reply_error(resp, 400, "too many %s: bad request", what);
                return -EINVAL;
        }
        if (r < 0) {
                catalog__reply_errno(resp, r);
                return r;
        }
        return 0;
}

/*
 * source and sourceLabel (not both; comma-separated) and recommendations (a boolean, checked
 * only) of GET /models. Answers 400 itself and returns < 0.
 */
static int parse_model_selection(const struct http_req *req, struct catalog_model_query *q,
                                 char ***sources, char ***labels, struct http_resp *resp)
{
        const char *src = http_req_query(req, "source");
        const char *lbl = http_req_query(req, "sourceLabel");
        const char *rec = http_req_query(req, "recommendations");
        bool b;

        if (src && src[0] && lbl && lbl[0]) {
                catalog__reply_error(resp, 400,
                                     "source and sourceLabel cannot be used together: bad request");
                return -EINVAL;
        }
        if (src && src[0]) {
                if (parse_csv_param(src, "sources", sources, resp) < 0)
                        return -EINVAL;
                q->sources = *sources;
        }
        if (lbl && lbl[0]) {
                if (parse_csv_param(lbl, "labels", labels, resp) < 0)
                        return -EINVAL;
                q->source_labels = *labels;
        }
        if (rec && rec[0] && parse_boolean(rec, &b) < 0) {
                catalog__reply_error(resp, 400, "invalid recommendations '%s': bad request", rec);
                return -EINVAL;
        }
        return 0;
}

static int handle_models(struct catalog__ctx *c, struct http_req *req, struct http_resp *resp)
{
        struct catalog_model_query q = { 0 };
        CLEANUP(catalog_strv_freep) char **sources = NULL, **labels = NULL;
        CLEANUP(filterq_freep) struct filterq_node *filter = NULL;
        CLEANUP(buf_release) struct buf text = BUF_INIT((size_t)HTTP_RESPONSE_MAX);
        AUTOFREE char *order_prop = NULL;
        const char *ob = http_req_query(req, "orderBy");
        struct error_detail err = { 0 };
        int r;

        if (catalog__parse_page(req, &q.page, resp) < 0 ||
            parse_model_selection(req, &q, &sources, &labels, resp) < 0 ||
            catalog__parse_filter(http_req_query(req, "filterQuery"), true, &filter, resp) < 0)
                return 0;
        q.filter = filter;
        r = catalog_order_parse_models(ob, &q.order, &order_prop, &q.order_suffix);
        if (r == -ENOMEM)
                return catalog__reply_errno(resp, r);
        if (r < 0)
                return catalog__reply_error(resp, 400,
                                            "unsupported order by field '%s': bad request", ob);
        q.order_property = order_prop;
        q.q = http_req_query(req, "q");
        r = catalog_index_list_models_text(c->idx, &q, &text, &err);
        if (r < 0)
                return catalog__reply_query_error(resp, r, err.message);
        catalog__reply_text_json(resp, &text);
        return 0;
}

/* ---- GET /sources/{source_id}/models/{model_name+}[/artifacts[/performance]] ---- */

struct strv_builder {
        char **v;
        size_t n;
        int r;
};

static void strv_builder_release(struct strv_builder *b)
{
        catalog_strv_free(b->v);
        *b = (struct strv_builder){ 0 };
}

static int collect_artifact_types(void *userdata, const char *key, const char *value)
{
        struct strv_builder *b = userdata;
        char **nv;

        if (!streq(key, "artifactType") && !streq(key, "artifact_type"))
                return 0;
        if (value[0] == '\0')
                return 0;
        if (!streq(value, "model-artifact") && !streq(value, "metrics-artifact")) {
                b->r = -EINVAL;
                return -EINVAL;
        }
        if (b->n >= 16)
                return 0;
        nv = reallocarray(b->v, b->n + 2, sizeof(*nv));
        if (!nv) {
                b->r = -ENOMEM;
                return -ENOMEM;
        }
        b->v = nv;
        b->v[b->n] = strdup(value);
        if (!b->v[b->n]) {
                b->r = -ENOMEM;
                return -ENOMEM;
        }
        b->v[++b->n] = NULL;
        return 0;
}

/*
 * targetRPS (an int32 >= 0), recommendations (a boolean) and the four property names of the
 * performance endpoint. Answers 400 itself and returns -EINVAL on bad input.
 */
static int parse_perf(const struct http_req *req, struct catalog_perf_params *p,
                      struct http_resp *resp)
{
        const char *tr = http_req_query(req, "targetRPS");
        const char *rec = http_req_query(req, "recommendations");
        int32_t t = 0;

        if (tr && tr[0]) {
                if (safe_atoi32(tr, &t) < 0) {
                        catalog__reply_error(resp, 400,
                                             "invalid targetRPS '%s': not an integer: bad request",
                                             tr);
                        return -EINVAL;
                }
                if (t < 0) {
                        catalog__reply_error(
                                resp, 400,
                                "invalid targetRPS '%s': must not be negative: bad request", tr);
                        return -EINVAL;
                }
        }
        *p = (struct catalog_perf_params){
                .target_rps = t,
                .rps_property = http_req_query(req, "rpsProperty"),
                .latency_property = http_req_query(req, "latencyProperty"),
                .hw_count_property = http_req_query(req, "hardwareCountProperty"),
                .hw_type_property = http_req_query(req, "hardwareTypeProperty"),
        };
        if (rec && rec[0] && parse_boolean(rec, &p->recommendations) < 0) {
                catalog__reply_error(
                        resp, 400,
                        "invalid recommendations '%s' (expected true or false): bad request", rec);
                return -EINVAL;
        }
        return 0;
}

/* artifactType (repeatable; model-artifact or metrics-artifact). Answers 400 itself. */
static int parse_artifact_types(struct http_req *req, struct strv_builder *types,
                                struct http_resp *resp)
{
        int r = http_req_query_foreach(req, collect_artifact_types, types);

        if (types->r == -EINVAL || (r < 0 && r != -ENOMEM && types->r == 0)) {
                catalog__reply_error(
                        resp, 400,
                        "invalid artifactType (expected model-artifact or metrics-artifact): "
                        "bad request");
                return -EINVAL;
        }
        if (types->r < 0) {
                catalog__reply_errno(resp, types->r);
                return types->r;
        }
        return 0;
}

static int handle_artifacts(struct catalog__ctx *c, struct http_req *req, struct http_resp *resp,
                            const char *source_id, const char *name, bool performance)
{
        struct catalog_artifact_query q = { 0 };
        struct catalog_perf_params perf = { 0 };
        CLEANUP(strv_builder_release) struct strv_builder types = { 0 };
        CLEANUP(filterq_freep) struct filterq_node *filter = NULL;
        struct error_detail err = { 0 };
        json_t *out = NULL;
        int r;

        if (catalog__parse_page(req, &q.page, resp) < 0 ||
            parse_artifact_types(req, &types, resp) < 0 || parse_perf(req, &perf, resp) < 0 ||
            catalog__parse_filter(http_req_query(req, "filterQuery"), true, &filter, resp) < 0)
                return 0;
        q.artifact_types = types.v;
        if (performance)
                q.perf = &perf;
        q.filter = filter;
        q.performance_only = performance;
        q.order_by = http_req_query(req, "orderBy");
        r = catalog_index_list_artifacts(c->idx, source_id, name, &q, &out, &err);
        if (r == -ENOENT)
                return catalog__reply_error(resp, 400,
                                            "invalid model name '%s' for source '%s': bad request",
                                            name, source_id);
        if (r < 0)
                return catalog__reply_query_error(resp, r, err.message);
        return catalog__reply_json(resp, out);
}

static bool has_suffix(const char *s, const char *suffix, size_t *ret_prefix_len)
{
        size_t ls = strlen(s), lx = strlen(suffix);

        if (ls <= lx || !streq(s + ls - lx, suffix))
                return false;
        *ret_prefix_len = ls - lx;
        return true;
}

static int handle_model(struct catalog__ctx *c, struct http_req *req, struct http_resp *resp)
{
        const char *source_id = http_req_param(req, "source_id");
        const char *name = http_req_param(req, "model_name");
        AUTOFREE char *prefix = NULL;
        const char *text = NULL;
        size_t plen, len = 0;
        int r;

        if (!source_id || !name)
                return catalog__reply_error(resp, 404, "not found");
        /* upstream re-dispatches .../artifacts and .../artifacts/performance */
        if (has_suffix(name, "/artifacts/performance", &plen) ||
            has_suffix(name, "/artifacts", &plen)) {
                bool perf = has_suffix(name, "/artifacts/performance", &plen);

                prefix = strndup(name, plen);
                if (!prefix)
                        return catalog__reply_errno(resp, -ENOMEM);
                return handle_artifacts(c, req, resp, source_id, prefix, perf);
        }
        r = catalog_index_get_model_text(c->idx, source_id, name, &text, &len);
        if (r == -ENOENT)
                return catalog__reply_error(resp, 404, "No model found '%s' in source '%s'", name,
                                            source_id);
        if (r < 0)
                return catalog__reply_errno(resp, r);
        (void)len;
        http_resp_set_text(resp, 200, NULL, text);
        return 0;
}

/* ---- GET /models/filter_options, GET /labels ---- */

static int handle_filter_options(struct catalog__ctx *c, struct http_req *req,
                                 struct http_resp *resp)
{
        (void)req;
        return catalog__reply_json(resp, catalog_index_filter_options(c->idx));
}

static int handle_labels(struct catalog__ctx *c, struct http_req *req, struct http_resp *resp)
{
        struct catalog_label_query q = { 0 };
        const char *at = http_req_query(req, "assetType");
        json_t *out = NULL;
        int r;

        if (catalog__parse_page(req, &q.page, resp) < 0)
                return 0;
        if (at && at[0] && catalog_asset_type_from_string(at) < 0)
                return catalog__reply_error(
                        resp, 400,
                        "invalid value '%s' for assetType: valid values are [models "
                        "mcp_servers]",
                        at);
        q.asset_type = at && at[0] ? at : "models";
        q.order_by = http_req_query(req, "orderBy");
        r = catalog_index_list_labels(c->idx, &q, &out);
        if (r < 0)
                return catalog__reply_errno(resp, r);
        return catalog__reply_json(resp, out);
}

/* ---- routing ---- */

typedef int (*catalog_handler_fn)(struct catalog__ctx *c, struct http_req *req,
                                  struct http_resp *resp);

static int dummy(void *userdata, struct http_req *req, struct http_resp *resp)
{
        (void)userdata;
        (void)req;
        (void)resp;
        return 0;
}

struct handler_ref {
        catalog_handler_fn fn;
};

static const struct handler_ref h_sources = { handle_sources },
                                h_preview = { catalog__handle_preview },
                                h_models = { handle_models },
                                h_filter_options = { handle_filter_options },
                                h_labels = { handle_labels }, h_model = { handle_model },
                                h_mcp_servers = { catalog__handle_mcp_servers },
                                h_mcp_filter_options = { catalog__handle_mcp_filter_options },
                                h_mcp_server = { catalog__handle_mcp_server },
                                h_mcp_tools = { catalog__handle_mcp_tools },
                                h_mcp_tool = { catalog__handle_mcp_tool };

static const struct http_route routes[] = {
        { "GET", CATALOG_API_BASE "/sources", dummy, (void *)&h_sources },
        { "POST", CATALOG_API_BASE "/sources/preview", dummy, (void *)&h_preview },
        { "GET", CATALOG_API_BASE "/models", dummy, (void *)&h_models },
        { "GET", CATALOG_API_BASE "/models/filter_options", dummy, (void *)&h_filter_options },
        { "GET", CATALOG_API_BASE "/labels", dummy, (void *)&h_labels },
        { "GET", CATALOG_API_BASE "/sources/{source_id}/models/{model_name+}", dummy,
          (void *)&h_model },
        { "GET", CATALOG_MCP_API_BASE "/mcp_servers", dummy, (void *)&h_mcp_servers },
        { "GET", CATALOG_MCP_API_BASE "/mcp_servers/filter_options", dummy,
          (void *)&h_mcp_filter_options },
        { "GET", CATALOG_MCP_API_BASE "/mcp_servers/{server_id}", dummy, (void *)&h_mcp_server },
        { "GET", CATALOG_MCP_API_BASE "/mcp_servers/{server_id}/tools", dummy,
          (void *)&h_mcp_tools },
        { "GET", CATALOG_MCP_API_BASE "/mcp_servers/{server_id}/tools/{tool_name}", dummy,
          (void *)&h_mcp_tool },
};

int catalog_http_handle(void *userdata, struct http_req *req, struct http_resp *resp)
{
        struct catalog__ctx c = { .svc = userdata };
        struct qcheck qc = { 0 };
        catalog_handler_fn fn;
        int r;

        r = http_route_match(routes, ELEMENTSOF(routes), req->method, req->path, req);
        if (r == -EOPNOTSUPP) {
                http_resp_set_text(resp, 405, "text/plain; charset=utf-8", "");
                return 0;
        }
        if (r == -ENOMEM)
                return catalog__reply_errno(resp, r);
        if (r < 0) {
                http_resp_set_text(resp, 404, "text/plain; charset=utf-8", "404 page not found\n");
                return 0;
        }
        if (http_req_query_foreach(req, check_nul, &qc) < 0 && qc.bad_key)
                return catalog__reply_error(
                        resp, 400, "query parameter '%s' contains null bytes which are not allowed",
                        qc.bad_key);
        fn = ((const struct handler_ref *)routes[r].data)->fn;
        c.idx = catalog_service_get(c.svc);
        r = fn(&c, req, resp);
        catalog_index_unref(c.idx);
        http_req_params_release(req);
        return r < 0 ? catalog__reply_errno(resp, r) : 0;
}
