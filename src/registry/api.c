/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Handlers of the Model Registry REST API. Each handler: parse path/query/body (codec, filter),
 * call the store through entity.h in a transaction where it writes, encode the answer. Errors
 * are collected in a struct reg_error and written in one place (reply_error).
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
#include "util/base64.h"
#include "util/parse-util.h"
#include "util/time-util.h"
#include "util/uuid.h"

#define PAGE_TOKEN_MAX 1024
#define STEP_IDS_MAX   256

struct registry {
        struct store *store;
};

struct ctx {
        struct registry *reg;
        struct http_req *req;
        struct http_resp *resp;
        struct store_conn *conn;
        struct reg_error err;
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
static enum http_error_kind http_kind(enum reg_error_kind kind)
{
        switch (kind) {
        case REG_ERR_INVALID:
                return HTTP_ERR_INVALID;
        case REG_ERR_UNPROCESSABLE:
                return HTTP_ERR_REQUIRED_FIELD; /* 422 with code "Bad Request", as upstream */
        case REG_ERR_NOT_FOUND:
                return HTTP_ERR_NOT_FOUND;
        case REG_ERR_CONFLICT:
                return HTTP_ERR_CONFLICT;
        case REG_ERR_UNAVAILABLE:
                return HTTP_ERR_UNAVAILABLE;
        case REG_ERR_INTERNAL:
        case REG_ERR__MAX:
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
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                     "invalid %s ID: strconv.ParseInt: parsing \"%s\": invalid syntax: bad request",
                                     word, v ? v : "");
        *ret = id;
        return 0;
}

static int parse_body(struct ctx *x, json_t **ret)
{
        char msg[256];
        const char *data = x->req->body.p ? x->req->body.p : "";
        size_t len = x->req->body.len;

        if (len == 0)
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL, "EOF");
        if (memchr(data, 0, len) || strstr(data, "\\u0000"))
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                     "Request body contains null bytes which are not allowed");
        if (json_parse_bounded(data, len, ret, msg, sizeof(msg)) < 0)
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL, "%s", msg);
        return 0;
}

/* ---- create / update ---- */

/* ---- transactions ---- */

/* ---- list ---- */

static int parse_page_token(struct ctx *x, const char *tok, int64_t *ret_id, int64_t *ret_value)
{
        AUTOFREE char *raw = NULL;
        char *colon;
        int32_t id;
        int64_t value;

        if (strlen(tok) > PAGE_TOKEN_MAX)
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                     "invalid nextPageToken: token too long: bad request");
        if (base64_decode(tok, &raw, NULL) < 0)
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                     "invalid nextPageToken: illegal base64 data: bad request");
        colon = strchr(raw, ':');
        if (!colon)
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                     "invalid nextPageToken: invalid cursor format: bad request");
        *colon = 0;
        if (safe_atoi32(raw, &id) < 0 || safe_atoi64(colon + 1, &value) < 0)
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                     "invalid nextPageToken: invalid cursor values: bad request");
        *ret_id = id;
        *ret_value = value;
        return 0;
}

static char *make_page_token(const struct store_entity *e, enum store_order order)
{
        char raw[64];
        int64_t v = order == STORE_ORDER_CREATE   ? e->create_ms
                    : order == STORE_ORDER_UPDATE ? e->update_ms
                                                  : e->id;

        (void)snprintf(raw, sizeof(raw), "%" PRId64 ":%" PRId64, e->id, v);
        return base64_encode(raw, strlen(raw));
}

/* Parses the common list parameters into q (filter compiled against k). */
static int list_params(struct ctx *x, const struct reg_kind *k, struct store_query *q,
                       struct store_cond **ret_filter, int32_t *ret_page_size)
{
        const char *ps = query(x, "pageSize"), *ob = query(x, "orderBy"),
                   *so = query(x, "sortOrder"), *tok = query(x, "nextPageToken");
        int32_t page_size = 0;
        int r;

        if (ps && safe_atoi32(ps, &page_size) < 0)
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                     "invalid numeric string: strconv.ParseInt: parsing \"%s\": invalid syntax: bad request",
                                     ps);
        q->limit = page_size > 0 ? page_size : 0;
        q->order = STORE_ORDER_ID;
        if (ob && streq(ob, "CREATE_TIME"))
                q->order = STORE_ORDER_CREATE;
        else if (ob && streq(ob, "LAST_UPDATE_TIME"))
                q->order = STORE_ORDER_UPDATE;
        q->desc = so && streq(so, "DESC");
        if (tok) {
                r = parse_page_token(x, tok, &q->cursor_id, &q->cursor_value);
                if (r < 0)
                        return r;
                q->has_cursor = true;
        }
        r = reg_filter_compile(k, query(x, "filterQuery"), ret_filter, &x->err);
        if (r < 0)
                return r;
        *ret_page_size = page_size;
        return 0;
}

/* The list body for n entities: {items, nextPageToken, pageSize, size}. New reference or NULL. */
static json_t *encode_list(const struct store_entity *v, size_t n, bool more,
                           enum store_order order, int32_t page_size)
{
        json_auto_t *items = json_array();
        AUTOFREE char *tok = NULL;

        if (!items)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                const struct reg_kind *k = reg_kind_by_type(v[i].type);

                if (!k || json_array_append_new(items, reg_encode(k, &v[i])) < 0)
                        return NULL;
        }
        if (more && n > 0) {
                tok = make_page_token(&v[n - 1], order);
                if (!tok)
                        return NULL;
        }
        return json_pack("{s:O,s:s,s:i,s:i}", "items", items, "nextPageToken", tok ? tok : "",
                         "pageSize", (int)page_size, "size", (int)n);
}

static int run_list(struct ctx *x, const struct store_query *q, int32_t page_size)
{
        struct store_entity *v = NULL;
        size_t n = 0;
        bool more = false;
        json_t *out;
        int r;

        r = store_entity_list(x->reg->store, x->conn, q, &v, &n, &more);
        if (r < 0)
                return reg_store_error(&x->db, r, "listing");
        out = encode_list(v, n, more, q->order, page_size);
        store_entities_free(v, n);
        if (!out)
                return reg_error_set(&x->err, REG_ERR_INTERNAL, -ENOMEM, "out of memory");
        return reply_json(x, 200, out);
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
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                     "invalid artifact type, must be either ModelArtifact, DocArtifact, DataSet, Metric, or Parameter: bad request");
        *ret_type = k->type;
        return 0;
}

static int do_list(struct ctx *x, const struct route_spec *sp)
{
        const struct reg_kind *k = reg_kind(sp->kind);
        CLEANUP(store_cond_freep) struct store_cond *filter = NULL;
        struct store_query q = { .group = k->group, .types = &k->type, .n_types = 1 };
        const char *one_type = NULL;
        int32_t page_size;
        int r;

        if (sp->any_artifact) {
                r = artifact_type_param(x, &one_type);
                if (r < 0)
                        return r;
                if (one_type) {
                        q.types = &one_type;
                        k = reg_kind_by_type(one_type);
                } else {
                        q.types = reg_artifact_types;
                        q.n_types = reg_n_artifact_types;
                }
        }
        if (sp->op == OP_LIST_NESTED) {
                int64_t pid = 0;

                r = path_id(x, "id", reg_kind(sp->parent_kind)->word, &pid);
                if (r < 0)
                        return r;
                q.has_parent = true;
                q.parent_id = pid;
                if (sp->honor_name) {
                        q.name_eq = query(x, "name");
                        if (!q.name_eq)
                                q.external_id_eq = query(x, "externalId");
                }
        }
        r = list_params(x, k, &q, &filter, &page_size);
        if (r < 0)
                return r;
        q.filter = filter;
        return run_list(x, &q, page_size);
}

/* ---- get / find ---- */

static int do_get(struct ctx *x, const struct route_spec *sp)
{
        const struct reg_kind *k = sp->any_artifact ? NULL : reg_kind(sp->kind);
        const struct reg_kind *ek;
        struct store_entity e;
        int64_t id = 0;
        int r;

        r = path_id(x, "id", k ? k->word : "artifact", &id);
        if (r < 0)
                return r;
        r = reg_load(&x->db, k, id, k ? k->word : "artifact", &e, &ek);
        if (r < 0)
                return r;
        r = reply_json(x, 200, reg_encode(ek, &e));
        store_entity_done(&e);
        return r;
}

static bool is_child_kind(const struct reg_kind *k)
{
        return k->id != REG_REGISTERED_MODEL && k->id != REG_SERVING_ENVIRONMENT &&
               k->id != REG_EXPERIMENT;
}

static int do_find(struct ctx *x, const struct route_spec *sp)
{
        const struct reg_kind *k = reg_kind(sp->kind);
        const char *name = query(x, "name"), *ext = query(x, "externalId"),
                   *parent = query(x, "parentResourceId");
        struct store_query q = { .group = k->group, .types = &k->type, .n_types = 1, .limit = 1 };
        struct store_entity *v = NULL;
        size_t n = 0;
        bool more = false;
        int r;

        if (sp->any_artifact) {
                q.types = reg_artifact_types;
                q.n_types = reg_n_artifact_types;
        }
        if (is_child_kind(k)) {
                if (!((name && parent) || ext))
                        return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                             "invalid parameters call, supply either (name and parentResourceId), or externalId: bad request");
        } else if (!name && !ext)
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                     "invalid parameters call, supply either name or externalId: bad request");
        if (name && (parent || !is_child_kind(k))) {
                q.name_eq = name;
                if (parent) {
                        int32_t pid;

                        if (safe_atoi32(parent, &pid) < 0)
                                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                                     "invalid parentResourceId: strconv.ParseInt: parsing \"%s\": invalid syntax: bad request",
                                                     parent);
                        q.has_parent = true;
                        q.parent_id = pid;
                }
        } else
                q.external_id_eq = ext;

        r = store_entity_list(x->reg->store, x->conn, &q, &v, &n, &more);
        if (r < 0)
                return reg_store_error(&x->db, r, "finding");
        if (n == 0 || more) {
                store_entities_free(v, n);
                return reg_error_set(&x->err, REG_ERR_NOT_FOUND, -ENOENT,
                                     "%s %s found for name=%s, parentResourceId=%s, externalId=%s: not found",
                                     n == 0 ? "no" : "multiple", k->plural_word, name ? name : "",
                                     parent ? parent : "", ext ? ext : "");
        }
        r = reply_json(x, 200, reg_encode(reg_kind_by_type(v[0].type), &v[0]));
        store_entities_free(v, n);
        return r;
}

/* ---- create ---- */

/* Loads the parent that a create must be attached to (404 when missing). */
static int require_parent(struct ctx *x, enum reg_kind_id pk, int64_t pid, struct store_entity *ret)
{
        const struct reg_kind *k = reg_kind(pk);
        int r = reg_load(&x->db, k, pid, k->word, ret, NULL);

        if (r == -ENOENT && pk == REG_EXPERIMENT)
                (void)reg_error_set(&x->err, REG_ERR_NOT_FOUND, r,
                                    "experiment not found: no experiment found for id %" PRId64 ": not found",
                                    pid);
        return r;
}

static int create_entity(struct ctx *x, struct reg_input *in, struct store_entity *e)
{
        const struct reg_kind *k = in->kind;
        struct reg_placement pl = { 0 };
        struct store_entity parent = { 0 };
        int64_t pid = 0;
        int r;

        r = reg_check_required(in, &x->err);
        if (r < 0)
                return r;
        switch (k->id) {
        case REG_MODEL_VERSION:
                r = reg_prop_int(&in->vals, "registered_model_id", &pid);
                if (r >= 0)
                        r = require_parent(x, REG_REGISTERED_MODEL, pid, &parent);
                pl.scope_parent = true;
                break;
        case REG_INFERENCE_SERVICE:
                r = reg_prop_int(&in->vals, "serving_environment_id", &pid);
                if (r >= 0)
                        r = require_parent(x, REG_SERVING_ENVIRONMENT, pid, &parent);
                if (r == -ENOENT)
                        (void)reg_error_set(&x->err, REG_ERR_NOT_FOUND, r,
                                            "no serving environment found for id %" PRId64 ": not found",
                                            pid);
                pl.scope_parent = true;
                break;
        case REG_EXPERIMENT_RUN:
                r = reg_prop_int(&in->vals, "experiment_id", &pid);
                if (r >= 0)
                        r = require_parent(x, REG_EXPERIMENT, pid, &parent);
                pl.scope_parent = true;
                break;
        default:
                if (k->artifact_type)
                        pl.scope_uuid = true;
                break;
        }
        store_entity_done(&parent);
        if (r < 0)
                return r;
        pl.parent_id = pid;
        r = reg_build_new(&x->db, in, &pl, e);
        if (r < 0)
                return r;
        return reg_insert(&x->db, k, e);
}

static int reply_entity(struct ctx *x, unsigned status, const struct reg_kind *k,
                        const struct store_entity *e)
{
        return reply_json(x, status, reg_encode(k, e));
}

/* Nested creates: the parent id comes from the path and wins over the body's. */
static int set_path_parent(struct ctx *x, const struct route_spec *sp, const struct reg_kind *k,
                           struct reg_input *in)
{
        const struct reg_kind *pk = reg_kind(sp->parent_kind);
        int64_t pid = 0;
        int r;

        r = path_id(x, "id", pk->word, &pid);
        if (r < 0)
                return r;
        for (const struct reg_field *f = k->fields; f->json; f++) {
                if (!(f->flags & REG_FF_PARENT))
                        continue;
                if (sp->schema == REG_SCHEMA_FULL && !store_entity_prop(&in->vals, f->prop, false))
                        return reg_error_set(&x->err, REG_ERR_UNPROCESSABLE, -EINVAL,
                                             "required field '%s' is zero value.", f->json);
                r = store_entity_set_int(&in->vals, f->prop, false, pid);
                if (r < 0)
                        return reg_error_set(&x->err, REG_ERR_INTERNAL, r, "out of memory");
        }
        return 0;
}

/* POST /inference_services/{id}/serves: the parent is the inference service of the path. */
static int create_serve_model(struct ctx *x, const struct reg_kind *k, struct reg_input *in,
                              struct store_entity *e)
{
        struct store_entity is = { 0 };
        struct reg_placement pl = { .scope_parent = true };
        int64_t pid = 0;
        int r;

        r = path_id(x, "id", "inference service", &pid);
        if (r < 0)
                return r;
        r = reg_check_required(in, &x->err);
        if (r < 0)
                return r;
        r = reg_tx_begin(&x->db);
        if (r < 0)
                return r;
        r = reg_load(&x->db, reg_kind(REG_INFERENCE_SERVICE), pid, "inference service", &is, NULL);
        store_entity_done(&is);
        pl.parent_id = pid;
        if (r >= 0)
                r = reg_build_new(&x->db, in, &pl, e);
        if (r >= 0)
                r = reg_insert(&x->db, k, e);
        return reg_tx_end(&x->db, r);
}

/* Creates the decoded body in; on success e holds the new entity. */
static int create_decoded(struct ctx *x, const struct route_spec *sp, const struct reg_kind *k,
                          struct reg_input *in, struct store_entity *e)
{
        int r;

        if (sp->op == OP_CREATE_NESTED) {
                r = set_path_parent(x, sp, k, in);
                if (r < 0)
                        return r;
        }
        if (sp->kind == REG_SERVE_MODEL)
                return create_serve_model(x, k, in, e);
        r = reg_tx_begin(&x->db);
        if (r < 0)
                return r;
        return reg_tx_end(&x->db, create_entity(x, in, e));
}

static int do_create(struct ctx *x, const struct route_spec *sp)
{
        json_auto_t *body = NULL;
        struct reg_input in = { 0 };
        struct store_entity e = { 0 };
        const struct reg_kind *k = reg_kind(sp->kind);
        int r;

        r = parse_body(x, &body);
        if (r < 0)
                return r;
        if (sp->any_artifact) {
                k = reg_kind_by_artifact_type(reg_body_artifact_type(body));
                if (!k)
                        return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                             "invalid artifact type, must be either ModelArtifact, DocArtifact, DataSet, Metric, or Parameter: bad request");
        }
        r = reg_decode(k, sp->schema, body, &in, &x->err);
        if (r >= 0)
                r = create_decoded(x, sp, k, &in, &e);
        if (r >= 0)
                r = reply_entity(x, 201, k, &e);
        store_entity_done(&e);
        reg_input_done(&in);
        return r;
}

/* ---- patch ---- */

/* Inside the transaction: loads the entity, checks the artifact type, merges and writes. */
static int patch_in_tx(struct ctx *x, const struct route_spec *sp, const struct reg_kind *k,
                       int64_t id, json_t *body, struct store_entity *e,
                       const struct reg_kind **ek, struct reg_input *in)
{
        int r;

        /* locked until the transaction ends: concurrent PATCHes never lose each other's fields */
        r = reg_load_for_update(&x->db, k, id, k ? k->word : "artifact", e, ek);
        if (r < 0)
                return r;
        if (sp->any_artifact) {
                const char *at = reg_body_artifact_type(body);

                if (at && !streq(at, (*ek)->artifact_type))
                        return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                             "cannot change artifact type from '%s' to '%s': artifact type is immutable",
                                             (*ek)->artifact_type, at);
        }
        r = reg_decode(*ek, REG_SCHEMA_UPDATE, body, in, &x->err);
        if (r < 0)
                return r;
        r = reg_merge(&x->db, e, in);
        if (r < 0)
                return r;
        return reg_update(&x->db, *ek, e);
}

static int do_patch(struct ctx *x, const struct route_spec *sp)
{
        json_auto_t *body = NULL;
        struct reg_input in = { 0 };
        struct store_entity e = { 0 };
        const struct reg_kind *k = sp->any_artifact ? NULL : reg_kind(sp->kind);
        const struct reg_kind *ek = NULL;
        int64_t id = 0;
        int r;

        r = path_id(x, "id", k ? k->word : "artifact", &id);
        if (r < 0)
                return r;
        r = parse_body(x, &body);
        if (r < 0)
                return r;
        r = reg_tx_begin(&x->db);
        if (r < 0)
                return r;
        r = reg_tx_end(&x->db, patch_in_tx(x, sp, k, id, body, &e, &ek, &in));
        if (r >= 0)
                r = reply_entity(x, 200, ek, &e);
        store_entity_done(&e);
        reg_input_done(&in);
        return r;
}

/* ---- artifacts under a model version / experiment run (upsert) ---- */

static int log_metric_history(struct ctx *x, const struct store_entity *metric, int64_t run_id)
{
        struct store_entity h = { .group = STORE_GROUP_ARTIFACT, .parent_id = run_id };
        char uuid[37];
        int r;

        r = uuid_random(uuid);
        if (r < 0)
                return reg_error_set(&x->err, REG_ERR_INTERNAL, r, "no randomness");
        h.type = strdup("MetricHistory");
        h.scope = strdup(uuid);
        h.name = strdup(metric->name);
        if (metric->external_id)
                h.external_id = NULL; /* external ids are unique; history rows carry none */
        h.create_ms = h.update_ms = metric->update_ms;
        if (!h.type || !h.scope || !h.name) {
                store_entity_done(&h);
                return reg_error_set(&x->err, REG_ERR_INTERNAL, -ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < metric->n_props && r >= 0; i++) {
                const struct store_prop *p = &metric->props[i];

                switch (p->type) {
                case STORE_P_STRING:
                case STORE_P_STRUCT:
                        r = store_entity_set_string(&h, p->name, p->custom, p->type, p->s);
                        break;
                case STORE_P_INT:
                        r = store_entity_set_int(&h, p->name, p->custom, p->i);
                        break;
                case STORE_P_DOUBLE:
                        r = store_entity_set_double(&h, p->name, p->custom, p->d);
                        break;
                case STORE_P_BOOL:
                        r = store_entity_set_bool(&h, p->name, p->custom, p->b);
                        break;
                }
        }
        if (r < 0) {
                store_entity_done(&h);
                return reg_error_set(&x->err, REG_ERR_INTERNAL, r, "out of memory");
        }
        r = store_entity_insert(x->reg->store, x->conn, &h);
        store_entity_done(&h);
        return r < 0 ? reg_store_error(&x->db, r, "logging metric history") : 0;
}

/* An artifact logged under an experiment run records the run and its experiment. */
static int set_run_ids(struct ctx *x, struct store_entity *e, int64_t exp_id, int64_t run_id)
{
        int r;

        r = store_entity_set_int(e, "experiment_id", false, exp_id);
        if (r >= 0)
                r = store_entity_set_int(e, "experiment_run_id", false, run_id);
        if (r < 0)
                return reg_error_set(&x->err, REG_ERR_INTERNAL, r, "out of memory");
        return 0;
}

/* One POST .../artifacts upsert (B.10.4) in progress. */
struct upsert {
        const struct reg_kind *k; /* the body's artifact kind */
        int64_t pid;              /* the parent of the path */
        bool run;                 /* the parent is an experiment run */
        unsigned status;          /* 201 for new model/doc artifacts, else 200 */
        struct reg_input *in;     /* borrowed; the decoded body */
        struct store_entity *e;   /* borrowed; the artifact written */
};

/* The body names an existing artifact by id: it must be of the body's kind; moves it under pid. */
static int upsert_load_by_id(struct ctx *x, struct upsert *u)
{
        const struct reg_kind *ek;
        char scope[32];
        int r;

        r = reg_load_for_update(&x->db, NULL, u->in->id, "artifact", u->e, &ek);
        if (r == -ENOENT)
                x->err.kind = REG_ERR_INVALID;
        if (r < 0)
                return r;
        if (ek != u->k)
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                     "artifact with id %" PRId64 " is not a %s artifact: bad request",
                                     u->in->id, u->k->artifact_type);
        /* names are immutable (upstream keeps the old one silently; we say so) */
        if (u->in->has_name && u->in->vals.name && *u->in->vals.name &&
            !streq(u->in->vals.name, u->e->name))
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                     "cannot change name of artifact %" PRId64 " from '%s' to '%s': name is immutable: bad request",
                                     u->in->id, u->e->name, u->in->vals.name);
        r = reg_merge(&x->db, u->e, u->in);
        if (r < 0 || u->e->parent_id == u->pid)
                return r;
        u->e->parent_id = u->pid;
        (void)snprintf(scope, sizeof(scope), "%" PRId64, u->pid);
        free(u->e->scope);
        u->e->scope = strdup(scope);
        if (!u->e->scope)
                return reg_error_set(&x->err, REG_ERR_INTERNAL, -ENOMEM, "out of memory");
        return 0;
}

/* Log-by-name: metrics and parameters update the artifact of that kind and name under pid. */
static int upsert_find_by_name(struct ctx *x, struct upsert *u, bool *ret_existing)
{
        const struct reg_kind *k = u->k;
        struct store_query q = { .group = k->group, .types = &k->type, .n_types = 1,
                                 .has_parent = true, .parent_id = u->pid,
                                 .name_eq = u->in->vals.name, .limit = 1 };
        struct store_entity *v = NULL;
        size_t n = 0;
        bool more;
        int r;

        *ret_existing = false;
        if ((k->id != REG_METRIC && k->id != REG_PARAMETER) || !u->in->has_name ||
            !u->in->vals.name || !*u->in->vals.name)
                return 0;
        r = store_entity_list(x->reg->store, x->conn, &q, &v, &n, &more);
        if (r < 0)
                return reg_store_error(&x->db, r, "finding");
        if (n > 0) {
                /* read again, locked, for the read-modify-write */
                int64_t id = v[0].id;

                store_entities_free(v, n);
                r = reg_load_for_update(&x->db, k, id, k->word, u->e, NULL);
                if (r < 0)
                        return r;
                *ret_existing = true;
                return 0;
        }
        store_entities_free(v, n);
        return 0;
}

/* Inside the transaction: resolves the artifact (by id, by name or new) and writes it. */
static int upsert_in_tx(struct ctx *x, struct upsert *u, const struct reg_kind *pk)
{
        struct store_entity parent = { 0 };
        int64_t exp_id = 0;
        bool existing = true;
        int r;

        r = reg_load(&x->db, pk, u->pid, pk->word, &parent, NULL);
        if (r < 0)
                return r;
        if (u->run)
                (void)reg_prop_int(&parent, "experiment_id", &exp_id);
        store_entity_done(&parent);
        if (u->in->has_id)
                r = upsert_load_by_id(x, u);
        else
                r = upsert_find_by_name(x, u, &existing);
        if (r >= 0 && !u->in->has_id && existing)
                r = reg_merge(&x->db, u->e, u->in);
        if (r >= 0 && !existing) {
                struct reg_placement pl = { .parent_id = u->pid,
                                            .scope_parent = u->k->id != REG_DATASET,
                                            .scope_uuid = u->k->id == REG_DATASET };

                r = reg_build_new(&x->db, u->in, &pl, u->e);
                if (u->k->id == REG_MODEL_ARTIFACT || u->k->id == REG_DOC_ARTIFACT)
                        u->status = 201;
        }
        if (r >= 0 && u->run)
                r = set_run_ids(x, u->e, exp_id, u->pid);
        if (r >= 0)
                r = existing ? reg_update(&x->db, u->k, u->e) : reg_insert(&x->db, u->k, u->e);
        if (r >= 0 && u->run && u->k->id == REG_METRIC)
                r = log_metric_history(x, u->e, u->pid);
        return r;
}

static int do_upsert_artifact(struct ctx *x, const struct route_spec *sp)
{
        json_auto_t *body = NULL;
        struct reg_input in = { 0 };
        struct store_entity e = { 0 };
        const struct reg_kind *pk = reg_kind(sp->parent_kind);
        struct upsert u = { .run = sp->parent_kind == REG_EXPERIMENT_RUN, .status = 200,
                            .in = &in, .e = &e };
        int r;

        r = path_id(x, "id", pk->word, &u.pid);
        if (r < 0)
                return r;
        r = parse_body(x, &body);
        if (r < 0)
                return r;
        u.k = reg_kind_by_artifact_type(reg_body_artifact_type(body));
        if (!u.k)
                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                     "invalid artifact type, must be either ModelArtifact, DocArtifact, DataSet, Metric, or Parameter: bad request");
        r = reg_decode(u.k, REG_SCHEMA_FULL, body, &in, &x->err);
        if (r < 0)
                return r;
        if (u.k->id == REG_METRIC && u.run && !store_entity_prop(&in.vals, "value", false) &&
            !in.has_id)
                r = reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                  "metric value is required: bad request");
        if (r >= 0)
                r = reg_tx_begin(&x->db);
        if (r >= 0) {
                r = reg_tx_end(&x->db, upsert_in_tx(x, &u, pk));
                if (r >= 0)
                        r = reply_entity(x, u.status, u.k, &e);
        }
        store_entity_done(&e);
        reg_input_done(&in);
        return r;
}

/* ---- derived resources of an inference service ---- */

static int do_is_model(struct ctx *x, const struct route_spec *sp)
{
        struct store_entity is = { 0 }, rm = { 0 };
        int64_t id = 0, rmid = 0;
        int r;

        (void)sp;
        r = path_id(x, "id", "inference service", &id);
        if (r < 0)
                return r;
        r = reg_load(&x->db, reg_kind(REG_INFERENCE_SERVICE), id, "inference service", &is, NULL);
        if (r < 0)
                return r;
        if (reg_prop_int(&is, "registered_model_id", &rmid) < 0) {
                store_entity_done(&is);
                return reg_error_set(&x->err, REG_ERR_NOT_FOUND, -ENOENT,
                                     "no registered model found for inference service %" PRId64 ": not found",
                                     id);
        }
        store_entity_done(&is);
        r = reg_load(&x->db, reg_kind(REG_REGISTERED_MODEL), rmid, "registered model", &rm, NULL);
        if (r < 0)
                return r;
        r = reply_entity(x, 200, reg_kind(REG_REGISTERED_MODEL), &rm);
        store_entity_done(&rm);
        return r;
}

static int do_is_version(struct ctx *x, const struct route_spec *sp)
{
        const struct reg_kind *mvk = reg_kind(REG_MODEL_VERSION);
        struct store_entity is = { 0 }, mv = { 0 };
        int64_t id = 0, mvid = 0, rmid = 0;
        int r;

        (void)sp;
        r = path_id(x, "id", "inference service", &id);
        if (r < 0)
                return r;
        r = reg_load(&x->db, reg_kind(REG_INFERENCE_SERVICE), id, "inference service", &is, NULL);
        if (r < 0)
                return r;
        (void)reg_prop_int(&is, "model_version_id", &mvid);
        (void)reg_prop_int(&is, "registered_model_id", &rmid);
        store_entity_done(&is);
        if (mvid != 0) {
                r = reg_load(&x->db, mvk, mvid, "model version", &mv, NULL);
                if (r < 0)
                        return r;
        } else {
                struct store_query q = { .group = mvk->group, .types = &mvk->type, .n_types = 1,
                                         .has_parent = true, .parent_id = rmid,
                                         .order = STORE_ORDER_CREATE, .desc = true, .limit = 1 };
                struct store_entity *v = NULL;
                size_t n = 0;
                bool more;

                r = store_entity_list(x->reg->store, x->conn, &q, &v, &n, &more);
                if (r < 0)
                        return reg_store_error(&x->db, r, "listing");
                if (n == 0) {
                        store_entities_free(v, n);
                        return reg_error_set(&x->err, REG_ERR_NOT_FOUND, -ENOENT,
                                             "no model versions found for id %" PRId64 ": not found", id);
                }
                mv = v[0];
                v[0] = (struct store_entity){ 0 };
                store_entities_free(v, n);
        }
        r = reply_entity(x, 200, mvk, &mv);
        store_entity_done(&mv);
        return r;
}

/* ---- metric history ---- */

static int do_metric_history(struct ctx *x, const struct route_spec *sp)
{
        const struct reg_kind *k = reg_kind(REG_METRIC_HISTORY);
        CLEANUP(store_cond_freep) struct store_cond *filter = NULL;
        struct store_query q = { .group = k->group, .types = &k->type, .n_types = 1 };
        const char *step_ids = query(x, "stepIds");
        int32_t page_size;
        int r;

        if (sp->op == OP_LIST_NESTED) {
                int64_t pid = 0;

                r = path_id(x, "id", "experiment run", &pid);
                if (r < 0)
                        return r;
                q.has_parent = true;
                q.parent_id = pid;
        }
        q.name_eq = query(x, "name");
        r = list_params(x, k, &q, &filter, &page_size);
        if (r < 0)
                return r;
        if (step_ids) {
                struct store_cond *c = calloc(1, sizeof(*c)), *and;
                const char *p = step_ids;

                if (!c)
                        return reg_error_set(&x->err, REG_ERR_INTERNAL, -ENOMEM, "out of memory");
                c->kind = STORE_COND_CMP;
                c->prop = strdup("step");
                c->vcol = STORE_VCOL_INT;
                c->op = STORE_OP_IN;
                c->vals = calloc(STEP_IDS_MAX, sizeof(*c->vals));
                if (!c->prop || !c->vals) {
                        store_cond_free(c);
                        return reg_error_set(&x->err, REG_ERR_INTERNAL, -ENOMEM, "out of memory");
                }
                for (;;) {
                        const char *comma = strchr(p, ',');
                        size_t len = comma ? (size_t)(comma - p) : strlen(p);
                        char item[32];
                        int32_t step;

                        (void)snprintf(item, sizeof(item), "%.*s", (int)MIN(len, sizeof(item) - 1), p);
                        if (len >= sizeof(item) || safe_atoi32(item, &step) < 0 ||
                            c->n_vals >= STEP_IDS_MAX) {
                                store_cond_free(c);
                                return reg_error_set(&x->err, REG_ERR_INVALID, -EINVAL,
                                                     "invalid step ID '%s': must be a valid integer",
                                                     item);
                        }
                        c->vals[c->n_vals++] = SV_INT(step);
                        if (!comma)
                                break;
                        p = comma + 1;
                }
                if (filter) {
                        and = calloc(1, sizeof(*and));
                        if (and)
                                and->kids = calloc(2, sizeof(*and->kids));
                        if (!and || !and->kids) {
                                store_cond_free(and);
                                store_cond_free(c);
                                return reg_error_set(&x->err, REG_ERR_INTERNAL, -ENOMEM, "out of memory");
                        }
                        and->kind = STORE_COND_AND;
                        and->kids[0] = TAKE_PTR(filter);
                        and->kids[1] = c;
                        and->n_kids = 2;
                        filter = and;
                } else
                        filter = c;
        }
        q.filter = filter;
        return run_list(x, &q, page_size);
}

/* ---- routing ---- */

static int serve(void *userdata, struct http_req *req, struct http_resp *resp);

#define R(m, p, spec) { m, REG_BASE_PATH p, serve, (void *)&(spec) }

#define SPEC(name, ...) static const struct route_spec name = { __VA_ARGS__ }

/* registered models */
SPEC(rm_list, .handler = do_list, .kind = REG_REGISTERED_MODEL, .op = OP_LIST);
SPEC(rm_create, .handler = do_create, .kind = REG_REGISTERED_MODEL, .op = OP_CREATE, .schema = REG_SCHEMA_CREATE);
SPEC(rm_get, .handler = do_get, .kind = REG_REGISTERED_MODEL, .op = OP_GET);
SPEC(rm_patch, .handler = do_patch, .kind = REG_REGISTERED_MODEL, .op = OP_PATCH);
SPEC(rm_find, .handler = do_find, .kind = REG_REGISTERED_MODEL, .op = OP_FIND);
SPEC(rm_versions, .handler = do_list, .kind = REG_MODEL_VERSION, .op = OP_LIST_NESTED,
     .parent_kind = REG_REGISTERED_MODEL, .honor_name = true);
SPEC(rm_versions_create, .handler = do_create, .kind = REG_MODEL_VERSION, .op = OP_CREATE_NESTED,
     .schema = REG_SCHEMA_FULL, .parent_kind = REG_REGISTERED_MODEL);
/* model versions */
SPEC(mv_list, .handler = do_list, .kind = REG_MODEL_VERSION, .op = OP_LIST);
SPEC(mv_create, .handler = do_create, .kind = REG_MODEL_VERSION, .op = OP_CREATE, .schema = REG_SCHEMA_CREATE);
SPEC(mv_get, .handler = do_get, .kind = REG_MODEL_VERSION, .op = OP_GET);
SPEC(mv_patch, .handler = do_patch, .kind = REG_MODEL_VERSION, .op = OP_PATCH);
SPEC(mv_find, .handler = do_find, .kind = REG_MODEL_VERSION, .op = OP_FIND);
SPEC(mv_artifacts, .handler = do_list, .kind = REG_MODEL_ARTIFACT, .op = OP_LIST_NESTED,
     .parent_kind = REG_MODEL_VERSION, .honor_name = true, .any_artifact = true);
SPEC(mv_artifacts_upsert, .handler = do_upsert_artifact, .kind = REG_MODEL_ARTIFACT, .op = OP_CREATE_NESTED,
     .parent_kind = REG_MODEL_VERSION, .any_artifact = true);
/* artifacts */
SPEC(art_list, .handler = do_list, .kind = REG_MODEL_ARTIFACT, .op = OP_LIST, .any_artifact = true);
SPEC(art_create, .handler = do_create, .kind = REG_MODEL_ARTIFACT, .op = OP_CREATE, .schema = REG_SCHEMA_CREATE,
     .any_artifact = true);
SPEC(art_get, .handler = do_get, .kind = REG_MODEL_ARTIFACT, .op = OP_GET, .any_artifact = true);
SPEC(art_patch, .handler = do_patch, .kind = REG_MODEL_ARTIFACT, .op = OP_PATCH, .any_artifact = true);
SPEC(art_find, .handler = do_find, .kind = REG_MODEL_ARTIFACT, .op = OP_FIND, .any_artifact = true);
SPEC(ma_list, .handler = do_list, .kind = REG_MODEL_ARTIFACT, .op = OP_LIST);
SPEC(ma_create, .handler = do_create, .kind = REG_MODEL_ARTIFACT, .op = OP_CREATE, .schema = REG_SCHEMA_CREATE);
SPEC(ma_get, .handler = do_get, .kind = REG_MODEL_ARTIFACT, .op = OP_GET);
SPEC(ma_patch, .handler = do_patch, .kind = REG_MODEL_ARTIFACT, .op = OP_PATCH);
SPEC(ma_find, .handler = do_find, .kind = REG_MODEL_ARTIFACT, .op = OP_FIND);
/* serving environments */
SPEC(se_list, .handler = do_list, .kind = REG_SERVING_ENVIRONMENT, .op = OP_LIST);
SPEC(se_create, .handler = do_create, .kind = REG_SERVING_ENVIRONMENT, .op = OP_CREATE, .schema = REG_SCHEMA_CREATE);
SPEC(se_get, .handler = do_get, .kind = REG_SERVING_ENVIRONMENT, .op = OP_GET);
SPEC(se_patch, .handler = do_patch, .kind = REG_SERVING_ENVIRONMENT, .op = OP_PATCH);
SPEC(se_find, .handler = do_find, .kind = REG_SERVING_ENVIRONMENT, .op = OP_FIND);
SPEC(se_isvcs, .handler = do_list, .kind = REG_INFERENCE_SERVICE, .op = OP_LIST_NESTED,
     .parent_kind = REG_SERVING_ENVIRONMENT);
SPEC(se_isvcs_create, .handler = do_create, .kind = REG_INFERENCE_SERVICE, .op = OP_CREATE_NESTED,
     .schema = REG_SCHEMA_CREATE, .parent_kind = REG_SERVING_ENVIRONMENT);
/* inference services */
SPEC(is_list, .handler = do_list, .kind = REG_INFERENCE_SERVICE, .op = OP_LIST);
SPEC(is_create, .handler = do_create, .kind = REG_INFERENCE_SERVICE, .op = OP_CREATE, .schema = REG_SCHEMA_CREATE);
SPEC(is_get, .handler = do_get, .kind = REG_INFERENCE_SERVICE, .op = OP_GET);
SPEC(is_patch, .handler = do_patch, .kind = REG_INFERENCE_SERVICE, .op = OP_PATCH);
SPEC(is_find, .handler = do_find, .kind = REG_INFERENCE_SERVICE, .op = OP_FIND);
SPEC(is_model, .handler = do_is_model, .kind = REG_INFERENCE_SERVICE, .op = OP_GET);
SPEC(is_version, .handler = do_is_version, .kind = REG_INFERENCE_SERVICE, .op = OP_GET);
SPEC(is_serves, .handler = do_list, .kind = REG_SERVE_MODEL, .op = OP_LIST_NESTED,
     .parent_kind = REG_INFERENCE_SERVICE);
SPEC(is_serves_create, .handler = do_create, .kind = REG_SERVE_MODEL, .op = OP_CREATE, .schema = REG_SCHEMA_CREATE,
     .parent_kind = REG_INFERENCE_SERVICE);
/* experiments */
SPEC(ex_list, .handler = do_list, .kind = REG_EXPERIMENT, .op = OP_LIST);
SPEC(ex_create, .handler = do_create, .kind = REG_EXPERIMENT, .op = OP_CREATE, .schema = REG_SCHEMA_CREATE);
SPEC(ex_get, .handler = do_get, .kind = REG_EXPERIMENT, .op = OP_GET);
SPEC(ex_patch, .handler = do_patch, .kind = REG_EXPERIMENT, .op = OP_PATCH);
SPEC(ex_find, .handler = do_find, .kind = REG_EXPERIMENT, .op = OP_FIND);
SPEC(ex_runs, .handler = do_list, .kind = REG_EXPERIMENT_RUN, .op = OP_LIST_NESTED, .parent_kind = REG_EXPERIMENT);
SPEC(ex_runs_create, .handler = do_create, .kind = REG_EXPERIMENT_RUN, .op = OP_CREATE_NESTED,
     .schema = REG_SCHEMA_FULL, .parent_kind = REG_EXPERIMENT);
/* experiment runs */
SPEC(er_list, .handler = do_list, .kind = REG_EXPERIMENT_RUN, .op = OP_LIST);
SPEC(er_create, .handler = do_create, .kind = REG_EXPERIMENT_RUN, .op = OP_CREATE, .schema = REG_SCHEMA_CREATE);
SPEC(er_get, .handler = do_get, .kind = REG_EXPERIMENT_RUN, .op = OP_GET);
SPEC(er_patch, .handler = do_patch, .kind = REG_EXPERIMENT_RUN, .op = OP_PATCH);
SPEC(er_find, .handler = do_find, .kind = REG_EXPERIMENT_RUN, .op = OP_FIND);
SPEC(er_artifacts, .handler = do_list, .kind = REG_MODEL_ARTIFACT, .op = OP_LIST_NESTED,
     .parent_kind = REG_EXPERIMENT_RUN, .any_artifact = true);
SPEC(er_artifacts_upsert, .handler = do_upsert_artifact, .kind = REG_MODEL_ARTIFACT, .op = OP_CREATE_NESTED,
     .parent_kind = REG_EXPERIMENT_RUN, .any_artifact = true);
SPEC(er_history, .handler = do_metric_history, .kind = REG_METRIC_HISTORY, .op = OP_LIST_NESTED,
     .parent_kind = REG_EXPERIMENT_RUN);
SPEC(er_history_all, .handler = do_metric_history, .kind = REG_METRIC_HISTORY, .op = OP_LIST);

static const struct http_route routes[] = {
        R("GET", "/artifact", art_find),
        R("GET", "/artifacts", art_list),
        R("POST", "/artifacts", art_create),
        R("GET", "/artifacts/{id}", art_get),
        R("PATCH", "/artifacts/{id}", art_patch),
        R("GET", "/experiment", ex_find),
        R("GET", "/experiment_run", er_find),
        R("GET", "/experiment_runs", er_list),
        R("POST", "/experiment_runs", er_create),
        R("GET", "/experiment_runs/metric_history", er_history_all),
        R("GET", "/experiment_runs/{id}", er_get),
        R("PATCH", "/experiment_runs/{id}", er_patch),
        R("GET", "/experiment_runs/{id}/artifacts", er_artifacts),
        R("POST", "/experiment_runs/{id}/artifacts", er_artifacts_upsert),
        R("GET", "/experiment_runs/{id}/metric_history", er_history),
        R("GET", "/experiments", ex_list),
        R("POST", "/experiments", ex_create),
        R("GET", "/experiments/{id}", ex_get),
        R("PATCH", "/experiments/{id}", ex_patch),
        R("GET", "/experiments/{id}/experiment_runs", ex_runs),
        R("POST", "/experiments/{id}/experiment_runs", ex_runs_create),
        R("GET", "/inference_service", is_find),
        R("GET", "/inference_services", is_list),
        R("POST", "/inference_services", is_create),
        R("GET", "/inference_services/{id}", is_get),
        R("PATCH", "/inference_services/{id}", is_patch),
        R("GET", "/inference_services/{id}/model", is_model),
        R("GET", "/inference_services/{id}/serves", is_serves),
        R("POST", "/inference_services/{id}/serves", is_serves_create),
        R("GET", "/inference_services/{id}/version", is_version),
        R("GET", "/model_artifact", ma_find),
        R("GET", "/model_artifacts", ma_list),
        R("POST", "/model_artifacts", ma_create),
        R("GET", "/model_artifacts/{id}", ma_get),
        R("PATCH", "/model_artifacts/{id}", ma_patch),
        R("GET", "/model_version", mv_find),
        R("GET", "/model_versions", mv_list),
        R("POST", "/model_versions", mv_create),
        R("GET", "/model_versions/{id}", mv_get),
        R("PATCH", "/model_versions/{id}", mv_patch),
        R("GET", "/model_versions/{id}/artifacts", mv_artifacts),
        R("POST", "/model_versions/{id}/artifacts", mv_artifacts_upsert),
        R("GET", "/registered_model", rm_find),
        R("GET", "/registered_models", rm_list),
        R("POST", "/registered_models", rm_create),
        R("GET", "/registered_models/{id}", rm_get),
        R("PATCH", "/registered_models/{id}", rm_patch),
        R("GET", "/registered_models/{id}/versions", rm_versions),
        R("POST", "/registered_models/{id}/versions", rm_versions_create),
        R("GET", "/serving_environment", se_find),
        R("GET", "/serving_environments", se_list),
        R("POST", "/serving_environments", se_create),
        R("GET", "/serving_environments/{id}", se_get),
        R("PATCH", "/serving_environments/{id}", se_patch),
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
                return reply_error_kind(resp, HTTP_ERR_UNAVAILABLE, "Datastore service is down or unavailable.");
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

static int check_db(struct registry *reg)
{
        struct store_conn *c;
        int r;

        r = store_acquire(reg->store, &c);
        if (r < 0)
                return r;
        r = store_exec(reg->store, c, "SELECT COALESCE(MAX(version), 0) FROM schema_version", NULL,
                       0, NULL, NULL);
        store_release(reg->store, c);
        return r < 0 ? r : 0;
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
        ok = check_db(reg) >= 0;
        if (fmt && streq(fmt, "json")) {
                struct ctx x = { .resp = resp };
                char ts[64];

                if (format_rfc3339(now_realtime(), ts, sizeof(ts)) < 0)
                        ts[0] = 0;
                return reply_json(&x, ok ? 200 : 503,
                                  json_pack("{s:s,s:{s:{s:s,s:s,s:s,s:{}}},s:{s:i,s:s}}", "status",
                                            ok ? "pass" : "fail", "checks", name, "Name", name,
                                            "Status", ok ? "pass" : "fail", "Message",
                                            ok ? "OK" : "database not reachable", "Details",
                                            "meta", "check_duration_ms", 0, "timestamp", ts));
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
                        r = http_resp_add_header(resp, "Access-Control-Allow-Headers",
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
                (void)snprintf(msg, sizeof(msg),
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
