/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The registry's domain layer over the store, without HTTP. Operations, one per route family
 * (get, find, list, create, patch, upsert, the derived resources of an inference service), take
 * a store connection and a parsed request (ids as numbers, a decoded body as struct reg_input,
 * or the parsed JSON where decoding needs the stored entity's kind) and return a domain result.
 * Every failure fills db->err (kind, errno, message) and returns the negative errno; the HTTP
 * status is chosen only by api.c from the error kind. The steps the operations share (load,
 * build, merge, validate and save, transactions, the store-error -> kind mapping) are in
 * persist.h, which this header includes.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "registry/codec.h"
#include "util/error-detail.h"
#include "registry/kinds.h"
#include "registry/persist.h"
#include "store/entity.h"
#include "store/store.h"

/* ---- operations ---- */

/* One entity answered by an operation. */
struct reg_result {
        const struct reg_kind *kind; /* the entity's kind */
        struct store_entity e;       /* owned */
        bool created;                /* reg_upsert(): a new artifact was written */
};
void reg_result_done(struct reg_result *r);

/* One entity of kind k by id (k NULL: any listed artifact kind); NOT_FOUND. */
_warn_unused_result_ int reg_get(struct reg_db *db, const struct reg_kind *k, int64_t id,
                                 struct reg_result *ret);

/* Find-one (spec B.6): the parameters as given (NULL when absent; parent not parsed yet). */
struct reg_find_req {
        const struct reg_kind *kind;
        bool any_artifact; /* any listed artifact kind */
        const char *name;
        const char *external_id;
        const char *parent; /* parentResourceId */
};
/* INVALID for a wrong parameter combination or parent id; NOT_FOUND for 0 or several matches. */
_warn_unused_result_ int reg_find(struct reg_db *db, const struct reg_find_req *rq,
                                  struct reg_result *ret);

/* A list (spec B.7). Strings are borrowed. */
struct reg_list_req {
        const struct reg_kind *kind; /* names in filter resolve against it */
        const char *const *types;    /* the stored types listed; NULL: kind's own */
        size_t n_types;
        bool has_parent;
        int64_t parent_id;
        const char *name;        /* exact name, or NULL */
        const char *external_id; /* exact external id, or NULL (ignored with name) */
        int32_t page_size;       /* <= 0: unlimited */
        enum store_order order;
        bool desc;
        const char *page_token; /* nextPageToken, or NULL */
        const char *filter;     /* filterQuery, or NULL */
        const int32_t *steps;   /* metric history: only these steps (n_steps > 0) */
        size_t n_steps;
};
struct reg_list {
        struct store_entity *items; /* owned, n of them */
        size_t n;
        char *next_page_token; /* owned; NULL when no more */
};
void reg_list_done(struct reg_list *l);
/* INVALID for a bad page token or filter query ("invalid nextPageToken: …", "invalid filter…"). */
_warn_unused_result_ int reg_list(struct reg_db *db, const struct reg_list_req *rq,
                                  struct reg_list *ret);

/* A create: the decoded body, and the parent the path names (nested routes). */
struct reg_create_req {
        struct reg_input *in;   /* borrowed; its values are taken over */
        enum reg_schema schema; /* what in was decoded as */
        bool path_parent;       /* parent_id comes from the path and wins over the body's */
        enum reg_kind_id parent_kind;
        int64_t parent_id;
};
/*
 * Required fields (UNPROCESSABLE), the parent (NOT_FOUND), then validate and insert in one
 * transaction (CONFLICT on a uniqueness clash).
 */
_warn_unused_result_ int reg_create(struct reg_db *db, const struct reg_create_req *rq,
                                    struct reg_result *ret);

/*
 * The kind a PATCH of entity id decodes its body as (spec B.10.2): k itself, or for k NULL (any
 * artifact) the stored artifact's kind. NOT_FOUND when there is no such entity (@word names it).
 * The body is then decoded at the HTTP edge, as a create's is.
 */
_warn_unused_result_ int reg_patch_kind(struct reg_db *db, const struct reg_kind *k, int64_t id,
                                        const char *word, const struct reg_kind **ret);

/*
 * PATCH (spec B.10.2) of entity id of kind k with the decoded Update input in: loads it locked,
 * merges, validates and writes, in one transaction.
 */
_warn_unused_result_ int reg_patch(struct reg_db *db, const struct reg_kind *k, int64_t id,
                                   const char *word, struct reg_input *in, struct reg_result *ret);

/* An artifact upsert under a model version or experiment run (spec B.10.4). */
struct reg_upsert_req {
        enum reg_kind_id parent_kind; /* REG_MODEL_VERSION or REG_EXPERIMENT_RUN */
        int64_t parent_id;
        struct reg_input *in; /* borrowed, decoded as the full schema of its artifact kind */
};
/* ret->created tells a new artifact from an update (the 201/200 rule is the caller's). */
_warn_unused_result_ int reg_upsert(struct reg_db *db, const struct reg_upsert_req *rq,
                                    struct reg_result *ret);

/* The registered model of inference service id (B.3 #27). */
_warn_unused_result_ int reg_is_model(struct reg_db *db, int64_t id, struct reg_result *ret);
/* The model version of inference service id, else its model's latest (B.3 #30). */
_warn_unused_result_ int reg_is_version(struct reg_db *db, int64_t id, struct reg_result *ret);
