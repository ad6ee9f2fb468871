/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/handlers.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "catalog/glob.h"
#include "catalog/hf-sync.h"
#include "catalog/index.h"
#include "catalog/limits.h"
#include "catalog/multipart.h"
#include "http/errors.h"
#include "http/router.h"
#include "util/parse-util.h"

struct ctx {
        struct catalog_service *svc;
        struct catalog_index *idx; /* the request's snapshot */
};

static int reply_error(struct http_resp *resp, unsigned status, const char *fmt, ...)
        _printf_(3, 4);
static int reply_error(struct http_resp *resp, unsigned status, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
                msg[0] = '\0'; /* an unprintable message: the status still says what happened */
        va_end(ap);
        http_resp_set_json(resp, status,
                           json_pack("{s:s, s:s}", "code", http_reason_phrase(status), "message",
                                     msg));
        return 0;
}

static int reply_json(struct http_resp *resp, json_t *v)
{
        if (!v)
                return reply_error(resp, 500, "out of memory");
        http_resp_set_json(resp, 200, v);
        return 0;
}

/* Answers 200 with JSON text already serialized into text (copied). */
static void reply_text_json(struct http_resp *resp, const struct buf *text)
{
        http_resp_set_text(resp, 200, NULL, buf_str(text));
}

/* Maps an internal failure to 500 with the upstream body (never logs: the caller's job). */
static int reply_errno(struct http_resp *resp, int r)
{
        return reply_error(resp, 500, "internal error: %s",
                           r == -ENOMEM ? "out of memory" : "failed");
}

/* upstream's answer to a filterQuery comparison of mismatched types (a PostgreSQL type error) */
#define TYPE_MISMATCH "invalid filter query, type mismatch or invalid value in comparison"

/*
 * The answer for a failed listing: -EINVAL 400 with the index's message in err, -EDOM the type
 * mismatch, anything else 500.
 */
static int reply_query_error(struct http_resp *resp, int r, const char *err)
{
        if (r == -EINVAL)
                return reply_error(resp, 400, "%s: bad request", err);
        if (r == -EDOM)
                return reply_error(resp, 400, TYPE_MISMATCH);
        return reply_errno(resp, r);
}

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

static int parse_page(const struct http_req *req, struct catalog_page *page, struct http_resp *resp)
{
        const char *ps = http_req_query(req, "pageSize");
        const char *so = http_req_query(req, "sortOrder");
        int32_t n;

        page->page_size = CATALOG_PAGE_SIZE_DEFAULT;
        if (ps && ps[0]) {
                if (safe_atoi32(ps, &n) < 0) {
                        reply_error(resp, 400, "invalid pageSize '%s': not a number: bad request",
                                    ps);
                        return -EINVAL;
                }
                if (n < 1) {
                        reply_error(resp, 400,
                                    "invalid pageSize '%s': must be at least 1: bad request", ps);
                        return -EINVAL;
                }
                page->page_size = (uint32_t)MIN((uint32_t)n, CATALOG_PAGE_SIZE_MAX);
        }
        page->desc = false;
        if (so && so[0]) {
                if (streq(so, "DESC"))
                        page->desc = true;
                else if (!streq(so, "ASC")) {
                        reply_error(
                                resp, 400,
                                "unsupported sort order '%s' (expected ASC or DESC): bad request",
                                so);
                        return -EINVAL;
                }
        }
        page->token = http_req_query(req, "nextPageToken");
        if (page->token && strlen(page->token) > CATALOG_TOKEN_MAX) {
                reply_error(resp, 400, "invalid nextPageToken: token too long: bad request");
                return -EINVAL;
        }
        return 0;
}

/* s[0..*len) without its leading and trailing blanks and tabs (*len updated). */
static const char *trim_blanks(const char *s, size_t *len)
{
        while (*len > 0 && (*s == ' ' || *s == '\t')) {
                s++;
                (*len)--;
        }
        while (*len > 0 && (s[*len - 1] == ' ' || s[*len - 1] == '\t'))
                (*len)--;
        return s;
}

/* Appends a copy of s[0..len) to the strv *v of n items. */
static int strv_push_n(char ***v, size_t *n, const char *s, size_t len)
{
        char **nv = reallocarray(*v, *n + 2, sizeof(**v));

        if (!nv)
                return -ENOMEM;
        *v = nv;
        nv[*n] = strndup(s, len);
        if (!nv[*n])
                return -ENOMEM;
        nv[++*n] = NULL;
        return 0;
}

/* Splits a comma-separated value into an owned strv of trimmed non-empty items. */
static int split_csv(const char *s, char ***ret)
{
        CLEANUP(catalog_strv_freep) char **v = NULL;
        size_t n = 0;
        int r;

        v = calloc(1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        while (s && *s) {
                const char *e = strchr(s, ',');
                size_t len = e ? (size_t)(e - s) : strlen(s);
                const char *b = trim_blanks(s, &len);

                if (len > 0) {
                        if (n >= (size_t)CATALOG_SOURCES_MAX * 4)
                                return -E2BIG;
                        r = strv_push_n(&v, &n, b, len);
                        if (r < 0)
                                return r;
                }
                s = e ? e + 1 : NULL;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

/*
 * filterQuery text into *ret (NULL for none), with the type check of the model routes when
 * check_types. Answers 400 (500 for -ENOMEM) itself and returns < 0.
 */
static int parse_filter(const char *fq, bool check_types, struct filterq_node **ret,
                        struct http_resp *resp)
{
        CLEANUP(filterq_freep) struct filterq_node *filter = NULL;
        char err[512];
        int r;

        r = filterq_parse(fq, &filter, err, sizeof(err));
        if (r == -ENOMEM) {
                reply_errno(resp, r);
                return r;
        }
        if (r < 0) {
                reply_error(resp, 400, "invalid filter query: %s: bad request", err);
                return -EINVAL;
        }
        if (check_types && catalog_filter_check_types(filter) == -EDOM) {
                reply_error(resp, 400, TYPE_MISMATCH);
                return -EINVAL;
        }
        *ret = TAKE_PTR(filter);
        return 0;
}

/* ---- GET /sources ---- */

static int handle_sources(struct ctx *c, struct http_req *req, struct http_resp *resp)
{
        struct catalog_source_query q = { 0 };
        const char *ob = http_req_query(req, "orderBy");
        json_t *out = NULL;
        int r;

        if (parse_page(req, &q.page, resp) < 0)
                return 0;
        if (ob && ob[0] && !streq(ob, "ID") && !streq(ob, "NAME"))
                return reply_error(resp, 400, "unsupported order by field '%s': bad request", ob);
        q.order_by_name = ob && streq(ob, "NAME");
        q.name = http_req_query(req, "name");
        q.asset_type = http_req_query(req, "assetType");
        if (q.asset_type && q.asset_type[0] == '\0')
                q.asset_type = NULL;
        r = catalog_index_list_sources(c->idx, &q, &out);
        if (r < 0)
                return reply_errno(resp, r);
        return reply_json(resp, out);
}

/* ---- GET /models ---- */

/* A comma-separated selector into *ret; answers 400 "too many <what>" (or 500) itself. */
static int parse_csv_param(const char *v, const char *what, char ***ret, struct http_resp *resp)
{
        int r = split_csv(v, ret);

        if (r == -E2BIG) {
                reply_error(resp, 400, "too many %s: bad request", what);
                return -EINVAL;
        }
        if (r < 0) {
                reply_errno(resp, r);
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
                reply_error(resp, 400,
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
                reply_error(resp, 400, "invalid recommendations '%s': bad request", rec);
                return -EINVAL;
        }
        return 0;
}

static int handle_models(struct ctx *c, struct http_req *req, struct http_resp *resp)
{
        struct catalog_model_query q = { 0 };
        CLEANUP(catalog_strv_freep) char **sources = NULL, **labels = NULL;
        CLEANUP(filterq_freep) struct filterq_node *filter = NULL;
        CLEANUP(buf_release) struct buf text = BUF_INIT((size_t)HTTP_RESPONSE_MAX);
        AUTOFREE char *order_prop = NULL;
        const char *ob = http_req_query(req, "orderBy");
        char err[512];
        int r;

        if (parse_page(req, &q.page, resp) < 0 ||
            parse_model_selection(req, &q, &sources, &labels, resp) < 0 ||
            parse_filter(http_req_query(req, "filterQuery"), true, &filter, resp) < 0)
                return 0;
        q.filter = filter;
        r = catalog_order_parse_models(ob, &q.order, &order_prop, &q.order_suffix);
        if (r == -ENOMEM)
                return reply_errno(resp, r);
        if (r < 0)
                return reply_error(resp, 400, "unsupported order by field '%s': bad request", ob);
        q.order_property = order_prop;
        q.q = http_req_query(req, "q");
        r = catalog_index_list_models_text(c->idx, &q, &text, err, sizeof(err));
        if (r < 0)
                return reply_query_error(resp, r, err);
        reply_text_json(resp, &text);
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
                        reply_error(resp, 400,
                                    "invalid targetRPS '%s': not an integer: bad request", tr);
                        return -EINVAL;
                }
                if (t < 0) {
                        reply_error(resp, 400,
                                    "invalid targetRPS '%s': must not be negative: bad request",
                                    tr);
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
                reply_error(resp, 400,
                            "invalid recommendations '%s' (expected true or false): bad request",
                            rec);
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
                reply_error(resp, 400,
                            "invalid artifactType (expected model-artifact or metrics-artifact): "
                            "bad request");
                return -EINVAL;
        }
        if (types->r < 0) {
                reply_errno(resp, types->r);
                return types->r;
        }
        return 0;
}

static int handle_artifacts(struct ctx *c, struct http_req *req, struct http_resp *resp,
                            const char *source_id, const char *name, bool performance)
{
        struct catalog_artifact_query q = { 0 };
        struct catalog_perf_params perf = { 0 };
        CLEANUP(strv_builder_release) struct strv_builder types = { 0 };
        CLEANUP(filterq_freep) struct filterq_node *filter = NULL;
        char err[512];
        json_t *out = NULL;
        int r;

        if (parse_page(req, &q.page, resp) < 0 || parse_artifact_types(req, &types, resp) < 0 ||
            parse_perf(req, &perf, resp) < 0 ||
            parse_filter(http_req_query(req, "filterQuery"), true, &filter, resp) < 0)
                return 0;
        q.artifact_types = types.v;
        if (performance)
                q.perf = &perf;
        q.filter = filter;
        q.performance_only = performance;
        q.order_by = http_req_query(req, "orderBy");
        r = catalog_index_list_artifacts(c->idx, source_id, name, &q, &out, err, sizeof(err));
        if (r == -ENOENT)
                return reply_error(resp, 400,
                                   "invalid model name '%s' for source '%s': bad request", name,
                                   source_id);
        if (r < 0)
                return reply_query_error(resp, r, err);
        return reply_json(resp, out);
}

static bool has_suffix(const char *s, const char *suffix, size_t *ret_prefix_len)
{
        size_t ls = strlen(s), lx = strlen(suffix);

        if (ls <= lx || !streq(s + ls - lx, suffix))
                return false;
        *ret_prefix_len = ls - lx;
        return true;
}

static int handle_model(struct ctx *c, struct http_req *req, struct http_resp *resp)
{
        const char *source_id = http_req_param(req, "source_id");
        const char *name = http_req_param(req, "model_name");
        AUTOFREE char *prefix = NULL;
        const char *text = NULL;
        size_t plen, len = 0;
        int r;

        if (!source_id || !name)
                return reply_error(resp, 404, "not found");
        /* upstream re-dispatches .../artifacts and .../artifacts/performance */
        if (has_suffix(name, "/artifacts/performance", &plen) ||
            has_suffix(name, "/artifacts", &plen)) {
                bool perf = has_suffix(name, "/artifacts/performance", &plen);

                prefix = strndup(name, plen);
                if (!prefix)
                        return reply_errno(resp, -ENOMEM);
                return handle_artifacts(c, req, resp, source_id, prefix, perf);
        }
        r = catalog_index_get_model_text(c->idx, source_id, name, &text, &len);
        if (r == -ENOENT)
                return reply_error(resp, 404, "No model found '%s' in source '%s'", name,
                                   source_id);
        if (r < 0)
                return reply_errno(resp, r);
        (void)len;
        http_resp_set_text(resp, 200, NULL, text);
        return 0;
}

/* ---- GET /models/filter_options, GET /labels ---- */

static int handle_filter_options(struct ctx *c, struct http_req *req, struct http_resp *resp)
{
        (void)req;
        return reply_json(resp, catalog_index_filter_options(c->idx));
}

static int handle_labels(struct ctx *c, struct http_req *req, struct http_resp *resp)
{
        struct catalog_label_query q = { 0 };
        const char *at = http_req_query(req, "assetType");
        json_t *out = NULL;
        int r;

        if (parse_page(req, &q.page, resp) < 0)
                return 0;
        if (at && at[0] && catalog_asset_type_from_string(at) < 0)
                return reply_error(resp, 400,
                                   "invalid value '%s' for assetType: valid values are [models "
                                   "mcp_servers]",
                                   at);
        q.asset_type = at && at[0] ? at : "models";
        q.order_by = http_req_query(req, "orderBy");
        r = catalog_index_list_labels(c->idx, &q, &out);
        if (r < 0)
                return reply_errno(resp, r);
        return reply_json(resp, out);
}

/* ---- POST /sources/preview ---- */

/*
 * A preview path: only the catalog file of a configured source (absolute, or relative to the
 * first sources file's directory), compared after resolving symlinks; -EPERM for anything else.
 */
static int preview_path(struct ctx *c, const char *p, char **ret)
{
        const struct catalog_config *cfg = catalog_index_config(c->idx);
        AUTOFREE char *joined = NULL, *want = NULL;

        if (p[0] == '/')
                joined = strdup(p);
        else if (asprintf(&joined, "%s/%s", catalog_service_base_dir(c->svc), p) < 0)
                joined = NULL;
        if (!joined)
                return -ENOMEM;
        want = realpath(joined, NULL);
        if (!want)
                return errno == ENOMEM ? -ENOMEM : -EPERM;
        for (size_t i = 0; i < cfg->n_sources; i++) {
                AUTOFREE char *sp = NULL, *real = NULL;

                if (cfg->sources[i].is_mcp || catalog_source_yaml_path(&cfg->sources[i], &sp) < 0)
                        continue;
                real = realpath(sp, NULL);
                if (real && streq(real, want)) {
                        *ret = TAKE_PTR(want);
                        return 0;
                }
        }
        return -EPERM;
}

/*
 * The model names of a yaml preview source (catalogData, or its yamlCatalogPath) with their
 * include decision. Answers 422 itself (returns -EINVAL) for bad data.
 */
static int preview_yaml_names(struct ctx *c, struct catalog_source_config *src,
                              const char *cat_data, size_t cat_len, struct http_resp *resp,
                              char ***ret_names, bool **ret_included)
{
        CLEANUP(catalog_models_unrefp) struct catalog_models *models = NULL;
        CLEANUP(catalog_strv_freep) char **excluded = NULL, **names = NULL;
        struct catalog_error err = { 0 };
        AUTOFREE bool *included = NULL;
        char msg[1200];
        int r;

        if (cat_data)
                r = catalog_models_parse("catalogData", cat_data, cat_len, &models, &err);
        else {
                const char *p = json_string_value(
                        json_object_get(src->properties, "yamlCatalogPath"));
                AUTOFREE char *path = NULL;

                if (!p) {
                        reply_error(
                                resp, 422,
                                "config needs properties.yamlCatalogPath or a catalogData part");
                        return -EINVAL;
                }
                r = preview_path(c, p, &path);
                if (r == -EPERM) {
                        reply_error(resp, 422, "yamlCatalogPath '%s' is not allowed", p);
                        return -EINVAL;
                }
                if (r >= 0)
                        r = catalog_models_load_file(path, &models, &err);
        }
        if (r >= 0)
                r = catalog_source_excluded(src, &excluded);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                reply_error(resp, 422, "invalid catalog data: %s",
                            catalog_error_format(&err, msg, sizeof(msg)));
                return -EINVAL;
        }
        names = calloc(models->n + 1, sizeof(*names));
        included = calloc(models->n + 1, sizeof(*included));
        if (!names || !included)
                return -ENOMEM;
        for (size_t i = 0; i < models->n; i++) {
                names[i] = strdup(models->v[i].name);
                if (!names[i])
                        return -ENOMEM;
                included[i] = catalog_glob_included(src->included, excluded, names[i]);
        }
        *ret_names = TAKE_PTR(names);
        *ret_included = TAKE_PTR(included);
        return 0;
}

/* The same for an hf preview source: the names the hub has for its patterns (upstream). */
static int preview_hf_names(struct catalog_source_config *src, struct http_resp *resp,
                            char ***ret_names, bool **ret_included)
{
        struct catalog_hf_config cfg = { 0 };
        CLEANUP(catalog_strv_freep) char **names = NULL;
        AUTOFREE bool *included = NULL;
        char err[1024];
        size_t n;
        int r;

        r = catalog_hf_config_from_source(src, NULL, &cfg, err, sizeof(err));
        if (r == -EINVAL) {
                reply_error(resp, 422, "invalid source config: %s", err);
                return r;
        }
        if (r < 0)
                return r;
        r = catalog_hf_preview_names(&cfg, NULL, &names, err, sizeof(err));
        if (r == -EINVAL)
                reply_error(resp, 422, "%s", err);
        if (r < 0) {
                catalog_hf_config_release(&cfg);
                return r;
        }
        n = catalog_strv_length(names);
        included = calloc(n + 1, sizeof(*included));
        if (!included) {
                catalog_hf_config_release(&cfg);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                included[i] = catalog_glob_included(cfg.included, cfg.excluded, names[i]);
        catalog_hf_config_release(&cfg);
        *ret_names = TAKE_PTR(names);
        *ret_included = TAKE_PTR(included);
        return 0;
}

enum preview_filter {
        PREVIEW_ALL,
        PREVIEW_INCLUDED,
        PREVIEW_EXCLUDED,
};

/* filterStatus: all (default), included or excluded. Answers 400 itself. */
static int parse_filter_status(const struct http_req *req, enum preview_filter *ret,
                               struct http_resp *resp)
{
        const char *fs = http_req_query(req, "filterStatus");

        *ret = PREVIEW_ALL;
        if (!fs || !fs[0] || streq(fs, "all"))
                return 0;
        if (streq(fs, "included"))
                *ret = PREVIEW_INCLUDED;
        else if (streq(fs, "excluded"))
                *ret = PREVIEW_EXCLUDED;
        else {
                reply_error(resp, 400,
                            "invalid filterStatus '%s' (expected all, included or excluded): bad "
                            "request",
                            fs);
                return -EINVAL;
        }
        return 0;
}

/*
 * The model names of the source that the multipart body describes (part config, and for a yaml
 * source optionally catalogData) with their include decisions. Answers 400/422 itself and
 * returns -EINVAL for bad input.
 */
static int preview_source_names(struct ctx *c, struct http_req *req, struct http_resp *resp,
                                char ***ret_names, bool **ret_included)
{
        const char *ct = http_req_header(req, "Content-Type");
        const char *body = buf_str(&req->body);
        const char *cfg_data = NULL, *cat_data = NULL;
        size_t cfg_len = 0, cat_len = 0;
        CLEANUP(catalog_source_config_release)
        struct catalog_source_config src = { .enabled = -1 };
        struct catalog_error err = { 0 };
        char msg[1200];
        int r;

        r = catalog_multipart_find(ct, body, req->body.len, "config", &cfg_data, &cfg_len);
        if (r < 0) {
                reply_error(resp, 400, "missing required multipart field 'config': bad request");
                return -EINVAL;
        }
        r = catalog_multipart_find(ct, body, req->body.len, "catalogData", &cat_data, &cat_len);
        if (r == -EINVAL) {
                reply_error(resp, 400, "malformed multipart body: bad request");
                return -EINVAL;
        }
        r = catalog_source_parse_preview("config", cfg_data, cfg_len, &src, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                reply_error(resp, 422, "invalid source config: %s",
                            catalog_error_format(&err, msg, sizeof(msg)));
                return -EINVAL;
        }
        if (src.type && streq(src.type, "yaml"))
                return preview_yaml_names(c, &src, cat_data, cat_len, resp, ret_names,
                                          ret_included);
        if (src.type && (streq(src.type, "hf") || streq(src.type, "huggingface")))
                return preview_hf_names(&src, resp, ret_names, ret_included);
        reply_error(resp, 422, "unsupported source type '%s'", src.type ? src.type : "");
        return -EINVAL;
}

/* Answers the page of names that want keeps, with the summary of all of them. */
static int reply_preview(struct http_resp *resp, char **names, const bool *all_included,
                         enum preview_filter want, const struct catalog_page *page)
{
        size_t total = catalog_strv_length(names), n_incl = 0, n = 0, start, end;
        AUTOFREE char **values = calloc(total + 1, sizeof(*values));
        AUTOFREE bool *included = calloc(total + 1, sizeof(*included));
        AUTOFREE char *next = NULL;
        json_auto_t *items = json_array();
        int r;

        if (!values || !included || !items)
                return reply_errno(resp, -ENOMEM);
        for (size_t i = 0; i < total; i++) {
                bool inc = all_included[i];

                n_incl += inc;
                if ((want == PREVIEW_INCLUDED && !inc) || (want == PREVIEW_EXCLUDED && inc))
                        continue;
                values[n] = names[i];
                included[n++] = inc;
        }
        r = catalog_page_memory(values, values, n, page, &start, &end, &next);
        if (r < 0)
                return reply_errno(resp, r);
        for (size_t i = start; i < end; i++)
                if (json_array_append_new(items, json_pack("{s:s, s:b}", "name", values[i],
                                                           "included", included[i])) < 0)
                        return reply_errno(resp, -ENOMEM);
        return reply_json(resp, json_pack("{s:O, s:{s:I, s:I, s:I}, s:s, s:I, s:I}", "items", items,
                                          "summary", "totalModels", (json_int_t)total,
                                          "includedModels", (json_int_t)n_incl, "excludedModels",
                                          (json_int_t)(total - n_incl), "nextPageToken",
                                          next ? next : "", "pageSize", (json_int_t)page->page_size,
                                          "size", (json_int_t)json_array_size(items)));
}

static int handle_preview(struct ctx *c, struct http_req *req, struct http_resp *resp)
{
        CLEANUP(catalog_strv_freep) char **names = NULL;
        AUTOFREE bool *included = NULL;
        struct catalog_page page = { 0 };
        enum preview_filter want;
        int r;

        if (req->body.len > (size_t)CATALOG_PREVIEW_BODY_MAX)
                return reply_error(resp, 413, "request body too large (limit %u bytes)",
                                   CATALOG_PREVIEW_BODY_MAX);
        if (parse_page(req, &page, resp) < 0 || parse_filter_status(req, &want, resp) < 0)
                return 0;
        r = preview_source_names(c, req, resp, &names, &included);
        if (r == -EINVAL)
                return 0;
        if (r < 0)
                return reply_errno(resp, r);
        return reply_preview(resp, names, included, want, &page);
}

/* ---- MCP catalog (/api/mcp_catalog/v1alpha1) ---- */

static int append_literal(struct buf *b, const json_t *v)
{
        if (json_is_string(v)) {
                int r = buf_putc(b, '\'');

                for (const char *c = json_string_value(v); r >= 0 && *c; c++) {
                        if (*c == '\'' || *c == '\\')
                                r = buf_putc(b, '\\');
                        if (r >= 0)
                                r = buf_putc(b, *c);
                }
                return r < 0 ? r : buf_putc(b, '\'');
        }
        if (json_is_boolean(v))
                return buf_puts(b, json_is_true(v) ? "true" : "false");
        if (json_is_integer(v))
                return buf_printf(b, "%lld", (long long)json_integer_value(v));
        if (json_is_real(v))
                return buf_printf(b, "%.17g", json_real_value(v));
        return -EINVAL;
}

/* One filter's value: a literal, or "(a, b)" for a list (IN). */
static int append_filter_value(struct buf *b, const json_t *val)
{
        size_t i;
        json_t *e;
        int r;

        if (!json_is_array(val))
                return append_literal(b, val);
        r = buf_putc(b, '(');
        json_array_foreach(val, i, e) {
                if (r >= 0 && i > 0)
                        r = buf_puts(b, ", ");
                if (r >= 0)
                        r = append_literal(b, e);
        }
        return r < 0 ? r : buf_putc(b, ')');
}

/* Turns a named query's {field: {operator, value}} into filterQuery text. */
static int named_query_text(const json_t *filters, struct buf *b)
{
        const char *field;
        json_t *f;
        bool first = true;
        int r = 0;

        json_object_foreach((json_t *)filters, field, f) {
                r = buf_printf(b, "%s`%s` %s ", first ? "" : " AND ", field,
                               json_string_value(json_object_get(f, "operator")));
                first = false;
                if (r >= 0)
                        r = append_filter_value(b, json_object_get(f, "value"));
                if (r < 0)
                        return r;
        }
        return r;
}

static int parse_mcp_tools(const struct http_req *req, bool *include, uint32_t *limit,
                           struct http_resp *resp)
{
        const char *it = http_req_query(req, "includeTools");
        const char *tl = http_req_query(req, "toolLimit");
        int32_t n;

        *include = false;
        *limit = 10;
        if (it && it[0] && parse_boolean(it, include) < 0) {
                reply_error(resp, 400, "invalid includeTools '%s': bad request", it);
                return -EINVAL;
        }
        if (tl && tl[0]) {
                if (safe_atoi32(tl, &n) < 0 || n < 0 || n > 100) {
                        reply_error(resp, 400, "invalid toolLimit '%s' (0 to 100): bad request",
                                    tl);
                        return -EINVAL;
                }
                *limit = (uint32_t)n;
        }
        return 0;
}

static int parse_mcp_order(const char *ob, enum catalog_order *ret)
{
        if (!ob || !ob[0] || streq(ob, "ID"))
                *ret = CATALOG_ORDER_ID;
        else if (streq(ob, "NAME"))
                *ret = CATALOG_ORDER_NAME;
        else if (streq(ob, "CREATE_TIME"))
                *ret = CATALOG_ORDER_CREATE_TIME;
        else if (streq(ob, "LAST_UPDATE_TIME"))
                *ret = CATALOG_ORDER_LAST_UPDATE_TIME;
        else
                return -EINVAL;
        return 0;
}

/*
 * The filterQuery text of an MCP listing: the named query's filters, AND (filterQuery) when
 * both are given. Answers 400 (500) itself and returns < 0.
 */
static int mcp_filter_text(struct ctx *c, const char *nq, const char *fq, struct buf *text,
                           struct http_resp *resp)
{
        int r;

        if (nq && nq[0]) {
                const json_t *named = json_object_get(catalog_index_config(c->idx)->named_queries,
                                                      nq);

                if (!named ||
                    !streq(json_string_value(json_object_get(named, "assetType")), "mcp_servers")) {
                        reply_error(resp, 400, "unknown named query '%s': bad request", nq);
                        return -EINVAL;
                }
                r = named_query_text(json_object_get(named, "filters"), text);
                if (r < 0) {
                        reply_errno(resp, r);
                        return r;
                }
        }
        if (fq && fq[0]) {
                r = text->len > 0 ? buf_printf(text, " AND (%s)", fq) : buf_puts(text, fq);
                if (r < 0) {
                        reply_error(resp, 400, "filter query too long: bad request");
                        return -EINVAL;
                }
        }
        return 0;
}

static int handle_mcp_servers(struct ctx *c, struct http_req *req, struct http_resp *resp)
{
        struct catalog_mcp_query q = { 0 };
        CLEANUP(catalog_strv_freep) char **labels = NULL;
        CLEANUP(filterq_freep) struct filterq_node *filter = NULL;
        CLEANUP(buf_release) struct buf text = BUF_INIT(2 * (size_t)FILTERQ_QUERY_MAX);
        const char *lbl = http_req_query(req, "sourceLabel");
        const char *ob = http_req_query(req, "orderBy");
        char err[512];
        json_t *out = NULL;
        int r;

        if (parse_page(req, &q.page, resp) < 0 ||
            parse_mcp_tools(req, &q.include_tools, &q.tool_limit, resp) < 0)
                return 0;
        if (parse_mcp_order(ob, &q.order) < 0)
                return reply_error(resp, 400, "unsupported order by field '%s': bad request", ob);
        if (lbl && lbl[0]) {
                r = split_csv(lbl, &labels);
                if (r < 0)
                        return reply_errno(resp, r);
                q.source_labels = labels;
        }
        if (mcp_filter_text(c, http_req_query(req, "namedQuery"),
                            http_req_query(req, "filterQuery"), &text, resp) < 0 ||
            parse_filter(buf_str(&text), false, &filter, resp) < 0)
                return 0;
        q.filter = filter;
        q.name = http_req_query(req, "name");
        q.q = http_req_query(req, "q");
        r = catalog_index_list_mcp(c->idx, &q, &out, err, sizeof(err));
        if (r == -EINVAL)
                return reply_error(resp, 400, "%s: bad request", err);
        if (r < 0)
                return reply_errno(resp, r);
        return reply_json(resp, out);
}

static int handle_mcp_filter_options(struct ctx *c, struct http_req *req, struct http_resp *resp)
{
        (void)req;
        return reply_json(resp, catalog_index_mcp_filter_options(c->idx));
}

static int handle_mcp_server(struct ctx *c, struct http_req *req, struct http_resp *resp)
{
        const char *id = http_req_param(req, "server_id");
        uint32_t limit;
        bool include;
        json_t *out = NULL;
        int r;

        if (parse_mcp_tools(req, &include, &limit, resp) < 0)
                return 0;
        r = catalog_index_get_mcp(c->idx, id, include, limit, &out);
        if (r == -ENOENT)
                return reply_error(resp, 404, "MCP server '%s' not found", id);
        if (r < 0)
                return reply_errno(resp, r);
        return reply_json(resp, out);
}

static int handle_mcp_tools(struct ctx *c, struct http_req *req, struct http_resp *resp)
{
        const char *id = http_req_param(req, "server_id");
        CLEANUP(filterq_freep) struct filterq_node *filter = NULL;
        struct catalog_page page = { 0 };
        json_t *out = NULL;
        int r;

        if (parse_page(req, &page, resp) < 0 ||
            parse_filter(http_req_query(req, "filterQuery"), false, &filter, resp) < 0)
                return 0;
        r = catalog_index_list_mcp_tools(c->idx, id, &page, filter, &out);
        if (r == -ENOENT)
                return reply_error(resp, 404, "MCP server '%s' not found", id);
        if (r < 0)
                return reply_errno(resp, r);
        return reply_json(resp, out);
}

static int handle_mcp_tool(struct ctx *c, struct http_req *req, struct http_resp *resp)
{
        const char *id = http_req_param(req, "server_id");
        const char *tool = http_req_param(req, "tool_name");
        json_t *out = NULL;
        int r;

        r = catalog_index_get_mcp_tool(c->idx, id, tool, &out);
        if (r == -ENOENT)
                return reply_error(resp, 404, "tool '%s' not found on MCP server '%s'", tool, id);
        if (r < 0)
                return reply_errno(resp, r);
        return reply_json(resp, out);
}

/* ---- routing ---- */

typedef int (*catalog_handler_fn)(struct ctx *c, struct http_req *req, struct http_resp *resp);

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

static const struct handler_ref h_sources = { handle_sources }, h_preview = { handle_preview },
                                h_models = { handle_models },
                                h_filter_options = { handle_filter_options },
                                h_labels = { handle_labels }, h_model = { handle_model },
                                h_mcp_servers = { handle_mcp_servers },
                                h_mcp_filter_options = { handle_mcp_filter_options },
                                h_mcp_server = { handle_mcp_server },
                                h_mcp_tools = { handle_mcp_tools },
                                h_mcp_tool = { handle_mcp_tool };

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
        struct ctx c = { .svc = userdata };
        struct qcheck qc = { 0 };
        catalog_handler_fn fn;
        int r;

        r = http_route_match(routes, ELEMENTSOF(routes), req->method, req->path, req);
        if (r == -EOPNOTSUPP) {
                http_resp_set_text(resp, 405, "text/plain; charset=utf-8", "");
                return 0;
        }
        if (r == -ENOMEM)
                return reply_errno(resp, r);
        if (r < 0) {
                http_resp_set_text(resp, 404, "text/plain; charset=utf-8", "404 page not found\n");
                return 0;
        }
        if (http_req_query_foreach(req, check_nul, &qc) < 0 && qc.bad_key)
                return reply_error(resp, 400,
                                   "query parameter '%s' contains null bytes which are not allowed",
                                   qc.bad_key);
        fn = ((const struct handler_ref *)routes[r].data)->fn;
        c.idx = catalog_service_get(c.svc);
        r = fn(&c, req, resp);
        catalog_index_unref(c.idx);
        http_req_params_release(req);
        return r < 0 ? reply_errno(resp, r) : 0;
}
