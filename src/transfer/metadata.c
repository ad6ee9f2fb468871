/* SPDX-License-Identifier: Apache-2.0 */
#include "transfer/metadata.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"

void transfer_metadata_release(struct transfer_metadata *m)
{
        char **strs[] = { &m->model_name,           &m->model_id,      &m->model_description,
                          &m->model_owner,          &m->version_name,  &m->version_description,
                          &m->version_author,       &m->artifact_name, &m->format_name,
                          &m->format_version,       &m->storage_key,   &m->storage_path,
                          &m->service_account_name, &m->source_kind,   &m->source_class,
                          &m->source_group,         &m->source_id,     &m->source_name };

        for (size_t i = 0; i < ELEMENTSOF(strs); i++)
                free(*strs[i]);
        json_decref(m->model_props);
        json_decref(m->version_props);
        json_decref(m->artifact_props);
        json_decref(m->model_api_props);
        json_decref(m->version_api_props);
        json_decref(m->artifact_api_props);
        *m = (struct transfer_metadata){ 0 };
}

enum meta_obj {
        META_MODEL,
        META_VERSION,
        META_ARTIFACT,
};

struct meta_field {
        enum meta_obj obj;
        const char *name;
        size_t offset; /* a char * member; SIZE_MAX: the object's custom_properties */
};

#define MF(o, n, member)                                         \
        {                                                        \
                o, n, offsetof(struct transfer_metadata, member) \
        }

static const struct meta_field meta_fields[] = {
        MF(META_MODEL, "name", model_name),
        MF(META_MODEL, "id", model_id),
        MF(META_MODEL, "description", model_description),
        MF(META_MODEL, "owner", model_owner),
        MF(META_MODEL, "custom_properties", model_props),
        MF(META_MODEL, "customProperties", model_api_props),
        MF(META_VERSION, "name", version_name),
        MF(META_VERSION, "description", version_description),
        MF(META_VERSION, "author", version_author),
        MF(META_VERSION, "custom_properties", version_props),
        MF(META_VERSION, "customProperties", version_api_props),
        MF(META_ARTIFACT, "name", artifact_name),
        MF(META_ARTIFACT, "model_format_name", format_name),
        MF(META_ARTIFACT, "model_format_version", format_version),
        MF(META_ARTIFACT, "storage_key", storage_key),
        MF(META_ARTIFACT, "storage_path", storage_path),
        MF(META_ARTIFACT, "service_account_name", service_account_name),
        MF(META_ARTIFACT, "model_source_kind", source_kind),
        MF(META_ARTIFACT, "model_source_class", source_class),
        MF(META_ARTIFACT, "model_source_group", source_group),
        MF(META_ARTIFACT, "model_source_id", source_id),
        MF(META_ARTIFACT, "model_source_name", source_name),
        MF(META_ARTIFACT, "custom_properties", artifact_props),
        MF(META_ARTIFACT, "customProperties", artifact_api_props),
};

static int add_props(json_t **slot, const char *key, const char *value, bool *ret_skipped,
                     struct error_detail *e)
{
        json_t *props = NULL, *v;
        const char *k;
        int r;

        if (!*value)
                return 0; /* upstream keeps "" (no properties) */
        r = json_parse_bounded(value, strlen(value), &props, NULL);
        if (r < 0) {
                *ret_skipped = true; /* upstream: "Failed to parse JSON", the key skipped */
                return 0;
        }
        if (!json_is_object(props)) {
                json_decref(props);
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, key,
                                              "%s: the custom properties are not a JSON object",
                                              key);
        }
        json_object_foreach(props, k, v) {
                if (json_is_string(v) || json_is_number(v) || json_is_boolean(v) || json_is_null(v))
                        continue;
                /* k belongs to props: the message first */
                r = error_detail_set_field(e, ERROR_INVALID, -EINVAL, key,
                                           "%s: the property \"%s\" is not a string, number or "
                                           "boolean",
                                           key, k);
                json_decref(props);
                return r;
        }
        json_decref(*slot);
        *slot = props;
        return 0;
}

/* One plain value as a MetadataValue: a new reference; NULL for null (dropped) or OOM. */
static json_t *metadata_value(const json_t *v)
{
        char num[32];

        if (json_is_string(v))
                return json_pack("{s:s, s:O}", "metadataType", "MetadataStringValue",
                                 "string_value", v);
        if (json_is_integer(v)) {
                (void)snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
                return json_pack("{s:s, s:s}", "metadataType", "MetadataIntValue", "int_value",
                                 num);
        }
        if (json_is_real(v))
                return json_pack("{s:s, s:O}", "metadataType", "MetadataDoubleValue",
                                 "double_value", v);
        if (json_is_boolean(v))
                return json_pack("{s:s, s:O}", "metadataType", "MetadataBoolValue", "bool_value",
                                 v);
        return NULL;
}

static bool is_metadata_value(const json_t *v)
{
        return json_is_object(v) && json_is_string(json_object_get(v, "metadataType"));
}

/* "<Object>.customProperties": MetadataValue objects, or plain values mapped to them. */
static int add_api_props(json_t **slot, const char *key, const char *value, struct error_detail *e)
{
        json_t *in = NULL, *out, *v;
        const char *k;
        int r;

        if (!*value)
                return 0;
        r = json_parse_bounded(value, strlen(value), &in, NULL);
        if (r < 0 || !json_is_object(in)) {
                json_decref(in);
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, key,
                                              "%s: the custom properties are not a JSON object",
                                              key);
        }
        out = json_object();
        json_object_foreach(in, k, v) {
                json_t *mv = NULL;

                if (is_metadata_value(v))
                        mv = json_incref(v);
                else if (json_is_string(v) || json_is_number(v) || json_is_boolean(v))
                        mv = metadata_value(v);
                else if (json_is_null(v))
                        continue;
                else
                        r = error_detail_set_field(e, ERROR_INVALID, -EINVAL, key,
                                                   "%s: the property \"%s\" is neither a "
                                                   "MetadataValue nor a string, number or boolean",
                                                   key, k);
                if (r >= 0 && (!out || !mv || json_object_set_new(out, k, mv) < 0))
                        r = error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
                if (r < 0)
                        break;
        }
        json_decref(in);
        if (r < 0) {
                json_decref(out);
                return r;
        }
        json_decref(*slot);
        *slot = out;
        return 0;
}

static bool *meta_flag(struct transfer_metadata *m, enum meta_obj o)
{
        switch (o) {
        case META_MODEL:
                return &m->has_model;
        case META_VERSION:
                return &m->has_version;
        case META_ARTIFACT:
                return &m->has_artifact;
        }
        return &m->has_model;
}

/* The object a key's first component names; -1 for other keys. */
static int meta_object(const char *key, const char **ret_rest)
{
        static const char *const names[] = { "RegisteredModel.", "ModelVersion.",
                                             "ModelArtifact." };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strneq(key, names[i], strlen(names[i]))) {
                        *ret_rest = key + strlen(names[i]);
                        return (int)i;
                }
        return -1;
}

int transfer_metadata_add(struct transfer_metadata *m, const char *key, const char *value,
                          bool *ret_skipped, struct error_detail *e)
{
        const char *rest = NULL;
        size_t len = strlen(value);
        int obj = meta_object(key, &rest);

        *ret_skipped = false;
        if (obj < 0)
                return 0;
        if (len > TRANSFER_METADATA_VALUE_MAX)
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, key,
                                              "%s: the value is larger than 256 KiB", key);
        while (len > 0 && strchr(" \t\r\n\f\v", value[len - 1]))
                len--;
        while (len > 0 && strchr(" \t\r\n\f\v", *value)) {
                value++;
                len--;
        }
        *meta_flag(m, (enum meta_obj)obj) = true;
        for (size_t i = 0; i < ELEMENTSOF(meta_fields); i++) {
                const struct meta_field *f = &meta_fields[i];
                char **slot = (char **)((char *)m + f->offset);
                char *s;
                int r;

                if ((int)f->obj != obj || !streq(f->name, rest))
                        continue;
                s = strndup(value, len);
                if (!s)
                        return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
                if (streq(f->name, "custom_properties")) {
                        r = add_props((json_t **)slot, key, s, ret_skipped, e);
                        free(s);
                        return r;
                }
                if (streq(f->name, "customProperties")) {
                        r = add_api_props((json_t **)slot, key, s, e);
                        free(s);
                        return r;
                }
                free(*slot);
                *slot = s;
                return 0;
        }
        *ret_skipped = true; /* a field upstream's models ignore */
        return 0;
}

static bool set(const char *s)
{
        return s && *s;
}

int transfer_metadata_validate(const struct transfer_metadata *m, bool present,
                               enum transfer_intent intent, struct error_detail *e)
{
        if (intent == TRANSFER_INTENT_UPDATE_ARTIFACT)
                return 0;
        if (!present)
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL,
                                              "MODEL_SYNC_METADATA_CONFIGMAP_PATH",
                                              "Intent %s requires ConfigMap metadata but none "
                                              "provided (MODEL_SYNC_METADATA_CONFIGMAP_PATH, "
                                              "default /etc/model-metadata)",
                                              transfer_intent_to_string(intent));
        if (m->has_model && set(m->model_name) && set(m->model_id))
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, "RegisteredModel.id",
                                              "Cannot provide both name and id for "
                                              "RegisteredModel");
        if (m->has_model && !set(m->model_name) && !set(m->model_id))
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, "RegisteredModel.name",
                                              "Must provide either name or id for "
                                              "RegisteredModel");
        if (intent == TRANSFER_INTENT_CREATE_MODEL) {
                if (!m->has_model || !m->has_version || !m->has_artifact)
                        return error_detail_set(e, ERROR_INVALID, -EINVAL,
                                                "create_model intent requires RegisteredModel, "
                                                "ModelVersion, and ModelArtifact metadata");
                if (!set(m->model_name))
                        return error_detail_set_field(e, ERROR_INVALID, -EINVAL,
                                                      "RegisteredModel.name",
                                                      "RegisteredModel name is required for "
                                                      "create_model intent");
                return 0;
        }
        if (!m->has_version || !m->has_artifact)
                return error_detail_set(e, ERROR_INVALID, -EINVAL,
                                        "create_version intent requires ModelVersion and "
                                        "ModelArtifact metadata");
        if (!set(m->version_name))
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, "ModelVersion.name",
                                              "ModelVersion name is required for create_version "
                                              "intent");
        return 0;
}

json_t *transfer_custom_properties(const json_t *props, const json_t *api_props)
{
        json_auto_t *out = api_props ? json_deep_copy(api_props) : json_object();
        const char *k;
        json_t *v;

        if (!out)
                return NULL;
        json_object_foreach((json_t *)props, k, v) {
                json_t *mv;

                if (json_is_null(v))
                        continue; /* upstream drops it */
                mv = metadata_value(v);
                if (!mv || json_object_set_new(out, k, mv) < 0)
                        return NULL;
        }
        return TAKE_PTR(out);
}
