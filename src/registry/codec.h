/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Wire codec for registry entities, driven by the kind tables: strict request decoding (unknown
 * fields, wrong JSON types and bad enum values are rejected with the upstream messages) and
 * response encoding (string ids, string millisecond timestamps, customProperties always
 * present, unset optional fields omitted). MetadataValue variants per spec B.5.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error-detail.h"
#include "registry/kinds.h"
#include "store/entity.h"

/* Custom properties per object at most (400 "invalid customProperties: ..." past it). */
#define REG_CUSTOM_PROPS_MAX 1000

enum reg_schema {
        REG_SCHEMA_CREATE, /* <Kind>Create */
        REG_SCHEMA_UPDATE, /* <Kind>Update */
        REG_SCHEMA_FULL,   /* <Kind>: everything, id and timestamps accepted */
};

/* A decoded request body. vals holds system properties (custom=false) for the fields present,
 * "description" included, and the custom properties when has_custom. */
struct reg_input {
        const struct reg_kind *kind;
        bool has_id;
        int64_t id;
        bool has_name;
        bool has_external_id;
        bool has_custom;
        struct store_entity vals; /* owned; name/external_id set when has_* */
};

void reg_input_done(struct reg_input *in);

/* The "artifactType" of a union body: borrowed string or NULL. */
const char *reg_body_artifact_type(json_t *obj);

_warn_unused_result_ int reg_decode(const struct reg_kind *k, enum reg_schema schema, json_t *obj,
                                    struct reg_input *ret, struct error_detail *err);

/* Checks required fields for a create: 422 "required field '<f>' is zero value." */
_warn_unused_result_ int reg_check_required(const struct reg_input *in, struct error_detail *err);

/* Decodes one customProperties object into custom properties of e. */
_warn_unused_result_ int reg_decode_custom(json_t *obj, struct store_entity *e,
                                           struct error_detail *err);

/*
 * Where a request body holds U+0000 (or the text \u0000, which upstream refuses too): the path of
 * the first such string or key ("description", "customProperties.k.string_value", "items[2]")
 * in ret, cut to size. False when data is not JSON or has none.
 */
bool reg_body_nul_field(const char *data, size_t len, char *ret, size_t size);

/* New reference; NULL on OOM. */
json_t *reg_encode(const struct reg_kind *k, const struct store_entity *e);
