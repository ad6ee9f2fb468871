/* SPDX-License-Identifier: Apache-2.0 */
#include "registry/codec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "util/base64.h"
#include "util/parse-util.h"

void reg_input_done(struct reg_input *in)
{
        store_entity_done(&in->vals);
        *in = (struct reg_input){ 0 };
}

static const char *json_type_word(const json_t *v)
{
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return "object";
        case JSON_ARRAY:
                return "array";
        case JSON_STRING:
                return "string";
        case JSON_INTEGER:
        case JSON_REAL:
                return "number";
        case JSON_TRUE:
        case JSON_FALSE:
                return "bool";
        default:
                return "null";
        }
}

static int type_error(struct error_detail *err, const char *schema, const char *field,
                      const json_t *v, const char *want)
{
        return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                "json: cannot unmarshal %s into Go struct field %s.%s of type %s",
                                json_type_word(v), schema, field, want);
}

const char *reg_body_artifact_type(json_t *obj)
{
        json_t *t = json_object_get(obj, "artifactType");
        return json_is_string(t) ? json_string_value(t) : NULL;
}

/*
 * One custom property value: each decoder checks the JSON type of val (the member value_key of a
 * metadata value of type mt, for key) and fills p.
 */
typedef int metadata_decode_fn(const char *key, const char *mt, const char *value_key, json_t *val,
                               struct store_prop *p, struct error_detail *err);

static int decode_string_value(const char *key, const char *mt, const char *value_key, json_t *val,
                               struct store_prop *p, struct error_detail *err)
{
        if (!json_is_string(val))
                return type_error(err, mt, value_key, val, "string");
        p->type = STORE_P_STRING;
        p->s = strdup(json_string_value(val));
        return 0;
}

/* An int32, as a JSON integer or a decimal string (upstream's int64 string encoding). */
static int decode_int_value(const char *key, const char *mt, const char *value_key, json_t *val,
                            struct store_prop *p, struct error_detail *err)
{
        int32_t i;

        if (json_is_integer(val)) {
                json_int_t j = json_integer_value(val);

                if (j < INT32_MIN || j > INT32_MAX)
                        return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                                "bad request: unable to decode as int64 "
                                                "%" JSON_INTEGER_FORMAT " for key %s",
                                                j, key);
                i = (int32_t)j;
        } else if (!json_is_string(val))
                return type_error(err, mt, value_key, val, "string");
        else if (safe_atoi32(json_string_value(val), &i) < 0)
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "bad request: unable to decode as int64 %s for key %s",
                                        json_string_value(val), key);
        p->type = STORE_P_INT;
        p->i = i;
        return 0;
}

static int decode_double_value(const char *key, const char *mt, const char *value_key, json_t *val,
                               struct store_prop *p, struct error_detail *err)
{
        if (!json_is_number(val))
                return type_error(err, mt, value_key, val, "float64");
        p->type = STORE_P_DOUBLE;
        p->d = json_number_value(val);
        return 0;
}

static int decode_bool_value(const char *key, const char *mt, const char *value_key, json_t *val,
                             struct store_prop *p, struct error_detail *err)
{
        if (!json_is_boolean(val))
                return type_error(err, mt, value_key, val, "bool");
        p->type = STORE_P_BOOL;
        p->b = json_is_true(val);
        return 0;
}

/* A base64 string of a JSON object, stored as compact sorted JSON text. */
static int decode_struct_value(const char *key, const char *mt, const char *value_key, json_t *val,
                               struct store_prop *p, struct error_detail *err)
{
        AUTOFREE char *raw = NULL;
        json_auto_t *obj = NULL;
        size_t raw_len = 0;

        if (!json_is_string(val))
                return type_error(err, mt, value_key, val, "string");
        if (base64_decode(json_string_value(val), &raw, &raw_len) < 0)
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "bad request: invalid base64 struct_value for key %s", key);
        /* stored as JSON text: a NUL would cut it, so it is refused */
        if (memchr(raw, 0, raw_len))
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "bad request: struct_value for key %s contains a NUL byte",
                                        key);
        obj = json_loadb(raw, raw_len, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(obj))
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "bad request: struct_value for key %s is not a JSON object",
                                        key);
        p->type = STORE_P_STRUCT;
        p->s = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
        return 0;
}

static const struct metadata_type {
        const char *name;      /* metadataType */
        const char *value_key; /* the one other member */
        metadata_decode_fn *decode;
} metadata_types[] = {
        { "MetadataStringValue", "string_value", decode_string_value },
        { "MetadataIntValue", "int_value", decode_int_value },
        { "MetadataDoubleValue", "double_value", decode_double_value },
        { "MetadataBoolValue", "bool_value", decode_bool_value },
        { "MetadataStructValue", "struct_value", decode_struct_value },
};

static const struct metadata_type *metadata_type_find(const char *mt)
{
        for (size_t i = 0; i < ELEMENTSOF(metadata_types); i++)
                if (streq(metadata_types[i].name, mt))
                        return &metadata_types[i];
        return NULL;
}

/* The metadata value v of key: its type, no other member, and a non-null value; *ret_val. */
static int metadata_check(const char *key, json_t *v, const struct metadata_type **ret_type,
                          json_t **ret_val, struct error_detail *err)
{
        const struct metadata_type *t;
        const char *mt, *k;
        json_t *val, *x;

        if (!json_is_object(v))
                return type_error(err, "MetadataValue", key, v, "openapi.MetadataValue");
        mt = json_string_value(json_object_get(v, "metadataType"));
        t = mt ? metadata_type_find(mt) : NULL;
        if (!t)
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "metadataType not found for %s", key);
        json_object_foreach(v, k, x) {
                if (!streq(k, "metadataType") && !streq(k, t->value_key))
                        return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                                "json: unknown field \"%s\"", k);
        }
        val = json_object_get(v, t->value_key);
        if (!val || json_is_null(val))
                return error_detail_set(err, ERROR_UNPROCESSABLE, -EINVAL,
                                        "required field '%s' is zero value.", t->value_key);
        *ret_type = t;
        *ret_val = val;
        return 0;
}

static int decode_metadata(const char *key, json_t *v, struct store_entity *e,
                           struct error_detail *err)
{
        const struct metadata_type *t = NULL;
        struct store_prop p = { .custom = true };
        json_t *val = NULL;
        int r;

        r = metadata_check(key, v, &t, &val, err);
        if (r < 0)
                return r;
        r = t->decode(key, t->name, t->value_key, val, &p, err);
        if (r < 0)
                return r;
        p.name = strdup(key);
        /* the keys of one JSON object are distinct: appended in O(1), not searched for */
        r = p.name && (p.s || (p.type != STORE_P_STRING && p.type != STORE_P_STRUCT))
                    ? store_entity_append_prop(e, &p)
                    : -ENOMEM;
        if (r < 0) {
                store_prop_done(&p);
                return error_detail_set(err, ERROR_INTERNAL, r, "out of memory");
        }
        return 0;
}

int reg_decode_custom(json_t *obj, struct store_entity *e, struct error_detail *err)
{
        const char *key;
        json_t *v;
        int r;

        if (!json_is_object(obj))
                return type_error(err, "BaseResource", "customProperties", obj,
                                  "map[string]openapi.MetadataValue");
        /* checked before decoding, so that a huge map costs nothing */
        if (json_object_size(obj) > REG_CUSTOM_PROPS_MAX)
                return error_detail_set(
                        err, ERROR_INVALID, -EINVAL,
                        "invalid customProperties: %zu properties, at most %d allowed: bad request",
                        json_object_size(obj), REG_CUSTOM_PROPS_MAX);
        json_object_foreach(obj, key, v) {
                r = decode_metadata(key, v, e, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const char *schema_name(const struct reg_kind *k, enum reg_schema schema, char *buf,
                               size_t len)
{
        (void)snprintf(buf, len, "%s%s", k->type,
                       schema == REG_SCHEMA_CREATE   ? "Create"
                       : schema == REG_SCHEMA_UPDATE ? "Update"
                                                     : "");
        return buf;
}

static bool field_allowed(const struct reg_field *f, enum reg_schema schema)
{
        switch (schema) {
        case REG_SCHEMA_CREATE:
                return f->flags & REG_FF_CREATE;
        case REG_SCHEMA_UPDATE:
                return f->flags & REG_FF_UPDATE;
        default:
                return true;
        }
}

static int decode_enum(const struct reg_field *f, const char *sname, json_t *v,
                       struct store_entity *vals, struct error_detail *err)
{
        const char *s;

        if (!json_is_string(v))
                return type_error(err, sname, f->json, v, f->enum_name);
        s = json_string_value(v);
        for (const char *const *e = f->enums; *e; e++)
                if (streq(*e, s))
                        return store_entity_set_string(vals, f->prop, false, STORE_P_STRING, s);
        return error_detail_set(err, ERROR_INVALID, -EINVAL, "%s is not a valid %s", s,
                                f->enum_name);
}

/* An id (string of an int32) or a millisecond timestamp (string of an int64). */
static int decode_id_or_ms(const struct reg_field *f, const char *sname, json_t *v,
                           struct store_entity *vals, struct error_detail *err)
{
        int32_t i32;
        int64_t i;

        if (!json_is_string(v))
                return type_error(err, sname, f->json, v, "string");
        if (f->type == REG_F_MS) {
                if (safe_atoi64(json_string_value(v), &i) < 0)
                        return error_detail_set(
                                err, ERROR_INVALID, -EINVAL,
                                "invalid %s: strconv.ParseInt: parsing \"%s\": invalid syntax: bad request",
                                f->json, json_string_value(v));
                return store_entity_set_int(vals, f->prop, false, i);
        }
        if (json_string_length(v) == 0) {
                /* zero value: treated as absent, the required check reports it */
                return 0;
        }
        if (safe_atoi32(json_string_value(v), &i32) < 0)
                return error_detail_set(
                        err, ERROR_INVALID, -EINVAL,
                        "invalid %s: strconv.ParseInt: parsing \"%s\": invalid syntax: bad request",
                        f->json, json_string_value(v));
        /*
         * Ids start at 1 (the schema's pattern is ^[1-9][0-9]{0,8}$). Upstream stores 0 or a
         * negative reference and then answers it back, breaking its own response schema;
         * nothing can be referenced by such an id. But upstream reads an optional reference of 0
         * as "none" (an InferenceService's modelVersionId 0 means its model's latest version,
         * B.3 #30), so an optional "0" is accepted as absent.
         */
        if (i32 == 0 && !(f->flags & REG_FF_REQUIRED))
                return 0;
        if (i32 < 1)
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "invalid %s: \"%s\" is not a positive id: bad request",
                                        f->json, json_string_value(v));
        return store_entity_set_int(vals, f->prop, false, i32);
}

/* An array of strings, stored as its compact JSON text. */
static int decode_strlist(const struct reg_field *f, const char *sname, json_t *v,
                          struct store_entity *vals, struct error_detail *err)
{
        AUTOFREE char *text = NULL;
        size_t i;
        json_t *x;

        if (!json_is_array(v))
                return type_error(err, sname, f->json, v, "[]string");
        json_array_foreach(v, i, x)
                if (!json_is_string(x))
                        return type_error(err, sname, f->json, x, "string");
        text = json_dumps(v, JSON_COMPACT);
        if (!text)
                return -ENOMEM;
        return store_entity_set_string(vals, f->prop, false, STORE_P_STRING, text);
}

/*
 * One field of the kind's table. Returns 0, or a negative errno with err filled (a failure
 * without detail is an allocation failure).
 */
static int decode_field(const struct reg_field *f, const char *sname, json_t *v,
                        struct store_entity *vals, struct error_detail *err)
{
        struct error_detail detail = { 0 };
        int r = 0;

        switch (f->type) {
        case REG_F_STRING:
                if (!json_is_string(v))
                        return type_error(err, sname, f->json, v, "string");
                r = store_entity_set_string(vals, f->prop, false, STORE_P_STRING,
                                            json_string_value(v));
                break;
        case REG_F_ENUM:
                r = decode_enum(f, sname, v, vals, &detail);
                break;
        case REG_F_ID:
        case REG_F_MS:
                r = decode_id_or_ms(f, sname, v, vals, &detail);
                break;
        case REG_F_DOUBLE:
                if (!json_is_number(v))
                        return type_error(err, sname, f->json, v, "float64");
                r = store_entity_set_double(vals, f->prop, false, json_number_value(v));
                break;
        case REG_F_INT:
                if (!json_is_integer(v))
                        return type_error(err, sname, f->json, v, "int64");
                r = store_entity_set_int(vals, f->prop, false, json_integer_value(v));
                break;
        case REG_F_STRLIST:
                r = decode_strlist(f, sname, v, vals, &detail);
                break;
        }
        if (r >= 0)
                return 0;
        if (detail.message[0]) {
                *err = detail;
                return r;
        }
        return error_detail_set(err, ERROR_INTERNAL, r, "out of memory");
}

/* name, externalId, description: strings (null = absent). 1 handled, 0 not this key, <0. */
static int decode_string_member(enum reg_schema schema, const char *sname, const char *key,
                                json_t *v, struct reg_input *in, struct error_detail *err)
{
        bool name = streq(key, "name") && schema != REG_SCHEMA_UPDATE;
        char **dst;
        int r;

        if (!name && !streq(key, "externalId") && !streq(key, "description"))
                return 0;
        if (json_is_null(v))
                return 1;
        if (!json_is_string(v))
                return type_error(err, sname, key, v, "string");
        if (streq(key, "description")) {
                r = store_entity_set_string(&in->vals, "description", false, STORE_P_STRING,
                                            json_string_value(v));
                return r < 0 ? error_detail_set(err, ERROR_INTERNAL, r, "out of memory") : 1;
        }
        if (name) {
                in->has_name = true;
                dst = &in->vals.name;
        } else {
                in->has_external_id = true;
                dst = &in->vals.external_id;
        }
        free(*dst);
        *dst = strdup(json_string_value(v));
        return *dst ? 1 : error_detail_set(err, ERROR_INTERNAL, -ENOMEM, "out of memory");
}

/* id, createTimeSinceEpoch, lastUpdateTimeSinceEpoch of a full body. 1 handled, 0, <0. */
static int decode_full_member(enum reg_schema schema, const char *sname, const char *key, json_t *v,
                              struct reg_input *in, struct error_detail *err)
{
        int32_t id;

        if (schema != REG_SCHEMA_FULL ||
            (!streq(key, "id") && !streq(key, "createTimeSinceEpoch") &&
             !streq(key, "lastUpdateTimeSinceEpoch")))
                return 0;
        if (json_is_null(v))
                return 1;
        if (!json_is_string(v))
                return type_error(err, sname, key, v, "string");
        if (!streq(key, "id"))
                return 1;
        if (safe_atoi32(json_string_value(v), &id) < 0)
                return error_detail_set(
                        err, ERROR_INVALID, -EINVAL,
                        "invalid artifact ID: strconv.ParseInt: parsing \"%s\": invalid syntax: bad request",
                        json_string_value(v));
        in->has_id = true;
        in->id = id;
        return 1;
}

/* customProperties and artifactType. 1 handled, 0 not this key, <0. */
static int decode_special_member(const struct reg_kind *k, const char *sname, const char *key,
                                 json_t *v, struct reg_input *in, struct error_detail *err)
{
        int r;

        if (streq(key, "customProperties")) {
                if (json_is_null(v))
                        return 1;
                in->has_custom = true;
                r = reg_decode_custom(v, &in->vals, err);
                return r < 0 ? r : 1;
        }
        if (!streq(key, "artifactType") || !k->artifact_type)
                return 0;
        if (json_is_null(v))
                return 1;
        if (!json_is_string(v))
                return type_error(err, sname, key, v, "string");
        /* upstream's POST /model_artifacts ignores the body's artifactType (B.10) */
        if (k->id != REG_MODEL_ARTIFACT && !streq(json_string_value(v), k->artifact_type))
                return error_detail_set(
                        err, ERROR_INVALID, -EINVAL,
                        "invalid artifact type, must be either ModelArtifact, DocArtifact, DataSet, Metric, or Parameter: bad request");
        return 1;
}

/* One member of the body. */
static int decode_member(const struct reg_kind *k, enum reg_schema schema, const char *sname,
                         const char *key, json_t *v, struct reg_input *in, struct error_detail *err)
{
        const struct reg_field *f;
        int r;

        r = decode_string_member(schema, sname, key, v, in, err);
        if (r == 0)
                r = decode_special_member(k, sname, key, v, in, err);
        if (r == 0)
                r = decode_full_member(schema, sname, key, v, in, err);
        if (r != 0)
                return r < 0 ? r : 0;
        f = reg_kind_field(k, key);
        if (!f || !field_allowed(f, schema))
                return error_detail_set(err, ERROR_INVALID, -EINVAL, "json: unknown field \"%s\"",
                                        key);
        if (json_is_null(v) || (f->flags & REG_FF_OUTPUT))
                return 0;
        return decode_field(f, sname, v, &in->vals, err);
}

int reg_decode(const struct reg_kind *k, enum reg_schema schema, json_t *obj, struct reg_input *ret,
               struct error_detail *err)
{
        struct reg_input in = { .kind = k };
        char sname[64];
        const char *key;
        json_t *v;
        int r;

        schema_name(k, schema, sname, sizeof(sname));
        if (!json_is_object(obj))
                return error_detail_set(
                        err, ERROR_INVALID, -EINVAL,
                        "json: cannot unmarshal %s into Go value of type openapi.%s",
                        json_type_word(obj), sname);
        json_object_foreach(obj, key, v) {
                r = decode_member(k, schema, sname, key, v, &in, err);
                if (r < 0) {
                        reg_input_done(&in);
                        return r;
                }
        }
        *ret = in;
        return 0;
}

int reg_check_required(const struct reg_input *in, struct error_detail *err)
{
        const struct reg_kind *k = in->kind;

        if (k->name_required && (!in->has_name || !in->vals.name || !*in->vals.name))
                return error_detail_set(err, ERROR_UNPROCESSABLE, -EINVAL,
                                        "required field 'name' is zero value.");
        for (const struct reg_field *f = k->fields; f->json; f++) {
                const struct store_prop *p;

                if (!(f->flags & REG_FF_REQUIRED))
                        continue;
                p = store_entity_prop(&in->vals, f->prop, false);
                if (!p || (p->type == STORE_P_STRING && (!p->s || !*p->s)))
                        return error_detail_set(err, ERROR_UNPROCESSABLE, -EINVAL,
                                                "required field '%s' is zero value.", f->json);
        }
        return 0;
}

/* ---- encoding ---- */

static json_t *int_string(int64_t i)
{
        char b[32];

        (void)snprintf(b, sizeof(b), "%" PRId64, i);
        return json_string(b);
}

static json_t *encode_custom(const struct store_prop *p)
{
        switch (p->type) {
        case STORE_P_STRING:
                return json_pack("{s:s,s:s}", "metadataType", "MetadataStringValue", "string_value",
                                 p->s ? p->s : "");
        case STORE_P_INT:
                return json_pack("{s:s,s:o}", "metadataType", "MetadataIntValue", "int_value",
                                 int_string(p->i));
        case STORE_P_DOUBLE:
                return json_pack("{s:s,s:f}", "metadataType", "MetadataDoubleValue", "double_value",
                                 p->d);
        case STORE_P_BOOL:
                return json_pack("{s:s,s:b}", "metadataType", "MetadataBoolValue", "bool_value",
                                 p->b);
        case STORE_P_STRUCT:
                return json_pack("{s:s,s:s}", "metadataType", "MetadataStructValue", "struct_value",
                                 p->s ? p->s : "{}");
        }
        return NULL;
}

static int set_new(json_t *o, const char *key, json_t *v)
{
        return v ? json_object_set_new(o, key, v) : -1;
}

/* The JSON value of a typed field f stored as p (new reference; NULL on OOM). */
static json_t *encode_field(const struct reg_field *f, const struct store_prop *p)
{
        json_t *v = NULL;

        switch (f->type) {
        case REG_F_STRING:
        case REG_F_ENUM:
                /* a time stored as a number by an earlier version */
                return p->type == STORE_P_INT ? int_string(p->i) : json_string(p->s ? p->s : "");
        case REG_F_ID:
        case REG_F_MS:
                return int_string(p->i);
        case REG_F_DOUBLE:
                return json_real(p->d);
        case REG_F_INT:
                return json_integer(p->i);
        case REG_F_STRLIST:
                v = json_loads(p->s ? p->s : "[]", 0, NULL);
                if (!json_is_array(v)) {
                        json_decref(v);
                        v = json_array();
                }
                return v;
        }
        return NULL;
}

/* The members every entity has: id, name, times, externalId, description, artifactType. */
static int encode_common(const struct reg_kind *k, const struct store_entity *e, json_t *o)
{
        const struct store_prop *desc;

        if (set_new(o, "id", int_string(e->id)) < 0 ||
            set_new(o, "name", json_string(e->name ? e->name : "")) < 0 ||
            set_new(o, "createTimeSinceEpoch", int_string(e->create_ms)) < 0 ||
            set_new(o, "lastUpdateTimeSinceEpoch", int_string(e->update_ms)) < 0)
                return -ENOMEM;
        if (e->external_id && set_new(o, "externalId", json_string(e->external_id)) < 0)
                return -ENOMEM;
        desc = store_entity_prop(e, "description", false);
        if (desc && desc->s && set_new(o, "description", json_string(desc->s)) < 0)
                return -ENOMEM;
        if (k->artifact_type && set_new(o, "artifactType", json_string(k->artifact_type)) < 0)
                return -ENOMEM;
        return 0;
}

json_t *reg_encode(const struct reg_kind *k, const struct store_entity *e)
{
        json_auto_t *o = json_object(), *custom = json_object();

        if (!o || !custom || encode_common(k, e, o) < 0)
                return NULL;
        for (const struct reg_field *f = k->fields; f->json; f++) {
                const struct store_prop *p = store_entity_prop(e, f->prop, false);

                if (p && set_new(o, f->json, encode_field(f, p)) < 0)
                        return NULL;
        }
        for (size_t i = 0; i < e->n_props; i++) {
                const struct store_prop *p = &e->props[i];

                if (p->custom && set_new(custom, p->name, encode_custom(p)) < 0)
                        return NULL;
        }
        if (json_object_set(o, "customProperties", custom) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* Depth-first: the path of the first string (or key) of v holding U+0000 or the text \u0000. */
static bool find_nul(json_t *v, char *path, size_t size, size_t at, unsigned depth)
{
        const char *key;
        json_t *item;
        size_t i;

        if (depth > 32)
                return false;
        if (json_is_string(v))
                return json_string_has_nul(v) || strstr(json_string_value(v), "\\u0000");
        if (json_is_array(v))
                json_array_foreach(v, i, item) {
                        (void)snprintf(path + at, size - at, "[%zu]", i);
                        if (find_nul(item, path, size, strnlen(path, size), depth + 1))
                                return true;
                }
        else if (json_is_object(v))
                json_object_foreach(v, key, item) {
                        (void)snprintf(path + at, size - at, "%s%s", at ? "." : "", key);
                        if (strstr(key, "\\u0000") ||
                            find_nul(item, path, size, strnlen(path, size), depth + 1))
                                return true;
                }
        path[at] = '\0';
        return false;
}

bool reg_body_nul_field(const char *data, size_t len, char *ret, size_t size)
{
        json_auto_t *v = NULL;

        if (size == 0)
                return false;
        ret[0] = '\0';
        if (json_parse_bounded_flags(data, len, JSON_PARSE_ALLOW_NUL, &v, NULL) < 0)
                return false;
        return find_nul(v, ret, size, 0, 0) && ret[0];
}
