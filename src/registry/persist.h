/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The steps the registry's operations (service.h) share, over one store connection: load an
 * entity by id (optionally locked for a read-modify-write), build a new one from a decoded body,
 * merge a PATCH body, validate and save (insert or update), transactions, and the mapping of a
 * store error to an error kind. Every failure fills db->err (kind, errno, message) and returns
 * the negative errno. Public for the operations, for tests and for callers that compose them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "registry/codec.h"
#include "util/error-detail.h"
#include "registry/kinds.h"
#include "store/entity.h"
#include "store/store.h"

/* Upstream's VARCHAR(255) name column, which holds "<parentId>:<name>" for children. */
#define REG_NAME_MAX 255
/* Upstream's VARCHAR(255) external_id column and property name column (characters). */
#define REG_EXTERNAL_ID_MAX 255
#define REG_CUSTOM_KEY_MAX  255
/* Our cap per object on custom properties' names and values together (bytes); their count is
 * capped by REG_CUSTOM_PROPS_MAX (codec.h). */
#define REG_CUSTOM_BYTES_MAX ((size_t)1024 * 1024)

/* A store connection lent to one request, and where its error goes. */
struct reg_db {
        struct store *store;      /* borrowed */
        struct store_conn *conn;  /* borrowed */
        struct error_detail *err; /* borrowed */
};

/* Where a new entity goes: its parent and the scope its name must be unique in. */
struct reg_placement {
        int64_t parent_id;
        bool scope_uuid;   /* uniqueness scope is a fresh UUID (never collides) */
        bool scope_parent; /* scope is the parent id */
};

/* Wall clock in milliseconds (the registry's timestamps). */
int64_t reg_now_ms(void);
/* Whether type is one of the artifact kinds the generic artifact endpoints list. */
bool reg_is_artifact_type(const char *type);
/* A system integer property of e; -ENOENT when absent or not an integer. No error detail. */
int reg_prop_int(const struct store_entity *e, const char *name, int64_t *ret);

/*
 * Fills db->err for a failed store call r while doing what: busy/unreachable database ->
 * UNAVAILABLE, -E2BIG -> INVALID ("query too large"), else INTERNAL. Returns r.
 */
int reg_store_error(struct reg_db *db, int r, const char *what);

/*
 * Loads entity id of kind k (any listed artifact kind when k is NULL) into *ret (caller
 * releases with store_entity_done()); *ret_kind (may be NULL) gets its kind. NOT_FOUND with
 * "no <word> found for id <id>".
 */
_warn_unused_result_ int reg_load(struct reg_db *db, const struct reg_kind *k, int64_t id,
                                  const char *word, struct store_entity *ret,
                                  const struct reg_kind **ret_kind);

/* reg_load() inside a write transaction, locking the row until it ends (read-modify-write). */
_warn_unused_result_ int reg_load_for_update(struct reg_db *db, const struct reg_kind *k,
                                             int64_t id, const char *word, struct store_entity *ret,
                                             const struct reg_kind **ret_kind);

/* Builds a new entity of in->kind at pl from in (whose values it takes over) into *e. */
_warn_unused_result_ int reg_build_new(struct reg_db *db, struct reg_input *in,
                                       const struct reg_placement *pl, struct store_entity *e);

/* Merges a PATCH body into e (system properties, customProperties replaced, externalId). */
_warn_unused_result_ int reg_merge(struct reg_db *db, struct store_entity *e, struct reg_input *in);

/*
 * Validates and writes e: a new row (create) or the existing one; a uniqueness clash is 409.
 * Validation: name, externalId and custom property limits (400), a run's times (400), and the
 * references an inference service or a serve model holds (404 when they name nothing).
 */
_warn_unused_result_ int reg_save(struct reg_db *db, const struct reg_kind *k,
                                  struct store_entity *e, bool create);
_warn_unused_result_ int reg_insert(struct reg_db *db, const struct reg_kind *k,
                                    struct store_entity *e);
_warn_unused_result_ int reg_update(struct reg_db *db, const struct reg_kind *k,
                                    struct store_entity *e);

/* Transactions: reg_tx_end() commits when r >= 0 and rolls back otherwise; returns the result. */
_warn_unused_result_ int reg_tx_begin(struct reg_db *db);
_warn_unused_result_ int reg_tx_end(struct reg_db *db, int r);
