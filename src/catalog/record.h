/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A compact, immutable JSON object: the members of a catalog model or artifact in their order,
 * as (key, value) pairs in one allocation. A jansson object costs a hash table (a bucket array and one
 * allocation per member) besides its values; a model has a dozen members that are only read by
 * name a few times per snapshot build (the hot paths resolve them once), so a short array read
 * in order is all it needs. Keys the catalog knows point to static strings, others are packed
 * behind the members. Values stay jansson values (shared between models by the loader's
 * interning); the record holds a reference to each. Pure.
 */

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

struct catalog_record_member {
        const char *key;
        json_t *value; /* a reference held by the record */
};

struct catalog_record {
        /* references: not atomic, a record is shared only within the data of one parse (equal
         * artifacts), which is built and freed by one thread at a time */
        uint32_t refs;
        uint32_t n;
        struct catalog_record_member v[]; /* then the packed keys */
};

/* A record being built, member by member (keys borrowed until catalog_record_build()). */
#define CATALOG_RECORD_BUILD_MAX 32
struct catalog_record_builder {
        size_t n;
        struct catalog_record_member v[CATALOG_RECORD_BUILD_MAX];
};

/* Appends (key, value), taking value (NULL: -ENOMEM); -E2BIG when the builder is full. */
_warn_unused_result_ int catalog_record_builder_add(struct catalog_record_builder *b,
                                                    const char *key, json_t *value);
/* The value of key among the members added so far (borrowed), or NULL. */
json_t *catalog_record_builder_get(const struct catalog_record_builder *b, const char *key);
/* Drops the members (their references). */
void catalog_record_builder_release(struct catalog_record_builder *b);
/* The record of b's members (moved: b is empty afterwards, even on -ENOMEM); one reference. */
_warn_unused_result_ int catalog_record_build(struct catalog_record_builder *b,
                                              struct catalog_record **ret);

/* A record of the members of object o, in its order (new references); -EINVAL, -E2BIG,
 * -ENOMEM. */
_warn_unused_result_ int catalog_record_from_json(const json_t *o, struct catalog_record **ret);

/* Another reference to r (NULL: NULL). */
struct catalog_record *catalog_record_ref(struct catalog_record *r);
/* Drops a reference; the last frees r and its values' references. Returns NULL. */
struct catalog_record *catalog_record_unref(struct catalog_record *r);
DEFINE_CLEANUP_FUNC(struct catalog_record *, catalog_record_unref)

/* The value of key (borrowed), or NULL when absent or r is NULL. */
json_t *catalog_record_get(const struct catalog_record *r, const char *key);

/* A new jansson object with the record's members in order (a private container, shared values). */
json_t *catalog_record_to_json(const struct catalog_record *r);
