/* SPDX-License-Identifier: Apache-2.0 */
#include "registry/persist.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse-util.h"
#include "util/time-util.h"
#include "util/uuid.h"

/* Maps a store error to the error body. */
int reg_store_error(struct reg_db *db, int r, const char *what)
{
        switch (r) {
        case -EBUSY:
                return error_detail_set(db->err, ERROR_UNAVAILABLE, r, "database busy, retry: %s",
                                        what);
        case -ECONNREFUSED:
        case -ECONNRESET:
                /* the store reconnects by itself once the database is back */
                return error_detail_set(db->err, ERROR_UNAVAILABLE, r,
                                        "Datastore service is down or unavailable (database not "
                                        "reachable while %s). Please check that the database is "
                                        "reachable and try again later.",
                                        what);
        case -EINVAL:
                /* a constraint of the schema (a name over 255 characters) or a value it refuses */
                return error_detail_set(db->err, ERROR_INVALID, r,
                                        "the database refused the value while %s: bad request",
                                        what);
        case -E2BIG:
                return error_detail_set(db->err, ERROR_INVALID, r, "query too large: bad request");
        default:
                return error_detail_set(db->err, ERROR_INTERNAL, r, "internal error while %s",
                                        what);
        }
}

int64_t reg_now_ms(void)
{
        return (int64_t)(now_realtime() / USEC_PER_MSEC);
}

bool reg_is_artifact_type(const char *type)
{
        for (size_t i = 0; i < reg_n_artifact_types; i++)
                if (streq(reg_artifact_types[i], type))
                        return true;
        return false;
}

/* Loads an entity of kind k (any non-history artifact when k is NULL), locked when lock. */
static int load(struct reg_db *db, const struct reg_kind *k, int64_t id, const char *word,
                bool lock, struct store_entity *ret, const struct reg_kind **ret_kind)
{
        struct store_entity e = { 0 };
        enum store_group g = k ? k->group : STORE_GROUP_ARTIFACT;
        const struct reg_kind *ek;
        int r;

        r = lock ? store_entity_get_for_update(db->store, db->conn, g, id, &e)
                 : store_entity_get(db->store, db->conn, g, id, &e);
        if (r == -ENOENT)
                goto notfound;
        if (r < 0)
                return reg_store_error(db, r, "loading");
        if (k ? !streq(e.type, k->type) : !reg_is_artifact_type(e.type)) {
                store_entity_done(&e);
                goto notfound;
        }
        ek = reg_kind_by_type(e.type);
        if (!ek) {
                store_entity_done(&e);
                goto notfound;
        }
        *ret = e;
        if (ret_kind)
                *ret_kind = ek;
        return 0;
notfound:
        return error_detail_set(db->err, ERROR_NOT_FOUND, -ENOENT,
                                "no %s found for id %" PRId64 ": not found", word, id);
}

int reg_load(struct reg_db *db, const struct reg_kind *k, int64_t id, const char *word,
             struct store_entity *ret, const struct reg_kind **ret_kind)
{
        return load(db, k, id, word, false, ret, ret_kind);
}

int reg_load_for_update(struct reg_db *db, const struct reg_kind *k, int64_t id, const char *word,
                        struct store_entity *ret, const struct reg_kind **ret_kind)
{
        return load(db, k, id, word, true, ret, ret_kind);
}

int reg_prop_int(const struct store_entity *e, const char *name, int64_t *ret)
{
        const struct store_prop *p = store_entity_prop(e, name, false);

        if (!p || p->type != STORE_P_INT)
                return -ENOENT;
        *ret = p->i;
        return 0;
}

/* The 409 of a uniqueness clash, naming the field that clashed: the name (unique within its
 * scope) or the externalId (unique among the kinds of one group: contexts, artifacts,
 * executions). */
static int conflict(struct reg_db *db, const struct reg_kind *k, const struct store_entity *e,
                    enum store_unique clash)
{
        if (clash == STORE_UNIQUE_EXTERNAL_ID)
                return error_detail_set(db->err, ERROR_CONFLICT, -EEXIST,
                                        "%s with externalId %s already exists: conflict", k->word,
                                        e->external_id ? e->external_id : "");
        return error_detail_set(db->err, ERROR_CONFLICT, -EEXIST,
                                "%s with name %s already exists: conflict", k->word,
                                e->name ? e->name : "");
}

/* The uniqueness scope of pl: a fresh UUID, the parent id, or none. */
static int build_scope(struct reg_db *db, const struct reg_placement *pl, char *scope, size_t len)
{
        char uuid[37];
        int r;

        if (pl->scope_uuid) {
                r = uuid_random(uuid);
                if (r < 0)
                        return error_detail_set(db->err, ERROR_INTERNAL, r, "no randomness");
                (void)snprintf(scope, len, "%s", uuid);
        } else if (pl->scope_parent)
                (void)snprintf(scope, len, "%" PRId64, pl->parent_id);
        else
                scope[0] = 0;
        return 0;
}

/* The name of a new entity: the one given, else a fresh UUID. */
static int build_name(struct reg_db *db, struct reg_input *in, struct store_entity *e)
{
        char uuid[37];
        int r;

        if (in->has_name && in->vals.name && *in->vals.name) {
                e->name = TAKE_PTR(in->vals.name);
                return 0;
        }
        r = uuid_random(uuid);
        if (r < 0)
                return error_detail_set(db->err, ERROR_INTERNAL, r, "no randomness");
        e->name = strdup(uuid);
        return 0;
}

/* The kind's field defaults, and the parent reference, where the input left them out. */
static int build_defaults(struct reg_db *db, const struct reg_kind *k,
                          const struct reg_placement *pl, struct store_entity *e)
{
        int r;

        for (const struct reg_field *f = k->fields; f->json; f++) {
                r = 0;
                if (f->dflt && !store_entity_prop(e, f->prop, false))
                        r = store_entity_set_string(e, f->prop, false, STORE_P_STRING, f->dflt);
                if (r >= 0 && (f->flags & REG_FF_PARENT) && pl->parent_id > 0)
                        r = store_entity_set_int(e, f->prop, false, pl->parent_id);
                if (r < 0)
                        return error_detail_set(db->err, ERROR_INTERNAL, r, "out of memory");
        }
        return 0;
}

int reg_build_new(struct reg_db *db, struct reg_input *in, const struct reg_placement *pl,
                  struct store_entity *e)
{
        const struct reg_kind *k = in->kind;
        char scope[40];
        int r;

        *e = (struct store_entity){ .group = k->group, .parent_id = pl->parent_id };
        r = build_scope(db, pl, scope, sizeof(scope));
        if (r < 0)
                return r;
        e->type = strdup(k->type);
        e->scope = strdup(scope);
        r = build_name(db, in, e);
        if (r < 0)
                return r;
        if (in->has_external_id && in->vals.external_id && *in->vals.external_id)
                e->external_id = TAKE_PTR(in->vals.external_id);
        if (!e->type || !e->scope || !e->name)
                return error_detail_set(db->err, ERROR_INTERNAL, -ENOMEM, "out of memory");
        e->create_ms = e->update_ms = reg_now_ms();
        e->props = TAKE_PTR(in->vals.props);
        e->n_props = in->vals.n_props;
        in->vals.n_props = 0;
        return build_defaults(db, k, pl, e);
}

/* A time property as an int64: stored as the string given, or as a number by an earlier version. */
static int time_prop(struct reg_db *db, const struct store_entity *e, const char *prop,
                     const char *json, int64_t *ret)
{
        const struct store_prop *p = store_entity_prop(e, prop, false);

        if (p->type == STORE_P_INT) {
                *ret = p->i;
                return 0;
        }
        if (safe_atoi64(p->s ? p->s : "", ret) < 0)
                return error_detail_set(
                        db->err, ERROR_INVALID, -EINVAL,
                        "invalid %s: strconv.ParseInt: parsing \"%s\": invalid syntax: bad request",
                        json, p->s ? p->s : "");
        return 0;
}

/* Upstream parses a run's start and end only when both are there, and compares them. */
static int validate_run_times(struct reg_db *db, const struct store_entity *e)
{
        int64_t start, end;
        int r;

        if (!store_entity_prop(e, "start_time_since_epoch", false) ||
            !store_entity_prop(e, "end_time_since_epoch", false))
                return 0;
        r = time_prop(db, e, "start_time_since_epoch", "startTimeSinceEpoch", &start);
        if (r >= 0)
                r = time_prop(db, e, "end_time_since_epoch", "endTimeSinceEpoch", &end);
        if (r >= 0 && end < start)
                r = error_detail_set(
                        db->err, ERROR_INVALID, -EINVAL,
                        "endTimeSinceEpoch must not be before startTimeSinceEpoch: bad request");
        return r;
}

/* Characters (UTF-8 code points) in s. */
static size_t utf8_length(const char *s)
{
        size_t n = 0;

        for (; *s; s++)
                if (((unsigned char)*s & 0xC0) != 0x80)
                        n++;
        return n;
}

/*
 * Upstream stores a child's name as "<parentId>:<name>" (a standalone artifact's as
 * "<uuid>:<name>") in a VARCHAR(255) column; ours keeps the prefix in scope.
 */
static int validate_name_length(struct reg_db *db, const struct reg_kind *k,
                                const struct store_entity *e)
{
        size_t prefix = e->scope && *e->scope ? strlen(e->scope) + 1 : 0;
        size_t n = utf8_length(e->name ? e->name : "");

        if (prefix + n <= REG_NAME_MAX)
                return 0;
        if (prefix == 0)
                return error_detail_set(
                        db->err, ERROR_INVALID, -EINVAL,
                        "invalid %s name: %zu characters, at most %d allowed: bad request", k->word,
                        n, REG_NAME_MAX);
        return error_detail_set(
                db->err, ERROR_INVALID, -EINVAL,
                "invalid %s name: %zu characters, at most %zu allowed (the name is stored "
                "as \"<%s>:<name>\" in at most %d characters): bad request",
                k->word, n, REG_NAME_MAX - prefix, strchr(e->scope, '-') ? "uuid" : "parentId",
                REG_NAME_MAX);
}

/* externalId and custom property keys: upstream's VARCHAR(255); the count and size of custom
 * properties: our caps (docs/registry.md). */
static int validate_sizes(struct reg_db *db, const struct reg_kind *k, const struct store_entity *e)
{
        size_t n_custom = 0, custom_bytes = 0, n;

        if (e->external_id && (n = utf8_length(e->external_id)) > REG_EXTERNAL_ID_MAX)
                return error_detail_set(
                        db->err, ERROR_INVALID, -EINVAL,
                        "invalid %s externalId: %zu characters, at most %d allowed: bad request",
                        k->word, n, REG_EXTERNAL_ID_MAX);
        for (size_t i = 0; i < e->n_props; i++) {
                const struct store_prop *p = &e->props[i];

                if (!p->custom)
                        continue;
                n_custom++;
                custom_bytes += strlen(p->name) + (p->s ? strlen(p->s) : sizeof(p->d));
                if ((n = utf8_length(p->name)) > REG_CUSTOM_KEY_MAX)
                        return error_detail_set(
                                db->err, ERROR_INVALID, -EINVAL,
                                "invalid customProperties: key of %zu characters, at most %d allowed: bad request",
                                n, REG_CUSTOM_KEY_MAX);
        }
        if (n_custom > REG_CUSTOM_PROPS_MAX)
                return error_detail_set(
                        db->err, ERROR_INVALID, -EINVAL,
                        "invalid customProperties: %zu properties, at most %d allowed: bad request",
                        n_custom, REG_CUSTOM_PROPS_MAX);
        if (custom_bytes > REG_CUSTOM_BYTES_MAX)
                return error_detail_set(
                        db->err, ERROR_INVALID, -EINVAL,
                        "invalid customProperties: %zu bytes, at most %zu allowed: bad request",
                        custom_bytes, REG_CUSTOM_BYTES_MAX);
        return 0;
}

/* One id property of e that must name an existing entity of kind rk when set (not 0). */
static int validate_ref(struct reg_db *db, const struct store_entity *e, const char *prop,
                        enum reg_kind_id rk)
{
        const struct reg_kind *k = reg_kind(rk);
        struct store_entity ref = { 0 };
        int64_t id = 0;
        int r;

        if (reg_prop_int(e, prop, &id) < 0 || id == 0)
                return 0;
        r = reg_load(db, k, id, k->word, &ref, NULL);
        store_entity_done(&ref);
        return r;
}

/* References are checked wherever they are written: 404 for an id that names nothing. */
static int validate_refs(struct reg_db *db, const struct reg_kind *k, const struct store_entity *e)
{
        int r = 0;

        switch (k->id) {
        case REG_INFERENCE_SERVICE:
                r = validate_ref(db, e, "registered_model_id", REG_REGISTERED_MODEL);
                if (r >= 0)
                        r = validate_ref(db, e, "model_version_id", REG_MODEL_VERSION);
                break;
        case REG_SERVE_MODEL:
                r = validate_ref(db, e, "model_version_id", REG_MODEL_VERSION);
                break;
        default:
                break;
        }
        return r;
}

/* Validation that needs the merged entity. */
static int validate(struct reg_db *db, const struct reg_kind *k, const struct store_entity *e)
{
        int r = validate_name_length(db, k, e);

        if (r >= 0)
                r = validate_sizes(db, k, e);
        if (r >= 0 && k->id == REG_EXPERIMENT_RUN)
                r = validate_run_times(db, e);
        if (r >= 0)
                r = validate_refs(db, k, e);
        return r;
}

/* Validates and writes e: a new row (create) or the existing one; a uniqueness clash is 409. */
int reg_save(struct reg_db *db, const struct reg_kind *k, struct store_entity *e, bool create)
{
        enum store_unique clash = STORE_UNIQUE_NAME;
        int r;

        r = validate(db, k, e);
        if (r < 0)
                return r;
        r = create ? store_entity_insert(db->store, db->conn, e, &clash)
                   : store_entity_update(db->store, db->conn, e, &clash);
        if (r == -EEXIST)
                return conflict(db, k, e, clash);
        if (r < 0)
                return reg_store_error(db, r, create ? "inserting" : "updating");
        return 0;
}

int reg_insert(struct reg_db *db, const struct reg_kind *k, struct store_entity *e)
{
        return reg_save(db, k, e, true);
}

int reg_merge(struct reg_db *db, struct store_entity *e, struct reg_input *in)
{
        int r;

        for (size_t i = 0; i < in->vals.n_props; i++) {
                if (in->vals.props[i].custom)
                        continue;
                r = store_entity_put_prop(e, &in->vals.props[i]);
                if (r < 0)
                        return error_detail_set(db->err, ERROR_INTERNAL, r, "out of memory");
        }
        if (in->has_custom) {
                store_entity_remove_props(e, true);
                for (size_t i = 0; i < in->vals.n_props; i++) {
                        if (!in->vals.props[i].custom || !in->vals.props[i].name)
                                continue;
                        /* the keys of one JSON object, and e has no custom ones left: O(1) */
                        r = store_entity_append_prop(e, &in->vals.props[i]);
                        if (r < 0)
                                return error_detail_set(db->err, ERROR_INTERNAL, r,
                                                        "out of memory");
                }
        }
        if (in->has_external_id) {
                free(e->external_id);
                e->external_id = NULL;
                if (in->vals.external_id && *in->vals.external_id)
                        e->external_id = TAKE_PTR(in->vals.external_id);
        }
        e->update_ms = reg_now_ms();
        if (e->update_ms < e->create_ms)
                e->update_ms = e->create_ms;
        return 0;
}

int reg_update(struct reg_db *db, const struct reg_kind *k, struct store_entity *e)
{
        return reg_save(db, k, e, false);
}

int reg_tx_begin(struct reg_db *db)
{
        int r = store_begin(db->store, db->conn);
        return r < 0 ? reg_store_error(db, r, "starting a transaction") : 0;
}

int reg_tx_end(struct reg_db *db, int r)
{
        if (r < 0) {
                store_rollback(db->store, db->conn);
                return r;
        }
        r = store_commit(db->store, db->conn);
        if (r == -EEXIST)
                return error_detail_set(db->err, ERROR_CONFLICT, r, "already exists: conflict");
        return r < 0 ? reg_store_error(db, r, "committing") : 0;
}
