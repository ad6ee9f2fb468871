/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP edge of the Model Registry REST API: the route table and one handler per route
 * family. Each handler parses the path, the query and the body (codec), calls one operation of
 * the domain layer (service.h), and encodes its result; the status of a failure is chosen in one
 * place (http_kind(): error kind -> src/http/errors), from the struct error_detail it filled.
 */
#include "registry/registry.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/errors.h"
#include "http/router.h"
#include "json/json-util.h"
#include "registry/codec.h"
#include "registry/kinds.h"
#include "registry/service.h"
#include "store/entity.h"
#include "util/parse-util.h"
#include "util/time-util.h"

#define STEP_IDS_MAX 256

struct registry {
        struct store *store;
};

struct ctx {
        struct registry *reg;
        struct http_req *req;
        struct http_resp *resp;
        struct store_conn *conn;
        struct error_detail err;
        struct reg_db db; /* store, conn and &err, for the service layer */
};

enum route_op {
        OP_LIST,
        OP_CREATE,
        OP_GET,
        OP_PATCH,
        OP_FIND,
        OP_LIST_NESTED,
        OP_CREATE_NESTED,
};

/*
 * One row per route: the handler (parse, call the store, encode) and the data it needs. The
 * HTTP route table points every route at serve(), which lends the handler a store connection.
 */
struct route_spec {
        int (*handler)(struct ctx *x, const struct route_spec *sp);
        enum reg_kind_id kind;
        enum route_op op;
        enum reg_schema schema;
        enum reg_kind_id parent_kind; /* nested routes */
        bool honor_name;              /* nested lists that honour name/externalId */
        bool any_artifact;            /* the artifact union */
        /* derived resources of an inference service: reg_is_model, reg_is_version */
        int (*derive)(struct reg_db *db, int64_t id, struct reg_result *ret);
};

/* ---- responses ---- */

static int reply_json(struct ctx *x, unsigned status, json_t *v)
{
        AUTOFREE char *s = NULL;
        struct buf b = BUF_INIT(HTTP_RESPONSE_MAX);
        int r;

        if (!v)
                return -ENOMEM;
        s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(v);
        if (!s)
                return -ENOMEM;
        r = buf_puts(&b, s);
        if (r >= 0)
                r = buf_putc(&b, '\n');
        if (r < 0) {
                buf_release(&b);
                return r;
        }
        http_resp_set_text(x->resp, status, "application/json; charset=UTF-8", buf_str(&b));
        buf_release(&b);
        return 0;
}

/* The one mapping from the registry's error kinds to the HTTP error table. */
static enum http_error_kind http_kind(enum error_kind kind)
{
        switch (kind) {
        case ERROR_INVALID:
                return HTTP_ERR_INVALID;
        case ERROR_UNPROCESSABLE:
                return HTTP_ERR_REQUIRED_FIELD; /* 422 with code "Bad Request", as upstream */
        case ERROR_NOT_FOUND:
                return HTTP_ERR_NOT_FOUND;
        case ERROR_CONFLICT:
                return HTTP_ERR_CONFLICT;
        case ERROR_UNAVAILABLE:
                return HTTP_ERR_UNAVAILABLE;
        case ERROR_INTERNAL:
        case ERROR__MAX:
                break;
        }
        return HTTP_ERR_INTERNAL;
}

static int reply_error_kind(struct http_resp *resp, enum http_error_kind kind, const char *message)
{
        struct ctx x = { .resp = resp };
        return reply_json(&x, http_error_status(kind), http_error_body(kind, message));
}

static int reply_error(struct ctx *x)
{
        enum http_error_kind kind = http_kind(x->err.kind);

        if (kind == HTTP_ERR_INTERNAL && !x->err.message[0])
                return reply_error_kind(x->resp, kind, "internal server error");
        return reply_error_kind(x->resp, kind, x->err.message);
}

/* ---- helpers ---- */

static const char *query(struct ctx *x, const char *key)
{
        const char *v = http_req_query(x->req, key);
        return v && *v ? v : NULL;
}

static int path_id(struct ctx *x, const char *param, const char *word, int64_t *ret)
{
        const char *v = http_req_param(x->req, param);
        int32_t id;

        if (!v || safe_atoi32(v, &id) < 0)
                return error_detail_set(
                        &x->err, ERROR_INVALID, -EINVAL,
                        "invalid %s ID: strconv.ParseInt: parsing \"%s\": invalid syntax: bad request",
                        word, v ? v : "");
        *ret = id;
        return 0;
}

static int parse_body(struct ctx *x, json_t **ret)
{
        const char *data = x->req->body.p ? x->req->body.p : "";
        size_t len = x->req->body.len;

        if (len == 0)
                return error_detail_set(&x->err, ERROR_INVALID, -EINVAL, "EOF");
        if (memchr(data, 0, len) || strstr(data, "\\u0000")) {
                char field[128];
                const char *nul = memchr(data, 0, len);

                /* upstream's message, then what was wrong: the field, or where the byte is */
                if (nul)
                        return error_detail_set(&x->err, ERROR_INVALID, -EINVAL,
                                                "Request body contains null bytes which are not "
                                                "allowed: a raw NUL byte at offset %zu",
                                                (size_t)(nul - data));
                if (reg_body_nul_field(data, len, field, sizeof(field)))
                        return error_detail_set(&x->err, ERROR_INVALID, -EINVAL,
                                                "Request body contains null bytes which are not "
                                                "allowed: %s: contains U+0000",
                                                field);
                return error_detail_set(&x->err, ERROR_INVALID, -EINVAL,
                                        "Request body contains null bytes which are not allowed");
        }
        return json_parse_bounded(data, len, ret, &x->err);
}

/* ---- answers ---- */

static int reply_result(struct ctx *x, unsigned status, struct reg_result *res)
{
        int r = reply_json(x, status, reg_encode(res->kind, &res->e));

        reg_result_done(res);
        return r;
}

/* The list body: {items, nextPageToken, pageSize, size}. New reference or NULL. */
static json_t *encode_list(const struct reg_list *l, int32_t page_size)
{
        json_auto_t *items = json_array();

        if (!items)
                return NULL;
        for (size_t i = 0; i < l->n; i++) {
                const struct reg_kind *k = reg_kind_by_type(l->items[i].type);

                if (!k || json_array_append_new(items, reg_encode(k, &l->items[i])) < 0)
                        return NULL;
        }
        return json_pack("{s:O,s:s,s:i,s:i}", "items", items, "nextPageToken",
                         l->next_page_token ? l->next_page_token : "", "pageSize", (int)page_size,
                         "size", (int)l->n);
}

static int run_list(struct ctx *x, const struct reg_list_req *rq)
{
        struct reg_list l;
        json_t *out;
        int r;

        r = reg_list(&x->db, rq, &l);
        if (r < 0)
                return r;
        out = encode_list(&l, rq->page_size);
        reg_list_done(&l);
        if (!out)
                return error_detail_set(&x->err, ERROR_INTERNAL, -ENOMEM, "out of memory");
        return reply_json(x, 200, out);
}

/* ---- list ---- */

/* The paging parameters; page token and filterQuery are the service's to parse. */
static int list_params(struct ctx *x, struct reg_list_req *rq)
{
        const char *ps = query(x, "pageSize"), *ob = query(x, "orderBy"),
                   *so = query(x, "sortOrder");

        if (ps && safe_atoi32(ps, &rq->page_size) < 0)
                return error_detail_set(
                        &x->err, ERROR_INVALID, -EINVAL,
                        "invalid numeric string: strconv.ParseInt: parsing \"%s\": invalid syntax: bad request",
                        ps);
        rq->order = STORE_ORDER_ID;
        if (ob && streq(ob, "CREATE_TIME"))
                rq->order = STORE_ORDER_CREATE;
        else if (ob && streq(ob, "LAST_UPDATE_TIME"))
                rq->order = STORE_ORDER_UPDATE;
        rq->desc = so && streq(so, "DESC");
        rq->page_token = query(x, "nextPageToken");
        rq->filter = query(x, "filterQuery");
        return 0;
}

static int artifact_type_param(struct ctx *x, const char **ret_type)
{
        const char *at = http_req_query(x->req, "artifactType");
        const struct reg_kind *k;

        *ret_type = NULL;
        if (!at)
                return 0;
        k = reg_kind_by_artifact_type(at);
        if (!k)
                return error_detail_set(
                        &x->err, ERROR_INVALID, -EINVAL,
                        "invalid artifact type, must be either ModelArtifact, DocArtifact, DataSet, Metric, or Parameter: bad request");
        *ret_type = k->type;
        return 0;
}

static int do_list(struct ctx *x, const struct route_spec *sp)
{
        struct reg_list_req rq = { .kind = reg_kind(sp->kind) };
        const char *one_type = NULL;
        int r;

        if (sp->any_artifact) {
                r = artifact_type_param(x, &one_type);
                if (r < 0)
                        return r;
                if (one_type) {
                        rq.types = &one_type;
                        rq.n_types = 1;
                        rq.kind = reg_kind_by_type(one_type);
                } else {
                        rq.types = reg_artifact_types;
                        rq.n_types = reg_n_artifact_types;
                }
        }
        if (sp->op == OP_LIST_NESTED) {
                r = path_id(x, "id", reg_kind(sp->parent_kind)->word, &rq.parent_id);
                if (r < 0)
                        return r;
                rq.has_parent = true;
                if (sp->honor_name) {
                        rq.name = query(x, "name");
                        rq.external_id = query(x, "externalId");
                }
        }
        r = list_params(x, &rq);
        if (r < 0)
                return r;
        return run_list(x, &rq);
}

/* ---- get / find ---- */

/* The kind of sp (NULL for the artifact union) into *ret_k and the path's {id} into *ret_id. */
static int kind_and_id(struct ctx *x, const struct route_spec *sp, const struct reg_kind **ret_k,
                       int64_t *ret_id)
{
        const struct reg_kind *k = sp->any_artifact ? NULL : reg_kind(sp->kind);

        *ret_k = k;
        return path_id(x, "id", k ? k->word : "artifact", ret_id);
}

static int do_get(struct ctx *x, const struct route_spec *sp)
{
        const struct reg_kind *k = NULL;
        struct reg_result res;
        int64_t id = 0;
        int r;

        r = kind_and_id(x, sp, &k, &id);
        if (r >= 0)
                r = reg_get(&x->db, k, id, &res);
        return r < 0 ? r : reply_result(x, 200, &res);
}

static int do_find(struct ctx *x, const struct route_spec *sp)
{
        struct reg_find_req rq = { .kind = reg_kind(sp->kind),
                                   .any_artifact = sp->any_artifact,
                                   .name = query(x, "name"),
                                   .external_id = query(x, "externalId"),
                                   .parent = query(x, "parentResourceId") };
        struct reg_result res;
        int r = reg_find(&x->db, &rq, &res);

        return r < 0 ? r : reply_result(x, 200, &res);
}

/* ---- create ---- */

/* The body's kind: the route's, or for the artifact union its artifactType's. */
static int body_kind(struct ctx *x, const struct route_spec *sp, json_t *body,
                     const struct reg_kind **ret)
{
        *ret = reg_kind(sp->kind);
        if (!sp->any_artifact)
                return 0;
        *ret = reg_kind_by_artifact_type(reg_body_artifact_type(body));
        if (!*ret)
                return error_detail_set(
                        &x->err, ERROR_INVALID, -EINVAL,
                        "invalid artifact type, must be either ModelArtifact, DocArtifact, DataSet, Metric, or Parameter: bad request");
        return 0;
}

static int do_create(struct ctx *x, const struct route_spec *sp)
{
        json_auto_t *body = NULL;
        struct reg_input in = { 0 };
        struct reg_create_req rq = { .in = &in,
                                     .schema = sp->schema,
                                     .parent_kind = sp->parent_kind };
        struct reg_result res;
        const struct reg_kind *k;
        int r;

        r = parse_body(x, &body);
        if (r >= 0)
                r = body_kind(x, sp, body, &k);
        if (r >= 0)
                r = reg_decode(k, sp->schema, body, &in, &x->err);
        /* nested creates, and serve models under their inference service */
        if (r >= 0 && (sp->op == OP_CREATE_NESTED || sp->kind == REG_SERVE_MODEL)) {
                rq.path_parent = sp->op == OP_CREATE_NESTED;
                r = path_id(x, "id", reg_kind(sp->parent_kind)->word, &rq.parent_id);
        }
        if (r >= 0)
                r = reg_create(&x->db, &rq, &res);
        reg_input_done(&in);
        return r < 0 ? r : reply_result(x, 201, &res);
}

/* ---- patch ---- */

/* A generic artifact's PATCH may not change its artifactType (immutable). */
static int check_artifact_type(struct ctx *x, const struct reg_kind *stored, json_t *body)
{
        const char *at = reg_body_artifact_type(body);

        if (at && !streq(at, stored->artifact_type))
                return error_detail_set(
                        &x->err, ERROR_INVALID, -EINVAL,
                        "cannot change artifact type from '%s' to '%s': artifact type is immutable",
                        stored->artifact_type, at);
        return 0;
}

/* The body decoded here, at the edge, as its entity's kind (for a generic artifact the stored
 * one's: looked up first, so a missing entity is 404 before the body is judged, as before). */
static int do_patch(struct ctx *x, const struct route_spec *sp)
{
        json_auto_t *body = NULL;
        const struct reg_kind *k = NULL, *kind = NULL;
        const char *word;
        struct reg_input in = { 0 };
        struct reg_result res;
        int64_t id = 0;
        int r;

        r = kind_and_id(x, sp, &k, &id);
        word = k ? k->word : "artifact";
        if (r >= 0)
                r = parse_body(x, &body);
        if (r >= 0)
                r = reg_patch_kind(&x->db, k, id, word, &kind);
        if (r >= 0 && !k)
                r = check_artifact_type(x, kind, body);
        if (r >= 0)
                r = reg_decode(kind, REG_SCHEMA_UPDATE, body, &in, &x->err);
        if (r >= 0)
                r = reg_patch(&x->db, kind, id, word, &in, &res);
        reg_input_done(&in);
        return r < 0 ? r : reply_result(x, 200, &res);
}

/* ---- artifacts under a model version / experiment run (upsert) ---- */

static int do_upsert_artifact(struct ctx *x, const struct route_spec *sp)
{
        json_auto_t *body = NULL;
        struct reg_input in = { 0 };
        struct reg_upsert_req rq = { .parent_kind = sp->parent_kind, .in = &in };
        struct reg_result res;
        const struct reg_kind *k = NULL;
        unsigned status;
        int r;

        r = path_id(x, "id", reg_kind(sp->parent_kind)->word, &rq.parent_id);
        if (r >= 0)
                r = parse_body(x, &body);
        if (r >= 0)
                r = body_kind(x, sp, body, &k);
        if (r >= 0)
                r = reg_decode(k, REG_SCHEMA_FULL, body, &in, &x->err);
        if (r >= 0)
                r = reg_upsert(&x->db, &rq, &res);
        reg_input_done(&in);
        if (r < 0)
                return r;
        /* upstream's quirk (B.10.4): 201 only for new model and doc artifacts */
        status = res.created && (res.kind->id == REG_MODEL_ARTIFACT ||
                                 res.kind->id == REG_DOC_ARTIFACT)
                         ? 201
                         : 200;
        return reply_result(x, status, &res);
}

/* ---- derived resources of an inference service ---- */

/* GET /inference_services/{id}/model and .../version: sp->derive finds the entity. */
static int do_is_derived(struct ctx *x, const struct route_spec *sp)
{
        struct reg_result res;
        int64_t id = 0;
        int r;

        r = path_id(x, "id", "inference service", &id);
        if (r >= 0)
                r = sp->derive(&x->db, id, &res);
        return r < 0 ? r : reply_result(x, 200, &res);
}

/* ---- metric history ---- */

/* stepIds: comma-separated int32s, at most STEP_IDS_MAX of them. */
static int parse_step_ids(struct ctx *x, const char *p, int32_t *steps, size_t *ret_n)
{
        size_t n = 0;

        for (;;) {
                const char *comma = strchr(p, ',');
                size_t len = comma ? (size_t)(comma - p) : strlen(p);
                char item[32];

                (void)snprintf(item, sizeof(item), "%.*s", (int)MIN(len, sizeof(item) - 1), p);
                if (len >= sizeof(item) || n >= STEP_IDS_MAX || safe_atoi32(item, &steps[n]) < 0)
                        return error_detail_set(&x->err, ERROR_INVALID, -EINVAL,
                                                "invalid step ID '%s': must be a valid integer",
                                                item);
                n++;
                if (!comma)
                        break;
                p = comma + 1;
        }
        *ret_n = n;
        return 0;
}

static int do_metric_history(struct ctx *x, const struct route_spec *sp)
{
        struct reg_list_req rq = { .kind = reg_kind(REG_METRIC_HISTORY) };
        const char *step_ids = query(x, "stepIds");
        int32_t steps[STEP_IDS_MAX];
        int r;

        if (sp->op == OP_LIST_NESTED) {
                r = path_id(x, "id", "experiment run", &rq.parent_id);
                if (r < 0)
                        return r;
                rq.has_parent = true;
        }
        rq.name = query(x, "name");
        r = list_params(x, &rq);
        if (r >= 0 && step_ids) {
                r = parse_step_ids(x, step_ids, steps, &rq.n_steps);
                rq.steps = steps;
        }
        if (r < 0)
                return r;
        return run_list(x, &rq);
}

/* ---- routing ---- */

static int serve(void *userdata, struct http_req *req, struct http_resp *resp);

#define R(m, p, spec)                                      \
        {                                                  \
                m, REG_BASE_PATH p, serve, (void *)&(spec) \
        }

#define SPEC(name, ...) static const struct route_spec name = { __VA_ARGS__ }

/*
 * The five routes every entity kind has: list, create, get, patch and find (by name or
 * externalId). p is the spec prefix, k the kind, any whether it is the artifact union.
 */
#define CRUD_SPECS(p, k, any)                                                                     \
        SPEC(p##_list, .handler = do_list, .kind = (k), .op = OP_LIST, .any_artifact = (any));    \
        SPEC(p##_create, .handler = do_create, .kind = (k), .op = OP_CREATE,                      \
             .schema = REG_SCHEMA_CREATE, .any_artifact = (any));                                 \
        SPEC(p##_get, .handler = do_get, .kind = (k), .op = OP_GET, .any_artifact = (any));       \
        SPEC(p##_patch, .handler = do_patch, .kind = (k), .op = OP_PATCH, .any_artifact = (any)); \
        SPEC(p##_find, .handler = do_find, .kind = (k), .op = OP_FIND, .any_artifact = (any))

/* Their paths: GET /<one> finds, /<one>s lists and creates, /<one>s/{id} gets and patches. */
#define CRUD_ROUTES(one, p)                                                                   \
        R("GET", one, p##_find), R("GET", one "s", p##_list), R("POST", one "s", p##_create), \
                R("GET", one "s/{id}", p##_get), R("PATCH", one "s/{id}", p##_patch)

CRUD_SPECS(rm, REG_REGISTERED_MODEL, false);
CRUD_SPECS(mv, REG_MODEL_VERSION, false);
CRUD_SPECS(art, REG_MODEL_ARTIFACT, true);
CRUD_SPECS(ma, REG_MODEL_ARTIFACT, false);
CRUD_SPECS(se, REG_SERVING_ENVIRONMENT, false);
CRUD_SPECS(is, REG_INFERENCE_SERVICE, false);
CRUD_SPECS(ex, REG_EXPERIMENT, false);
CRUD_SPECS(er, REG_EXPERIMENT_RUN, false);

/* nested routes and the inference-service links */
SPEC(rm_versions, .handler = do_list, .kind = REG_MODEL_VERSION, .op = OP_LIST_NESTED,
     .parent_kind = REG_REGISTERED_MODEL, .honor_name = true);
SPEC(rm_versions_create, .handler = do_create, .kind = REG_MODEL_VERSION, .op = OP_CREATE_NESTED,
     .schema = REG_SCHEMA_FULL, .parent_kind = REG_REGISTERED_MODEL);
SPEC(mv_artifacts, .handler = do_list, .kind = REG_MODEL_ARTIFACT, .op = OP_LIST_NESTED,
     .parent_kind = REG_MODEL_VERSION, .honor_name = true, .any_artifact = true);
SPEC(mv_artifacts_upsert, .handler = do_upsert_artifact, .kind = REG_MODEL_ARTIFACT,
     .op = OP_CREATE_NESTED, .parent_kind = REG_MODEL_VERSION, .any_artifact = true);
SPEC(se_isvcs, .handler = do_list, .kind = REG_INFERENCE_SERVICE, .op = OP_LIST_NESTED,
     .parent_kind = REG_SERVING_ENVIRONMENT);
SPEC(se_isvcs_create, .handler = do_create, .kind = REG_INFERENCE_SERVICE, .op = OP_CREATE_NESTED,
     .schema = REG_SCHEMA_CREATE, .parent_kind = REG_SERVING_ENVIRONMENT);
SPEC(is_model, .handler = do_is_derived, .kind = REG_INFERENCE_SERVICE, .op = OP_GET,
     .derive = reg_is_model);
SPEC(is_version, .handler = do_is_derived, .kind = REG_INFERENCE_SERVICE, .op = OP_GET,
     .derive = reg_is_version);
SPEC(is_serves, .handler = do_list, .kind = REG_SERVE_MODEL, .op = OP_LIST_NESTED,
     .parent_kind = REG_INFERENCE_SERVICE);
SPEC(is_serves_create, .handler = do_create, .kind = REG_SERVE_MODEL, .op = OP_CREATE,
     .schema = REG_SCHEMA_CREATE, .parent_kind = REG_INFERENCE_SERVICE);
SPEC(ex_runs, .handler = do_list, .kind = REG_EXPERIMENT_RUN, .op = OP_LIST_NESTED,
     .parent_kind = REG_EXPERIMENT);
SPEC(ex_runs_create, .handler = do_create, .kind = REG_EXPERIMENT_RUN, .op = OP_CREATE_NESTED,
     .schema = REG_SCHEMA_FULL, .parent_kind = REG_EXPERIMENT);
SPEC(er_artifacts, .handler = do_list, .kind = REG_MODEL_ARTIFACT, .op = OP_LIST_NESTED,
     .parent_kind = REG_EXPERIMENT_RUN, .any_artifact = true);
SPEC(er_artifacts_upsert, .handler = do_upsert_artifact, .kind = REG_MODEL_ARTIFACT,
     .op = OP_CREATE_NESTED, .parent_kind = REG_EXPERIMENT_RUN, .any_artifact = true);
SPEC(er_history, .handler = do_metric_history, .kind = REG_METRIC_HISTORY, .op = OP_LIST_NESTED,
     .parent_kind = REG_EXPERIMENT_RUN);
SPEC(er_history_all, .handler = do_metric_history, .kind = REG_METRIC_HISTORY, .op = OP_LIST);

/* First match wins: /experiment_runs/metric_history stays before /experiment_runs/{id}. */
static const struct http_route routes[] = {
        CRUD_ROUTES("/artifact", art),
        CRUD_ROUTES("/experiment", ex),
        R("GET", "/experiments/{id}/experiment_runs", ex_runs),
        R("POST", "/experiments/{id}/experiment_runs", ex_runs_create),
        R("GET", "/experiment_runs/metric_history", er_history_all),
        CRUD_ROUTES("/experiment_run", er),
        R("GET", "/experiment_runs/{id}/artifacts", er_artifacts),
        R("POST", "/experiment_runs/{id}/artifacts", er_artifacts_upsert),
        R("GET", "/experiment_runs/{id}/metric_history", er_history),
        CRUD_ROUTES("/inference_service", is),
        R("GET", "/inference_services/{id}/model", is_model),
        R("GET", "/inference_services/{id}/serves", is_serves),
        R("POST", "/inference_services/{id}/serves", is_serves_create),
        R("GET", "/inference_services/{id}/version", is_version),
        CRUD_ROUTES("/model_artifact", ma),
        CRUD_ROUTES("/model_version", mv),
        R("GET", "/model_versions/{id}/artifacts", mv_artifacts),
        R("POST", "/model_versions/{id}/artifacts", mv_artifacts_upsert),
        CRUD_ROUTES("/registered_model", rm),
        R("GET", "/registered_models/{id}/versions", rm_versions),
        R("POST", "/registered_models/{id}/versions", rm_versions_create),
        CRUD_ROUTES("/serving_environment", se),
        R("GET", "/serving_environments/{id}/inference_services", se_isvcs),
        R("POST", "/serving_environments/{id}/inference_services", se_isvcs_create),
};

/* Runs the route's handler on a store connection; errors become the JSON error body. */
static int serve(void *userdata, struct http_req *req, struct http_resp *resp)
{
        const struct route_spec *sp = req->route_data;
        struct ctx x = { .reg = userdata, .req = req, .resp = resp };
        int r;

        r = store_acquire(x.reg->store, &x.conn);
        if (r < 0)
                return reply_error_kind(resp, HTTP_ERR_UNAVAILABLE,
                                        "Datastore service is down or unavailable.");
        x.db = (struct reg_db){ .store = x.reg->store, .conn = x.conn, .err = &x.err };
        r = sp->handler(&x, sp);
        store_release(x.reg->store, x.conn);
        if (r < 0)
                return reply_error(&x);
        return 0;
}

/* ---- readiness ---- */

static bool has_suffix(const char *s, const char *suffix)
{
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && streq(s + a - b, suffix);
}

static int readiness(struct registry *reg, struct http_req *req, struct http_resp *resp,
                     const char *name)
{
        const char *fmt = http_req_query(req, "format");
        bool ok;

        if (!streq(req->method, "GET")) {
                http_resp_set_text(resp, 405, "text/plain; charset=utf-8", "method not allowed\n");
                return 0;
        }
        ok = store_ping(reg->store) >= 0;
        if (fmt && streq(fmt, "json")) {
                struct ctx x = { .resp = resp };
                char ts[64];

                if (format_rfc3339(now_realtime(), ts, sizeof(ts)) < 0)
                        ts[0] = 0;
                return reply_json(&x, ok ? 200 : 503,
                                  json_pack("{s:s,s:{s:{s:s,s:s,s:s,s:{}}},s:{s:i,s:s}}", "status",
                                            ok ? "pass" : "fail", "checks", name, "Name", name,
                                            "Status", ok ? "pass" : "fail", "Message",
                                            ok ? "OK" : "database not reachable", "Details", "meta",
                                            "check_duration_ms", 0, "timestamp", ts));
        }
        http_resp_set_text(resp, ok ? 200 : 503, "text/plain; charset=utf-8",
                           ok ? "OK" : "database not reachable");
        return 0;
}

static int check_query_arg(void *userdata, const char *key, const char *value)
{
        const char **bad = userdata;

        if (value && strstr(value, "\\u0000")) {
                *bad = key;
                return -EINVAL;
        }
        return 0;
}

/*
 * CORS as upstream's middleware: origins http(s)://<any>, credentials not allowed, exposed header
 * Link, preflight max-age 300. Deviation: PATCH is allowed too (upstream omits it, which breaks
 * browser PATCHes).
 */
static int cors(struct http_req *req, struct http_resp *resp, bool *ret_preflight)
{
        const char *origin = http_req_header(req, "Origin");
        const char *want = http_req_header(req, "Access-Control-Request-Method");
        int r;

        *ret_preflight = false;
        if (!origin || !(strneq(origin, "http://", 7) || strneq(origin, "https://", 8)))
                return 0;
        r = http_resp_add_header(resp, "Access-Control-Allow-Origin", origin);
        if (r >= 0)
                r = http_resp_add_header(resp, "Vary", "Origin");
        if (r < 0)
                return r;
        if (streq(req->method, "OPTIONS") && want) {
                *ret_preflight = true;
                r = http_resp_add_header(resp, "Access-Control-Allow-Methods",
                                         "GET, POST, PUT, PATCH, DELETE, OPTIONS");
                if (r >= 0)
                        r = http_resp_add_header(
                                resp, "Access-Control-Allow-Headers",
                                "Accept, Authorization, Content-Type, X-CSRF-Token, X-PINGOTHER");
                if (r >= 0)
                        r = http_resp_add_header(resp, "Access-Control-Max-Age", "300");
                return r;
        }
        return http_resp_add_header(resp, "Access-Control-Expose-Headers", "Link");
}

int registry_handle(void *userdata, struct http_req *req, struct http_resp *resp)
{
        struct registry *reg = userdata;
        const char *bad = NULL;
        char msg[256], path[4096];
        bool preflight;
        int r;

        r = cors(req, resp, &preflight);
        if (r < 0)
                return r;
        if (preflight) {
                http_resp_set_text(resp, 200, "text/plain; charset=utf-8", "");
                return 0;
        }

        if (has_suffix(req->path, "/readyz/isDirty"))
                return readiness(reg, req, resp, "database");
        if (has_suffix(req->path, "/readyz/health"))
                return readiness(reg, req, resp, "model-registry");

        if (http_req_query_foreach(req, check_query_arg, &bad) < 0 && bad) {
                (void)snprintf(
                        msg, sizeof(msg),
                        "Invalid %s query parameter: invalid %s parameter: contains null bytes which are not allowed",
                        bad, bad);
                return reply_error_kind(resp, HTTP_ERR_INVALID, msg);
        }
        /* Newer clients (model-registry >= 0.3.1x) speak the same API under /v1. */
        if (strneq(req->path, REG_V1_PATH "/", strlen(REG_V1_PATH "/"))) {
                (void)snprintf(path, sizeof(path), REG_BASE_PATH "%s",
                               req->path + strlen(REG_V1_PATH));
                if (strlen(req->path) + strlen(REG_BASE_PATH) >= sizeof(path)) {
                        http_resp_set_text(resp, 404, "text/plain; charset=utf-8",
                                           "404 page not found\n");
                        return 0;
                }
        } else
                (void)snprintf(path, sizeof(path), "%s", req->path);
        r = http_route_match(routes, ELEMENTSOF(routes), req->method, path, req);
        if (r == -ENOENT) {
                http_resp_set_text(resp, 404, "text/plain; charset=utf-8", "404 page not found\n");
                return 0;
        }
        if (r == -EOPNOTSUPP) {
                http_resp_set_text(resp, 405, "text/plain; charset=utf-8", "");
                return 0;
        }
        if (r == -EINVAL)
                return reply_error_kind(resp, HTTP_ERR_INVALID, "invalid path escape");
        if (r < 0)
                return r;
        req->route_data = routes[r].data;
        return routes[r].fn(reg, req, resp);
}

int registry_new(struct store *store, struct registry **ret)
{
        struct registry *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        r->store = store;
        *ret = r;
        return 0;
}

struct registry *registry_free(struct registry *r)
{
        free(r);
        return NULL;
}
