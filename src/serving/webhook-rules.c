/* SPDX-License-Identifier: Apache-2.0 */
#include "serving/webhook-rules.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"
#include "serving/quantity.h"
#include "serving/spread.h"
#include "serving/trainedmodel.h"

/* The fields of a TrainedModel the rules look at; all borrowed from the request JSON. */
struct tm_view {
        const char *name;
        json_t *deletion_timestamp;
        json_t *annotations; /* metadata.annotations */
        json_t *spec;
        json_t *isvc; /* spec.inferenceService, any type: the CRD's schema checks the type */
        json_t *model;
        const char *storage_uri;
        json_t *memory;
};

static const struct json_field root_fields[] = {
        { "spec", JSON_OBJECT, json_dispatch_borrow, offsetof(struct tm_view, spec),
          JSON_NULLABLE },
        { 0 },
};

static const struct json_field metadata_fields[] = {
        { "name", JSON_STRING, json_dispatch_const_string, offsetof(struct tm_view, name),
          JSON_NULLABLE },
        { "deletionTimestamp", JSON_ANY_TYPE, json_dispatch_borrow,
          offsetof(struct tm_view, deletion_timestamp), JSON_NULLABLE },
        { "annotations", JSON_ANY_TYPE, json_dispatch_borrow, offsetof(struct tm_view, annotations),
          JSON_NULLABLE },
        { 0 },
};

static const struct json_field spec_fields[] = {
        { "inferenceService", JSON_ANY_TYPE, json_dispatch_borrow, offsetof(struct tm_view, isvc),
          JSON_NULLABLE },
        { "model", JSON_OBJECT, json_dispatch_borrow, offsetof(struct tm_view, model),
          JSON_NULLABLE },
        { 0 },
};

static const struct json_field model_fields[] = {
        { "storageUri", JSON_STRING, json_dispatch_const_string,
          offsetof(struct tm_view, storage_uri), JSON_NULLABLE },
        { "memory", JSON_ANY_TYPE, json_dispatch_borrow, offsetof(struct tm_view, memory),
          JSON_NULLABLE },
        { 0 },
};

static int message(char **ret, const char *fmt, ...) _printf_(2, 3);

static int message(char **ret, const char *fmt, ...)
{
        va_list ap;
        char *s;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* Decodes the view; on a type error stores a decode message naming the field in *ret_error. */
static int tm_view_decode(const json_t *object, const char *what, struct tm_view *ret,
                          char **ret_error)
{
        struct tm_view v = { .name = "", .storage_uri = "" };
        struct error_detail err = { 0 };
        json_t *obj = (json_t *)object; /* jansson is not const-correct; nothing is modified */
        json_t *metadata;
        const char *section = "";
        int r;

        if (!json_is_object(obj))
                return message(ret_error, "%s: expected a JSON object", what) < 0 ? -ENOMEM
                                                                                  : -EINVAL;

        metadata = json_object_get(obj, "metadata");
        if (metadata && !json_is_null(metadata)) {
                section = "metadata.";
                r = json_dispatch(metadata, metadata_fields, JSON_DISPATCH_ALLOW_UNKNOWN, &v, &err);
                if (r < 0)
                        goto fail;
        }
        section = "";
        r = json_dispatch(obj, root_fields, JSON_DISPATCH_ALLOW_UNKNOWN, &v, &err);
        if (r < 0)
                goto fail;
        if (v.spec) {
                section = "spec.";
                r = json_dispatch(v.spec, spec_fields, JSON_DISPATCH_ALLOW_UNKNOWN, &v, &err);
                if (r < 0)
                        goto fail;
        }
        if (v.model) {
                section = "spec.model.";
                r = json_dispatch(v.model, model_fields, JSON_DISPATCH_ALLOW_UNKNOWN, &v, &err);
                if (r < 0)
                        goto fail;
        }
        *ret = v;
        return 0;

fail:
        if (r == -ENOMEM)
                return r;
        return message(ret_error, "%s: cannot decode field %s%s: %s", what, section, err.field,
                       err.message) < 0
                       ? -ENOMEM
                       : -EINVAL;
}

static bool name_is_valid(const char *name)
{
        if (name[0] == '\0')
                return false;
        for (const char *p = name; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
                        return false;
        return true;
}

static bool storage_uri_is_valid(const char *uri)
{
        static const char *const prefixes[] = { "s3://", "gs://", "https://", "http://" };

        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (strneq(uri, prefixes[i], strlen(prefixes[i])))
                        return true;
        return false;
}

/* Text of a memory value for messages: the string itself, or its compact JSON. */
static char *memory_text(const json_t *memory)
{
        if (json_is_string(memory))
                return strdup(json_string_value(memory));
        return json_dumps(memory, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* Rule 5 (placement, docs/placement.md): modelplane.io/copies is a positive integer or "all". */
static int check_copies(const struct tm_view *v, char **ret)
{
        const json_t *copies = json_object_get(v->annotations, SPREAD_COPIES_ANNOTATION);
        AUTOFREE char *text = NULL;
        unsigned n;

        if (!copies ||
            (json_is_string(copies) && spread_copies_parse(json_string_value(copies), &n) >= 0))
                return TM_ADMISSION_ALLOWED;
        text = json_is_string(copies) ? strdup(json_string_value(copies))
                                      : json_dumps(copies, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!text)
                return -ENOMEM;
        return message(ret,
                       "the Trained Model \"%s\" annotation " SPREAD_COPIES_ANNOTATION
                       " is invalid: it must be a positive integer of at most %u or \"" SPREAD_COPIES_ALL
                       "\" (the value given is \"%s\")",
                       v->name, SPREAD_COPIES_MAX, text) < 0
                       ? -ENOMEM
                       : TM_ADMISSION_DENIED;
}

/* Rules 1-3 and 5 on one object. Returns a verdict or -ENOMEM. */
static int check_object(const struct tm_view *v, char **ret)
{
        struct quantity q;
        int r;

        if (!name_is_valid(v->name))
                return message(ret,
                               "the Trained Model \"%s\" is invalid: a Trained Model name must "
                               "consist of alphanumeric characters, '_', or '-'. (e.g. \"my-Name\" "
                               "or \"abc_123\", regex used for validation is '^[a-zA-Z0-9_-]+$')",
                               v->name) < 0
                               ? -ENOMEM
                               : TM_ADMISSION_DENIED;

        /* not KServe's rule: the name is the value of the model's label, which the API server
         * refuses past 63 characters (the controller copes without the webhook too) */
        if (json_is_string(v->isvc) && json_string_length(v->isvc) > TM_LABEL_VALUE_MAX)
                return message(ret,
                               "the Trained Model \"%s\" inferenceService field is invalid: "
                               "spec.inferenceService must be no more than %u characters, the "
                               "limit of a label value (it has %zu)",
                               v->name, TM_LABEL_VALUE_MAX, json_string_length(v->isvc)) < 0
                               ? -ENOMEM
                               : TM_ADMISSION_DENIED;

        if (!storage_uri_is_valid(v->storage_uri))
                return message(ret,
                               "the Trained Model \"%s\" storageUri field is invalid. The storage "
                               "uri must start with one of the prefixes: s3://, gs://, https://, "
                               "http://. (the storage uri given is \"%s\")",
                               v->name, v->storage_uri) < 0
                               ? -ENOMEM
                               : TM_ADMISSION_DENIED;

        if (!v->memory)
                return message(ret,
                               "the Trained Model \"%s\" memory field is invalid: spec.model.memory "
                               "is required",
                               v->name) < 0
                               ? -ENOMEM
                               : TM_ADMISSION_DENIED;

        r = quantity_from_json(v->memory, &q);
        if (r < 0 || quantity_sign(&q) < 0) {
                AUTOFREE char *text = memory_text(v->memory);
                if (!text)
                        return -ENOMEM;
                return message(ret,
                               "the Trained Model \"%s\" memory field is invalid: spec.model.memory "
                               "must be a non-negative quantity such as \"128Mi\" or \"1G\" (the "
                               "memory given is \"%s\")",
                               v->name, text) < 0
                               ? -ENOMEM
                               : TM_ADMISSION_DENIED;
        }
        return check_copies(v, ret);
}

/* tm_view_decode() as a verdict: TM_ADMISSION_BAD_REQUEST when @object does not decode. */
static int decode_verdict(const json_t *object, const char *what, struct tm_view *ret, char **msg)
{
        int r = tm_view_decode(object, what, ret, msg);

        if (r == -ENOMEM)
                return r;
        return r < 0 ? TM_ADMISSION_BAD_REQUEST : TM_ADMISSION_ALLOWED;
}

/* The memory of an existing TrainedModel may not change. */
static int check_memory_unchanged(const struct tm_view *v, const json_t *old_object, char **msg)
{
        struct tm_view old;
        struct quantity q_new, q_old;
        char s_old[QUANTITY_STRING_MAX], s_new[QUANTITY_STRING_MAX];
        int r;

        r = decode_verdict(old_object, "oldObject", &old, msg);
        if (r != TM_ADMISSION_ALLOWED)
                return r;
        /* check_object() proved the new memory parses. */
        if (quantity_from_json(v->memory, &q_new) < 0 ||
            quantity_from_json(old.memory, &q_old) < 0 || quantity_cmp(&q_new, &q_old) == 0)
                return TM_ADMISSION_ALLOWED;
        if (quantity_to_string(&q_old, s_old, sizeof(s_old)) < 0 ||
            quantity_to_string(&q_new, s_new, sizeof(s_new)) < 0)
                return -ENOMEM;
        r = message(msg,
                    "the Trained Model \"%s\" memory field is immutable. The "
                    "memory was \"%s\" but it is updated to \"%s\"",
                    v->name, s_old, s_new);
        return r < 0 ? r : TM_ADMISSION_DENIED;
}

/* CREATE and UPDATE: the verdict, with its message in *msg unless allowed. */
static int check_write(bool update, const json_t *object, const json_t *old_object, char **msg)
{
        struct tm_view v;
        int r;

        r = decode_verdict(object, "object", &v, msg);
        if (r != TM_ADMISSION_ALLOWED)
                return r;
        /* Deleting objects may always be updated, so finalizers can be removed. */
        if (update && v.deletion_timestamp)
                return TM_ADMISSION_ALLOWED;
        r = check_object(&v, msg);
        if (r != TM_ADMISSION_ALLOWED || !update)
                return r;
        return check_memory_unchanged(&v, old_object, msg);
}

int tm_validate_admission(const char *operation, const json_t *object, const json_t *old_object,
                          char **ret_denial_message)
{
        AUTOFREE char *msg = NULL;
        int r;

        if (!operation || !ret_denial_message)
                return -EINVAL;

        if (streq(operation, "DELETE") || streq(operation, "CONNECT")) {
                r = TM_ADMISSION_ALLOWED;
        } else if (streq(operation, "CREATE") || streq(operation, "UPDATE")) {
                r = check_write(streq(operation, "UPDATE"), object, old_object, &msg);
        } else {
                r = message(&msg, "unknown operation \"%s\"", operation);
                if (r >= 0)
                        r = TM_ADMISSION_BAD_REQUEST;
        }
        if (r < 0)
                return r;
        *ret_denial_message = r == TM_ADMISSION_ALLOWED ? NULL : TAKE_PTR(msg);
        return r;
}
