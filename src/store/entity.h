/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Entity storage on top of the store port: one generic `entity` row (group, id, type, parent,
 * uniqueness scope, name, external id, timestamps) plus typed `property` rows (system or
 * custom). Ids come from one sequence per group (context, artifact, execution) like MLMD.
 * Uniqueness: (type, scope, name) and (group, external_id). List queries are built from a
 * whitelist of SQL fragments with every value bound, and paginate with a keyset cursor.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "util/macro.h"

enum store_group {
        STORE_GROUP_CONTEXT = 0,
        STORE_GROUP_ARTIFACT = 1,
        STORE_GROUP_EXECUTION = 2,
};

enum store_ptype {
        STORE_P_STRING = 's',
        STORE_P_INT = 'i',
        STORE_P_DOUBLE = 'd',
        STORE_P_BOOL = 'b',
        STORE_P_STRUCT = 't', /* JSON object text in s */
};

struct store_prop {
        char *name; /* owned */
        bool custom;
        enum store_ptype type;
        char *s; /* owned; STRING/STRUCT */
        int64_t i;
        double d;
        bool b;
};

struct store_entity {
        enum store_group group;
        int64_t id;
        char *type;        /* owned */
        int64_t parent_id; /* 0: none */
        char *scope;       /* owned; uniqueness scope ("" top level) */
        char *name;        /* owned; the name as shown to clients */
        char *external_id; /* owned; NULL when unset */
        int64_t create_ms;
        int64_t update_ms;
        struct store_prop *props; /* owned */
        size_t n_props;
        size_t props_cap; /* allocated slots of props (0: exactly n_props, e.g. built by hand) */
};

void store_prop_done(struct store_prop *p);
void store_entity_done(struct store_entity *e);
/* Frees an array of n entities. */
void store_entities_free(struct store_entity *v, size_t n);

/* Returns the property (custom or system) or NULL; borrowed. */
const struct store_prop *store_entity_prop(const struct store_entity *e, const char *name,
                                           bool custom);
/* Sets/replaces a property; takes copies. -ENOMEM. */
_warn_unused_result_ int store_entity_set_string(struct store_entity *e, const char *name,
                                                 bool custom, enum store_ptype type, const char *s);
_warn_unused_result_ int store_entity_set_int(struct store_entity *e, const char *name, bool custom,
                                              int64_t i);
_warn_unused_result_ int store_entity_set_double(struct store_entity *e, const char *name,
                                                 bool custom, double d);
_warn_unused_result_ int store_entity_set_bool(struct store_entity *e, const char *name,
                                               bool custom, bool b);
void store_entity_remove_props(struct store_entity *e, bool custom);
/* Moves property p (taken over) into e, replacing one with the same name/custom (O(n)). */
_warn_unused_result_ int store_entity_put_prop(struct store_entity *e, struct store_prop *p);
/*
 * Moves property p (taken over) to the end of e without looking for one of the same name, in
 * amortised O(1): for callers that know the name is new (rows of one entity's primary key, keys
 * of one JSON object). -ENOMEM (p is then left to the caller).
 */
_warn_unused_result_ int store_entity_append_prop(struct store_entity *e, struct store_prop *p);

/* Which uniqueness a write ran into (-EEXIST). */
enum store_unique {
        STORE_UNIQUE_NAME,        /* (type, scope, name) */
        STORE_UNIQUE_EXTERNAL_ID, /* (group, external_id) */
};

/*
 * Inside a transaction: allocates an id, inserts the row and its properties. -EEXIST when the
 * name or the external id is taken; then *ret_clash (optional) says which.
 */
_warn_unused_result_ int store_entity_insert(struct store *s, struct store_conn *c,
                                             struct store_entity *e, enum store_unique *ret_clash);
/* Inside a transaction: rewrites the row (not group/id/type/create time) and all properties.
 * -EEXIST and *ret_clash (optional) as store_entity_insert(). */
_warn_unused_result_ int store_entity_update(struct store *s, struct store_conn *c,
                                             const struct store_entity *e,
                                             enum store_unique *ret_clash);
/* Loads one entity; -ENOENT. */
_warn_unused_result_ int store_entity_get(struct store *s, struct store_conn *c,
                                          enum store_group group, int64_t id,
                                          struct store_entity *ret);
/*
 * store_entity_get() inside a write transaction, for a read-modify-write: the row stays locked
 * until the transaction ends, so that concurrent writers of the same entity are serialised and
 * none loses an acknowledged update (PostgreSQL: SELECT ... FOR UPDATE; SQLite: the BEGIN
 * IMMEDIATE of store_begin() already holds the database's write lock).
 */
_warn_unused_result_ int store_entity_get_for_update(struct store *s, struct store_conn *c,
                                                     enum store_group group, int64_t id,
                                                     struct store_entity *ret);

/* ---- filter conditions (already resolved against an entity kind by the caller) ---- */

enum store_column {
        STORE_COL_ID,
        STORE_COL_NAME,
        STORE_COL_EXTERNAL_ID,
        STORE_COL_CREATE,
        STORE_COL_UPDATE,
};

enum store_op {
        STORE_OP_EQ,
        STORE_OP_NE,
        STORE_OP_LT,
        STORE_OP_LE,
        STORE_OP_GT,
        STORE_OP_GE,
        STORE_OP_LIKE,
        STORE_OP_ILIKE,
        STORE_OP_IN,
};

/* Which typed property column(s) a comparison looks at. */
enum store_vcol {
        STORE_VCOL_STRING,
        STORE_VCOL_INT,
        STORE_VCOL_DOUBLE,
        STORE_VCOL_BOOL,
        STORE_VCOL_INT_OR_DOUBLE,
};

enum store_cond_kind {
        STORE_COND_AND,
        STORE_COND_OR,
        STORE_COND_CMP,
        STORE_COND_FALSE, /* matches nothing (type mismatch, empty IN list) */
};

struct store_cond {
        enum store_cond_kind kind;
        struct store_cond **kids; /* owned, each owned; AND/OR (n_kids >= 1) */
        size_t n_kids;
        /* CMP: */
        bool is_column;
        enum store_column column;
        char *prop; /* owned; property name when !is_column */
        bool custom;
        enum store_vcol vcol;
        enum store_op op;
        struct store_val *vals; /* owned, and text values owned too */
        size_t n_vals;
};

struct store_cond *store_cond_free(struct store_cond *c);
DEFINE_CLEANUP_FUNC(struct store_cond *, store_cond_free)

enum store_order {
        STORE_ORDER_ID,
        STORE_ORDER_CREATE,
        STORE_ORDER_UPDATE,
};

struct store_query {
        enum store_group group;
        const char *const *types; /* borrowed; n_types >= 1 */
        size_t n_types;
        bool has_parent;
        int64_t parent_id;
        const char *name_eq;             /* exact name match, or NULL */
        const char *external_id_eq;      /* exact external id match, or NULL */
        const struct store_cond *filter; /* borrowed; NULL: none */
        enum store_order order;
        bool desc;
        int64_t limit; /* 0: unlimited */
        bool has_cursor;
        int64_t cursor_id;
        int64_t cursor_value;
};

/*
 * Runs q. Returns the matching entities (owned array) in ret and ret_n; ret_more tells whether
 * more rows follow (only meaningful with a limit).
 */
_warn_unused_result_ int store_entity_list(struct store *s, struct store_conn *c,
                                           const struct store_query *q, struct store_entity **ret,
                                           size_t *ret_n, bool *ret_more);

/* Deletes every entity and property and resets the id sequences (tests, cleanup scripts). */
_warn_unused_result_ int store_wipe(struct store *s, struct store_conn *c);
