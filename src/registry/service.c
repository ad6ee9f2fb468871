/* SPDX-License-Identifier: Apache-2.0 */
#include "registry/service.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"
#include "util/parse-util.h"
#include "util/uuid.h"

/* ---- operations ---- */

#define PAGE_TOKEN_MAX 1024

void reg_result_done(struct reg_result *r)
{
        store_entity_done(&r->e);
        *r = (struct reg_result){ 0 };
}

void reg_list_done(struct reg_list *l)
{
        store_entities_free(l->items, l->n);
        free(l->next_page_token);
        *l = (struct reg_list){ 0 };
}

int reg_get(struct reg_db *db, const struct reg_kind *k, int64_t id, struct reg_result *ret)
{
        *ret = (struct reg_result){ 0 };
        return reg_load(db, k, id, k ? k->word : "artifact", &ret->e, &ret->kind);
}

static bool is_child_kind(const struct reg_kind *k)
{
        return k->id != REG_REGISTERED_MODEL && k->id != REG_SERVING_ENVIRONMENT &&
               k->id != REG_EXPERIMENT;
}

/* The store query of a find-one request: by name (under its parent) or by externalId. */
static int find_query(struct reg_db *db, const struct reg_find_req *rq, struct store_query *q)
{
        const struct reg_kind *k = rq->kind;
        const char *name = rq->name, *ext = rq->external_id, *parent = rq->parent;
        int32_t pid;

        if (rq->any_artifact) {
                q->types = reg_artifact_types;
                q->n_types = reg_n_artifact_types;
        }
        if (is_child_kind(k) && !((name && parent) || ext))
                return error_detail_set(
                        db->err, ERROR_INVALID, -EINVAL,
                        "invalid parameters call, supply either (name and parentResourceId), or externalId: bad request");
        if (!is_child_kind(k) && !name && !ext)
                return error_detail_set(
                        db->err, ERROR_INVALID, -EINVAL,
                        "invalid parameters call, supply either name or externalId: bad request");
        if (!name || (!parent && is_child_kind(k))) {
                q->external_id_eq = ext;
                return 0;
        }
        q->name_eq = name;
        if (!parent)
                return 0;
        if (safe_atoi32(parent, &pid) < 0)
                return error_detail_set(
                        db->err, ERROR_INVALID, -EINVAL,
                        "invalid parentResourceId: strconv.ParseInt: parsing \"%s\": invalid syntax: bad request",
                        parent);
        q->has_parent = true;
        q->parent_id = pid;
        return 0;
}

/* The first of at most one match of q into ret; NOT_FOUND (with the find message) otherwise. */
int reg_find(struct reg_db *db, const struct reg_find_req *rq, struct reg_result *ret)
{
        const struct reg_kind *k = rq->kind;
        const char *name = rq->name, *ext = rq->external_id, *parent = rq->parent;
        struct store_query q = { .group = k->group, .types = &k->type, .n_types = 1, .limit = 1 };
        struct store_entity *v = NULL;
        size_t n = 0;
        bool more = false;
        int r;

        *ret = (struct reg_result){ 0 };
        r = find_query(db, rq, &q);
        if (r < 0)
                return r;
        r = store_entity_list(db->store, db->conn, &q, &v, &n, &more);
        if (r < 0)
                return reg_store_error(db, r, "finding");
        if (n == 0 || more) {
                store_entities_free(v, n);
                return error_detail_set(
                        db->err, ERROR_NOT_FOUND, -ENOENT,
                        "%s %s found for name=%s, parentResourceId=%s, externalId=%s: not found",
                        n == 0 ? "no" : "multiple", k->plural_word, name ? name : "",
                        parent ? parent : "", ext ? ext : "");
        }
        ret->kind = reg_kind_by_type(v[0].type);
        ret->e = v[0];
        v[0] = (struct store_entity){ 0 };
        store_entities_free(v, n);
        return 0;
}

/* ---- list ---- */

static int parse_page_token(struct reg_db *db, const char *tok, int64_t *ret_id, int64_t *ret_value)
{
        AUTOFREE char *raw = NULL;
        char *colon;
        int32_t id;
        int64_t value;

        if (strlen(tok) > PAGE_TOKEN_MAX)
                return error_detail_set(db->err, ERROR_INVALID, -EINVAL,
                                        "invalid nextPageToken: token too long: bad request");
        if (base64_decode(tok, &raw, NULL) < 0)
                return error_detail_set(db->err, ERROR_INVALID, -EINVAL,
                                        "invalid nextPageToken: illegal base64 data: bad request");
        colon = strchr(raw, ':');
        if (!colon)
                return error_detail_set(
                        db->err, ERROR_INVALID, -EINVAL,
                        "invalid nextPageToken: invalid cursor format: bad request");
        *colon = 0;
        if (safe_atoi32(raw, &id) < 0 || safe_atoi64(colon + 1, &value) < 0)
                return error_detail_set(
                        db->err, ERROR_INVALID, -EINVAL,
                        "invalid nextPageToken: invalid cursor values: bad request");
        *ret_id = id;
        *ret_value = value;
        return 0;
}

/* The cursor after e: base64("<id>:<value of the order column>"). */
static char *make_page_token(const struct store_entity *e, enum store_order order)
{
        char raw[64];
        int64_t v = order == STORE_ORDER_CREATE   ? e->create_ms
                    : order == STORE_ORDER_UPDATE ? e->update_ms
                                                  : e->id;

        (void)snprintf(raw, sizeof(raw), "%" PRId64 ":%" PRId64, e->id, v);
        return base64_encode(raw, strlen(raw));
}

/* "step IN (…)" for metric history, ANDed onto *filter. */
static int add_step_filter(struct reg_db *db, const int32_t *steps, size_t n,
                           struct store_cond **filter)
{
        struct store_cond *c = calloc(1, sizeof(*c)), *and = NULL;

        if (c) {
                c->kind = STORE_COND_CMP;
                c->prop = strdup("step");
                c->vcol = STORE_VCOL_INT;
                c->op = STORE_OP_IN;
                c->vals = calloc(n, sizeof(*c->vals));
        }
        if (!c || !c->prop || !c->vals)
                goto oom;
        for (size_t i = 0; i < n; i++)
                c->vals[c->n_vals++] = SV_INT(steps[i]);
        if (!*filter) {
                *filter = c;
                return 0;
        }
        and = calloc(1, sizeof(*and));
        if (!and || !(and->kids = calloc(2, sizeof(struct store_cond *))))
                goto oom;
        and->kind = STORE_COND_AND;
        and->kids[0] = *filter;
        and->kids[1] = c;
        and->n_kids = 2;
        *filter = and;
        return 0;
oom:
        store_cond_free(and);
        store_cond_free(c);
        return error_detail_set(db->err, ERROR_INTERNAL, -ENOMEM, "out of memory");
}

int reg_list(struct reg_db *db, const struct reg_list_req *rq, struct reg_list *ret)
{
        const struct reg_kind *k = rq->kind;
        CLEANUP(store_cond_freep) struct store_cond *filter = NULL;
        struct store_query q = {
                .group = k->group,
                .types = rq->types ? rq->types : &k->type,
                .n_types = rq->types ? rq->n_types : 1,
                .has_parent = rq->has_parent,
                .parent_id = rq->parent_id,
                .name_eq = rq->name,
                .external_id_eq = rq->name ? NULL : rq->external_id,
                .order = rq->order,
                .desc = rq->desc,
                .limit = rq->page_size > 0 ? rq->page_size : 0,
        };
        struct store_entity *v = NULL;
        size_t n = 0;
        bool more = false;
        int r;

        *ret = (struct reg_list){ 0 };
        if (rq->page_token) {
                r = parse_page_token(db, rq->page_token, &q.cursor_id, &q.cursor_value);
                if (r < 0)
                        return r;
                q.has_cursor = true;
        }
        r = reg_filter_compile(k, rq->filter, &filter, db->err);
        if (r >= 0 && rq->n_steps > 0)
                r = add_step_filter(db, rq->steps, rq->n_steps, &filter);
        if (r < 0)
                return r;
        q.filter = filter;
        r = store_entity_list(db->store, db->conn, &q, &v, &n, &more);
        if (r < 0)
                return reg_store_error(db, r, "listing");
        if (more && n > 0) {
                ret->next_page_token = make_page_token(&v[n - 1], q.order);
                if (!ret->next_page_token) {
                        store_entities_free(v, n);
                        return error_detail_set(db->err, ERROR_INTERNAL, -ENOMEM, "out of memory");
                }
        }
        ret->items = v;
        ret->n = n;
        return 0;
}

/* ---- create ---- */

/* Loads the parent that a create must be attached to (404 when missing). */
static int require_parent(struct reg_db *db, enum reg_kind_id pk, int64_t pid)
{
        const struct reg_kind *k = reg_kind(pk);
        struct store_entity parent = { 0 };
        int r = reg_load(db, k, pid, k->word, &parent, NULL);

        store_entity_done(&parent);
        if (r == -ENOENT && pk == REG_EXPERIMENT)
                (void)error_detail_set(db->err, ERROR_NOT_FOUND, r,
                                       "experiment not found: no experiment found for id %" PRId64
                                       ": not found",
                                       pid);
        return r;
}

/* Inside the transaction: the parent of the body, then the new entity. */
static int create_entity(struct reg_db *db, struct reg_input *in, struct store_entity *e)
{
        const struct reg_kind *k = in->kind;
        struct reg_placement pl = { 0 };
        int64_t pid = 0;
        int r;

        r = reg_check_required(in, db->err);
        if (r < 0)
                return r;
        switch (k->id) {
        case REG_MODEL_VERSION:
                r = reg_prop_int(&in->vals, "registered_model_id", &pid);
                if (r >= 0)
                        r = require_parent(db, REG_REGISTERED_MODEL, pid);
                pl.scope_parent = true;
                break;
        case REG_INFERENCE_SERVICE:
                r = reg_prop_int(&in->vals, "serving_environment_id", &pid);
                if (r >= 0)
                        r = require_parent(db, REG_SERVING_ENVIRONMENT, pid);
                if (r == -ENOENT)
                        (void)error_detail_set(db->err, ERROR_NOT_FOUND, r,
                                               "no serving environment found for id %" PRId64
                                               ": not found",
                                               pid);
                pl.scope_parent = true;
                break;
        case REG_EXPERIMENT_RUN:
                r = reg_prop_int(&in->vals, "experiment_id", &pid);
                if (r >= 0)
                        r = require_parent(db, REG_EXPERIMENT, pid);
                pl.scope_parent = true;
                break;
        default:
                if (k->artifact_type)
                        pl.scope_uuid = true;
                break;
        }
        if (r < 0)
                return r;
        pl.parent_id = pid;
        r = reg_build_new(db, in, &pl, e);
        if (r < 0)
                return r;
        return reg_insert(db, k, e);
}

/* Nested creates: the parent id comes from the path and wins over the body's. */
static int set_path_parent(struct reg_db *db, const struct reg_create_req *rq)
{
        struct reg_input *in = rq->in;

        for (const struct reg_field *f = in->kind->fields; f->json; f++) {
                int r;

                if (!(f->flags & REG_FF_PARENT))
                        continue;
                if (rq->schema == REG_SCHEMA_FULL && !store_entity_prop(&in->vals, f->prop, false))
                        return error_detail_set(db->err, ERROR_UNPROCESSABLE, -EINVAL,
                                                "required field '%s' is zero value.", f->json);
                r = store_entity_set_int(&in->vals, f->prop, false, rq->parent_id);
                if (r < 0)
                        return error_detail_set(db->err, ERROR_INTERNAL, r, "out of memory");
        }
        return 0;
}

/* POST /inference_services/{id}/serves: the parent is the inference service of the path. */
static int create_serve_model(struct reg_db *db, const struct reg_create_req *rq,
                              struct store_entity *e)
{
        struct store_entity is = { 0 };
        struct reg_placement pl = { .scope_parent = true, .parent_id = rq->parent_id };
        int r;

        r = reg_check_required(rq->in, db->err);
        if (r < 0)
                return r;
        r = reg_tx_begin(db);
        if (r < 0)
                return r;
        r = reg_load(db, reg_kind(REG_INFERENCE_SERVICE), rq->parent_id, "inference service", &is,
                     NULL);
        store_entity_done(&is);
        if (r >= 0)
                r = reg_build_new(db, rq->in, &pl, e);
        if (r >= 0)
                r = reg_insert(db, rq->in->kind, e);
        return reg_tx_end(db, r);
}

int reg_create(struct reg_db *db, const struct reg_create_req *rq, struct reg_result *ret)
{
        int r;

        *ret = (struct reg_result){ .kind = rq->in->kind };
        if (rq->in->kind->id == REG_SERVE_MODEL)
                r = create_serve_model(db, rq, &ret->e);
        else {
                r = rq->path_parent ? set_path_parent(db, rq) : 0;
                if (r >= 0)
                        r = reg_tx_begin(db);
                if (r >= 0)
                        r = reg_tx_end(db, create_entity(db, rq->in, &ret->e));
        }
        if (r < 0)
                reg_result_done(ret);
        return r;
}

/* ---- patch ---- */

int reg_patch_kind(struct reg_db *db, const struct reg_kind *k, int64_t id, const char *word,
                   const struct reg_kind **ret)
{
        struct store_entity e = { 0 };
        int r;

        r = reg_load(db, k, id, word, &e, ret);
        store_entity_done(&e);
        return r;
}

/* Inside the transaction: loads the entity locked, merges, writes. */
static int patch_in_tx(struct reg_db *db, const struct reg_kind *k, int64_t id, const char *word,
                       struct reg_input *in, struct reg_result *ret)
{
        int r;

        /* locked until the transaction ends: concurrent PATCHes never lose each other's fields */
        r = reg_load_for_update(db, k, id, word, &ret->e, &ret->kind);
        if (r < 0)
                return r;
        r = reg_merge(db, &ret->e, in);
        if (r < 0)
                return r;
        return reg_update(db, ret->kind, &ret->e);
}

int reg_patch(struct reg_db *db, const struct reg_kind *k, int64_t id, const char *word,
              struct reg_input *in, struct reg_result *ret)
{
        int r;

        *ret = (struct reg_result){ 0 };
        r = reg_tx_begin(db);
        if (r >= 0)
                r = reg_tx_end(db, patch_in_tx(db, k, id, word, in, ret));
        if (r < 0)
                reg_result_done(ret);
        return r;
}

/* ---- artifacts under a model version / experiment run (upsert) ---- */

/* Logging a metric on a run appends a history row, a copy of the metric. */
static int log_metric_history(struct reg_db *db, const struct store_entity *metric, int64_t run_id)
{
        struct store_entity h = { .group = STORE_GROUP_ARTIFACT, .parent_id = run_id };
        char uuid[37];
        int r;

        r = uuid_random(uuid);
        if (r < 0)
                return error_detail_set(db->err, ERROR_INTERNAL, r, "no randomness");
        h.type = strdup("MetricHistory");
        h.scope = strdup(uuid);
        h.name = strdup(metric->name);
        /* external ids are unique; history rows carry none */
        h.create_ms = h.update_ms = metric->update_ms;
        if (!h.type || !h.scope || !h.name) {
                store_entity_done(&h);
                return error_detail_set(db->err, ERROR_INTERNAL, -ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < metric->n_props && r >= 0; i++) {
                const struct store_prop *p = &metric->props[i];
                struct store_prop c = *p;

                c.name = strdup(p->name);
                c.s = p->s ? strdup(p->s) : NULL;
                /* the metric's properties are distinct already */
                r = !c.name || (p->s && !c.s) ? -ENOMEM : store_entity_append_prop(&h, &c);
                if (r < 0)
                        store_prop_done(&c);
        }
        if (r < 0) {
                store_entity_done(&h);
                return error_detail_set(db->err, ERROR_INTERNAL, r, "out of memory");
        }
        r = store_entity_insert(db->store, db->conn, &h, NULL);
        store_entity_done(&h);
        return r < 0 ? reg_store_error(db, r, "logging metric history") : 0;
}

/* An artifact logged under an experiment run records the run and its experiment. */
static int set_run_ids(struct reg_db *db, struct store_entity *e, int64_t exp_id, int64_t run_id)
{
        int r;

        r = store_entity_set_int(e, "experiment_id", false, exp_id);
        if (r >= 0)
                r = store_entity_set_int(e, "experiment_run_id", false, run_id);
        if (r < 0)
                return error_detail_set(db->err, ERROR_INTERNAL, r, "out of memory");
        return 0;
}

/* One upsert in progress. */
struct upsert {
        const struct reg_kind *k; /* the body's artifact kind */
        int64_t pid;              /* the parent of the path */
        bool run;                 /* the parent is an experiment run */
        struct reg_input *in;     /* borrowed; the decoded body */
        struct store_entity *e;   /* borrowed; the artifact written */
};

/* The body names an existing artifact by id: it must be of the body's kind; moves it under pid. */
static int upsert_load_by_id(struct reg_db *db, struct upsert *u)
{
        const struct reg_kind *ek;
        char scope[32];
        int r;

        r = reg_load_for_update(db, NULL, u->in->id, "artifact", u->e, &ek);
        if (r == -ENOENT)
                db->err->kind = ERROR_INVALID;
        if (r < 0)
                return r;
        if (ek != u->k)
                return error_detail_set(db->err, ERROR_INVALID, -EINVAL,
                                        "artifact with id %" PRId64
                                        " is not a %s artifact: bad request",
                                        u->in->id, u->k->artifact_type);
        /* names are immutable (upstream keeps the old one silently; we say so) */
        if (u->in->has_name && u->in->vals.name && *u->in->vals.name &&
            !streq(u->in->vals.name, u->e->name))
                return error_detail_set(db->err, ERROR_INVALID, -EINVAL,
                                        "cannot change name of artifact %" PRId64
                                        " from '%s' to '%s': name is immutable: bad request",
                                        u->in->id, u->e->name, u->in->vals.name);
        r = reg_merge(db, u->e, u->in);
        if (r < 0 || u->e->parent_id == u->pid)
                return r;
        u->e->parent_id = u->pid;
        (void)snprintf(scope, sizeof(scope), "%" PRId64, u->pid);
        free(u->e->scope);
        u->e->scope = strdup(scope);
        if (!u->e->scope)
                return error_detail_set(db->err, ERROR_INTERNAL, -ENOMEM, "out of memory");
        return 0;
}

/* Log-by-name: metrics and parameters update the artifact of that kind and name under pid. */
static int upsert_find_by_name(struct reg_db *db, struct upsert *u, bool *ret_existing)
{
        const struct reg_kind *k = u->k;
        struct store_query q = { .group = k->group,
                                 .types = &k->type,
                                 .n_types = 1,
                                 .has_parent = true,
                                 .parent_id = u->pid,
                                 .name_eq = u->in->vals.name,
                                 .limit = 1 };
        struct store_entity *v = NULL;
        size_t n = 0;
        bool more;
        int64_t id;
        int r;

        *ret_existing = false;
        if ((k->id != REG_METRIC && k->id != REG_PARAMETER) || !u->in->has_name ||
            !u->in->vals.name || !*u->in->vals.name)
                return 0;
        r = store_entity_list(db->store, db->conn, &q, &v, &n, &more);
        if (r < 0)
                return reg_store_error(db, r, "finding");
        id = n > 0 ? v[0].id : 0;
        store_entities_free(v, n);
        if (id == 0)
                return 0;
        /* read again, locked, for the read-modify-write */
        r = reg_load_for_update(db, k, id, k->word, u->e, NULL);
        if (r < 0)
                return r;
        *ret_existing = true;
        return 0;
}

/* Inside the transaction: resolves the artifact (by id, by name or new) and writes it. */
static int upsert_in_tx(struct reg_db *db, struct upsert *u, const struct reg_kind *pk,
                        bool *ret_created)
{
        struct store_entity parent = { 0 };
        int64_t exp_id = 0;
        bool existing = true;
        int r;

        r = reg_load(db, pk, u->pid, pk->word, &parent, NULL);
        if (r < 0)
                return r;
        if (u->run)
                (void)reg_prop_int(&parent, "experiment_id", &exp_id);
        store_entity_done(&parent);
        if (u->in->has_id)
                r = upsert_load_by_id(db, u);
        else
                r = upsert_find_by_name(db, u, &existing);
        if (r >= 0 && !u->in->has_id && existing)
                r = reg_merge(db, u->e, u->in);
        if (r >= 0 && !existing) {
                struct reg_placement pl = { .parent_id = u->pid,
                                            .scope_parent = u->k->id != REG_DATASET,
                                            .scope_uuid = u->k->id == REG_DATASET };

                r = reg_build_new(db, u->in, &pl, u->e);
                *ret_created = true;
        }
        if (r >= 0 && u->run)
                r = set_run_ids(db, u->e, exp_id, u->pid);
        if (r >= 0)
                r = existing ? reg_update(db, u->k, u->e) : reg_insert(db, u->k, u->e);
        if (r >= 0 && u->run && u->k->id == REG_METRIC)
                r = log_metric_history(db, u->e, u->pid);
        return r;
}

int reg_upsert(struct reg_db *db, const struct reg_upsert_req *rq, struct reg_result *ret)
{
        struct upsert u = { .k = rq->in->kind,
                            .pid = rq->parent_id,
                            .run = rq->parent_kind == REG_EXPERIMENT_RUN,
                            .in = rq->in };
        int r = 0;

        *ret = (struct reg_result){ .kind = rq->in->kind };
        u.e = &ret->e;
        if (u.k->id == REG_METRIC && u.run && !store_entity_prop(&rq->in->vals, "value", false) &&
            !rq->in->has_id)
                r = error_detail_set(db->err, ERROR_INVALID, -EINVAL,
                                     "metric value is required: bad request");
        if (r >= 0)
                r = reg_tx_begin(db);
        if (r >= 0)
                r = reg_tx_end(db, upsert_in_tx(db, &u, reg_kind(rq->parent_kind), &ret->created));
        if (r < 0)
                reg_result_done(ret);
        return r;
}

/* ---- derived resources of an inference service ---- */

int reg_is_model(struct reg_db *db, int64_t id, struct reg_result *ret)
{
        struct store_entity is = { 0 };
        int64_t rmid = 0;
        int r;

        *ret = (struct reg_result){ 0 };
        r = reg_load(db, reg_kind(REG_INFERENCE_SERVICE), id, "inference service", &is, NULL);
        if (r < 0)
                return r;
        r = reg_prop_int(&is, "registered_model_id", &rmid);
        store_entity_done(&is);
        if (r < 0)
                return error_detail_set(db->err, ERROR_NOT_FOUND, -ENOENT,
                                        "no registered model found for inference service %" PRId64
                                        ": not found",
                                        id);
        return reg_get(db, reg_kind(REG_REGISTERED_MODEL), rmid, ret);
}

int reg_is_version(struct reg_db *db, int64_t id, struct reg_result *ret)
{
        const struct reg_kind *mvk = reg_kind(REG_MODEL_VERSION);
        struct store_entity is = { 0 };
        int64_t mvid = 0, rmid = 0;
        int r;

        *ret = (struct reg_result){ 0 };
        r = reg_load(db, reg_kind(REG_INFERENCE_SERVICE), id, "inference service", &is, NULL);
        if (r < 0)
                return r;
        (void)reg_prop_int(&is, "model_version_id", &mvid);
        (void)reg_prop_int(&is, "registered_model_id", &rmid);
        store_entity_done(&is);
        if (mvid != 0)
                return reg_get(db, mvk, mvid, ret);
        {
                struct store_query q = { .group = mvk->group,
                                         .types = &mvk->type,
                                         .n_types = 1,
                                         .has_parent = true,
                                         .parent_id = rmid,
                                         .order = STORE_ORDER_CREATE,
                                         .desc = true,
                                         .limit = 1 };
                struct store_entity *v = NULL;
                size_t n = 0;
                bool more;

                r = store_entity_list(db->store, db->conn, &q, &v, &n, &more);
                if (r < 0)
                        return reg_store_error(db, r, "listing");
                if (n == 0) {
                        store_entities_free(v, n);
                        return error_detail_set(db->err, ERROR_NOT_FOUND, -ENOENT,
                                                "no model versions found for id %" PRId64
                                                ": not found",
                                                id);
                }
                ret->kind = mvk;
                ret->e = v[0];
                v[0] = (struct store_entity){ 0 };
                store_entities_free(v, n);
        }
        return 0;
}
