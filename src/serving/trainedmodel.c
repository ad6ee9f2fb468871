/* SPDX-License-Identifier: Apache-2.0 */
#include "serving/trainedmodel.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"

struct tm_fields {
        json_t *spec;
        json_t *model;
        const char *isvc;
        const char *storage_uri;
        const char *framework;
        json_t *memory;
};

static const struct json_field spec_fields[] = {
        { "inferenceService", JSON_STRING, json_dispatch_const_string,
          offsetof(struct tm_fields, isvc), JSON_MANDATORY },
        { "model", JSON_OBJECT, json_dispatch_borrow, offsetof(struct tm_fields, model),
          JSON_MANDATORY },
        { 0 },
};

static const struct json_field model_fields[] = {
        { "storageUri", JSON_STRING, json_dispatch_const_string,
          offsetof(struct tm_fields, storage_uri), JSON_MANDATORY },
        { "framework", JSON_STRING, json_dispatch_const_string,
          offsetof(struct tm_fields, framework), JSON_MANDATORY },
        { "memory", JSON_ANY_TYPE, json_dispatch_borrow, offsetof(struct tm_fields, memory),
          JSON_MANDATORY },
        { 0 },
};

static void invalid(struct trained_model *tm, const char *field, const char *fmt, ...)
        _printf_(3, 4);

static void invalid(struct trained_model *tm, const char *field, const char *fmt, ...)
{
        va_list ap;

        tm->valid = false;
        (void)snprintf(tm->invalid_field, sizeof(tm->invalid_field), "%s", field);
        va_start(ap, fmt);
        (void)vsnprintf(tm->invalid_message, sizeof(tm->invalid_message), fmt, ap);
        va_end(ap);
}

static void invalid_dispatch(struct trained_model *tm, const char *prefix, int r,
                             const struct error_detail *err)
{
        char field[TM_INVALID_FIELD_MAX + sizeof(err->field)];

        (void)snprintf(field, sizeof(field), "%s%s", prefix, err->field);
        if (r == -EILSEQ)
                invalid(tm, field, "%s contains a NUL character", field);
        else if (strstr(err->message, "is required"))
                invalid(tm, field, "%s is required", field);
        else
                invalid(tm, field, "%s is invalid: %s", field, err->message);
}

static const char *json_kind(const json_t *v)
{
        return json_is_boolean(v)  ? "boolean"
               : json_is_object(v) ? "object"
               : json_is_array(v)  ? "array"
                                   : "value";
}

static void invalid_quantity(struct trained_model *tm, const json_t *memory)
{
        char text[QUANTITY_INPUT_MAX + 1];

        if (json_is_string(memory))
                (void)snprintf(text, sizeof(text), "%s", json_string_value(memory));
        else
                (void)snprintf(text, sizeof(text), "a JSON %s", json_kind(memory));
        invalid(tm, "spec.model.memory",
                "spec.model.memory \"%s\" is not a valid quantity (e.g. \"128Mi\", \"1G\")", text);
        quantity_init_zero(&tm->memory, QUANTITY_DECIMAL_SI);
}

static void invalid_negative(struct trained_model *tm)
{
        char s[QUANTITY_STRING_MAX];

        if (quantity_to_string(&tm->memory, s, sizeof(s)) < 0)
                s[0] = '\0';
        invalid(tm, "spec.model.memory", "spec.model.memory \"%s\" must not be negative", s);
        quantity_init_zero(&tm->memory, QUANTITY_DECIMAL_SI);
}

/* spec.model.memory into tm->memory; false (and tm marked invalid) when it is not usable. */
static bool check_memory(const json_t *memory, struct trained_model *tm)
{
        if (json_is_null(memory)) {
                invalid(tm, "spec.model.memory", "spec.model.memory is required");
                return false;
        }
        if (json_string_has_nul(memory)) {
                invalid(tm, "spec.model.memory", "spec.model.memory contains a NUL character");
                return false;
        }
        if (quantity_from_json(memory, &tm->memory) < 0) {
                invalid_quantity(tm, memory);
                return false;
        }
        if (quantity_sign(&tm->memory) < 0) {
                invalid_negative(tm);
                return false;
        }
        return true;
}

/* spec.model, once spec itself has dispatched into @f. */
static void check_model(struct tm_fields *f, struct trained_model *tm)
{
        struct error_detail err = { 0 };
        int r;

        r = json_dispatch(f->model, model_fields, JSON_DISPATCH_ALLOW_UNKNOWN, f, &err);
        if (r < 0) {
                invalid_dispatch(tm, "spec.model.", r, &err);
                return;
        }
        if (f->storage_uri[0] == '\0') {
                invalid(tm, "spec.model.storageUri", "spec.model.storageUri must not be empty");
                return;
        }
        if (!check_memory(f->memory, tm))
                return;
        tm->storage_uri = f->storage_uri;
        tm->framework = f->framework;
        tm->valid = true;
}

static void check_spec(const json_t *obj, struct trained_model *tm)
{
        struct tm_fields f = { 0 };
        struct error_detail err = { 0 };
        json_t *spec = json_object_get(obj, "spec");
        int r;

        if (!json_is_object(spec)) {
                invalid(tm, "spec", "spec is required and must be an object");
                return;
        }
        r = json_dispatch(spec, spec_fields, JSON_DISPATCH_ALLOW_UNKNOWN, &f, &err);
        if (r < 0) {
                invalid_dispatch(tm, "spec.", r, &err);
                if (f.isvc && f.isvc[0] != '\0')
                        tm->isvc = f.isvc;
                return;
        }
        if (f.isvc[0] == '\0') {
                invalid(tm, "spec.inferenceService", "spec.inferenceService must not be empty");
                return;
        }
        tm->isvc = f.isvc;
        if (strlen(f.isvc) > TM_LABEL_VALUE_MAX) {
                /* the API server refuses the label ("must be no more than 63 bytes") */
                invalid(tm, "spec.inferenceService",
                        "spec.inferenceService must be no more than %u characters, the limit of "
                        "a label value (it is the value of label %s); it has %zu",
                        TM_LABEL_VALUE_MAX, TM_LABEL_ISVC, strlen(f.isvc));
                return;
        }
        check_model(&f, tm);
}

static bool present(const json_t *v)
{
        return v && !json_is_null(v);
}

int trained_model_from_json(const json_t *obj, struct trained_model *ret)
{
        struct trained_model tm = { 0 };
        const json_t *fin;
        const char *ts;
        size_t i;
        json_t *e;

        if (!json_is_object(obj))
                return -EINVAL;
        tm.name = json_get_string_path(obj, "metadata", "name", NULL);
        if (!tm.name || tm.name[0] == '\0')
                return -EINVAL;
        tm.namespace_ = json_get_string_path(obj, "metadata", "namespace", NULL);
        if (!tm.namespace_)
                tm.namespace_ = "";
        tm.uid = json_get_string_path(obj, "metadata", "uid", NULL);
        tm.resource_version = json_get_string_path(obj, "metadata", "resourceVersion", NULL);
        ts = json_get_string_path(obj, "metadata", "creationTimestamp", NULL);
        if (!ts || parse_rfc3339(ts, &tm.created) < 0)
                tm.created = 0;
        tm.being_deleted = present(json_get_path(obj, "metadata", "deletionTimestamp", NULL));

        tm.labels = json_get_path(obj, "metadata", "labels", NULL);
        if (!json_is_object(tm.labels))
                tm.labels = NULL;
        fin = json_get_path(obj, "metadata", "finalizers", NULL);
        tm.finalizers = json_is_array(fin) ? fin : NULL;
        json_array_foreach(tm.finalizers, i, e)
                if (json_is_string(e) && streq(json_string_value(e), TM_FINALIZER))
                        tm.has_finalizer = true;
        tm.owner_references = json_get_path(obj, "metadata", "ownerReferences", NULL);
        if (!json_is_array(tm.owner_references))
                tm.owner_references = NULL;
        tm.status = json_get_path(obj, "status", NULL);
        if (!json_is_object(tm.status))
                tm.status = NULL;

        quantity_init_zero(&tm.memory, QUANTITY_DECIMAL_SI);
        check_spec(obj, &tm);
        *ret = tm;
        return 0;
}

const char *trained_model_label(const struct trained_model *tm, const char *key)
{
        const json_t *v = tm->labels ? json_object_get(tm->labels, key) : NULL;
        return json_is_string(v) ? json_string_value(v) : NULL;
}
