/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The entity kinds of the Model Registry API as data: for every kind, its storage group and
 * type, its parent, and a table of its type-specific wire fields (JSON name, stored property
 * name, wire type, which request schemas accept it, enum values, create-time default). The
 * decoder, encoder and filterQuery resolver are all driven by these tables.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/error-detail.h"
#include "store/entity.h"

enum reg_ftype {
        REG_F_STRING,
        REG_F_ENUM,    /* string, one of enums[] */
        REG_F_ID,      /* string of an int32 on the wire, stored as int */
        REG_F_MS,      /* string of an int64 (milliseconds) on the wire, stored as int */
        REG_F_DOUBLE,  /* JSON number */
        REG_F_INT,     /* JSON integer */
        REG_F_STRLIST, /* array of strings, stored as JSON text */
};

enum {
        REG_FF_CREATE = 1U << 0,   /* in the *Create schema */
        REG_FF_UPDATE = 1U << 1,   /* in the *Update schema */
        REG_FF_REQUIRED = 1U << 2, /* 422 when missing/zero on create */
        REG_FF_OUTPUT = 1U << 3,   /* only in the full entity schema (server-set) */
        REG_FF_PARENT = 1U << 4,   /* equals the parent id */
};

struct reg_field {
        const char *json;
        const char *prop; /* stored system property name */
        enum reg_ftype type;
        unsigned flags;
        const char *const *enums; /* NULL-terminated, REG_F_ENUM */
        const char *enum_name;    /* for "<v> is not a valid <EnumType>" */
        const char *dflt;         /* create-time default (enum) */
};

enum reg_kind_id {
        REG_REGISTERED_MODEL,
        REG_MODEL_VERSION,
        REG_MODEL_ARTIFACT,
        REG_DOC_ARTIFACT,
        REG_DATASET,
        REG_METRIC,
        REG_PARAMETER,
        REG_METRIC_HISTORY,
        REG_SERVING_ENVIRONMENT,
        REG_INFERENCE_SERVICE,
        REG_SERVE_MODEL,
        REG_EXPERIMENT,
        REG_EXPERIMENT_RUN,
        REG_KIND__MAX,
};

struct reg_kind {
        enum reg_kind_id id;
        const char *type;        /* stored type, e.g. "RegisteredModel" */
        const char *word;        /* "registered model", for messages */
        const char *plural_word; /* "registered models" */
        enum store_group group;
        const char *artifact_type;      /* "model-artifact" …; NULL for non-artifacts */
        bool name_required;             /* 422 when name missing on create */
        bool name_uuid;                 /* a missing name becomes a UUID */
        const struct reg_field *fields; /* terminated by json == NULL */
};

const struct reg_kind *reg_kind(enum reg_kind_id id);
/* The artifact kind for an artifactType string, or NULL. */
const struct reg_kind *reg_kind_by_artifact_type(const char *artifact_type);
/* The kind stored with this type name, or NULL. */
const struct reg_kind *reg_kind_by_type(const char *type);
const struct reg_field *reg_kind_field(const struct reg_kind *k, const char *json);

/* Every artifact kind listed by the generic artifact endpoints (metric history excluded). */
extern const char *const reg_artifact_types[];
extern const size_t reg_n_artifact_types;

extern const char *const reg_artifact_states[];

/* LIKE/ILIKE patterns: at most this many characters and unescaped wildcards (% and _). */
#define REG_LIKE_PATTERN_MAX   256
#define REG_LIKE_WILDCARDS_MAX 16

/*
 * filterQuery (spec B.8) for one kind: parses query with filterq and lowers it to a store
 * condition, resolving names against k (well-known columns, "description", the kind's system
 * properties, else custom properties; an artifact's `state` also takes its enum index). *ret =
 * NULL for a NULL or empty query. A syntax error or an exceeded limit (filterq/filterq.h) fills
 * err with ERROR_INVALID and "invalid filter query: ...: bad request"; so does a LIKE/ILIKE
 * pattern past REG_LIKE_PATTERN_MAX characters or REG_LIKE_WILDCARDS_MAX wildcards.
 */
_warn_unused_result_ int reg_filter_compile(const struct reg_kind *k, const char *query,
                                            struct store_cond **ret, struct error_detail *err);
