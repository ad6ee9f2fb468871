/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/wire.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"

/* jansson's escaping without JSON_ENSURE_ASCII / JSON_ESCAPE_SLASH: '"', '\\' and controls. */
static int wire_key(struct buf *b, const char *k, bool first)
{
        int r = first ? 0 : buf_putc(b, ',');

        if (r >= 0)
                r = buf_put_json_string(b, k, strlen(k));
        return r < 0 ? r : buf_putc(b, ':');
}

/* Object o, or with only_type its members whose "metadataType" is only_type. */
static int wire_object_of(struct buf *b, const json_t *o, const char *only_type)
{
        const char *k;
        json_t *v;
        bool first = true;
        int r = buf_putc(b, '{');

        json_object_foreach((json_t *)o, k, v) {
                if (only_type) {
                        const char *type = json_string_value(json_object_get(v, "metadataType"));

                        if (!type || !streq(type, only_type))
                                continue;
                }
                if (r >= 0)
                        r = wire_key(b, k, first);
                if (r >= 0)
                        r = catalog_wire_append(b, v);
                first = false;
        }
        return r < 0 ? r : buf_putc(b, '}');
}

static int wire_array(struct buf *b, const json_t *a)
{
        size_t i;
        json_t *v;
        int r = buf_putc(b, '[');

        json_array_foreach((json_t *)a, i, v) {
                if (r >= 0 && i > 0)
                        r = buf_putc(b, ',');
                if (r >= 0)
                        r = catalog_wire_append(b, v);
        }
        return r < 0 ? r : buf_putc(b, ']');
}

int catalog_wire_append(struct buf *b, const json_t *v)
{
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return wire_object_of(b, v, NULL);
        case JSON_ARRAY:
                return wire_array(b, v);
        case JSON_STRING:
                return buf_put_json_string(b, json_string_value(v), json_string_length(v));
        case JSON_INTEGER:
                return buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        case JSON_TRUE:
                return buf_puts(b, "true");
        case JSON_FALSE:
                return buf_puts(b, "false");
        case JSON_NULL:
                return buf_puts(b, "null");
        case JSON_REAL:
                return -ENOTSUP;
        }
        return -EINVAL;
}

/* The model's customProperties as served: only its MetadataStringValue entries. */
static int wire_string_properties(struct buf *b, const json_t *custom)
{
        return wire_object_of(b, custom, "MetadataStringValue");
}

static const char *const set_keys[] = { "id", "source_id", "customProperties" };

/* The value of set_keys[s] in the served object (v: the model's own value, or NULL). */
static int wire_set_value(struct buf *b, size_t s, const char *id, const char *source_id,
                          const json_t *v)
{
        switch (s) {
        case 0:
                return buf_put_json_string(b, id, strlen(id));
        case 1:
                return buf_put_json_string(b, source_id, strlen(source_id));
        default:
                return v ? wire_string_properties(b, v) : buf_puts(b, "{}");
        }
}

static size_t set_key_find(const char *k)
{
        size_t s = 0;

        while (s < ELEMENTSOF(set_keys) && !streq(k, set_keys[s]))
                s++;
        return s;
}

/*
 * As json_object_set() on a copy of model would place them: "id", "source_id" and
 * "customProperties" replace a value of that key in place, or come last in that order.
 */
static int wire_model_fields(struct buf *b, const struct catalog_record *model, const char *id,
                             const char *source_id)
{
        bool seen[ELEMENTSOF(set_keys)] = { false }, first = true;
        int r = 0;

        for (size_t i = 0; i < model->n; i++) {
                const char *k = model->v[i].key;
                const json_t *v = model->v[i].value;
                size_t s = set_key_find(k);

                r = wire_key(b, k, first);
                first = false;
                if (r >= 0 && s < ELEMENTSOF(set_keys)) {
                        seen[s] = true;
                        r = wire_set_value(b, s, id, source_id, v);
                } else if (r >= 0)
                        r = catalog_wire_append(b, v);
                if (r < 0)
                        return r;
        }
        for (size_t s = 0; s < ELEMENTSOF(set_keys) && r >= 0; s++) {
                if (seen[s])
                        continue;
                r = wire_key(b, set_keys[s], first);
                first = false;
                if (r >= 0)
                        r = wire_set_value(b, s, id, source_id, NULL);
        }
        return r;
}

int catalog_wire_model(const struct catalog_record *model, const char *id, const char *source_id,
                       char **ret, size_t *ret_len)
{
        struct buf b = BUF_INIT(SIZE_MAX);
        char *p;
        int r;

        r = buf_putc(&b, '{');
        if (r >= 0)
                r = wire_model_fields(&b, model, id, source_id);
        if (r >= 0)
                r = buf_putc(&b, '}');
        if (r < 0) {
                buf_release(&b);
                return r;
        }
        /* exactly sized: the text lives as long as the snapshot */
        p = realloc(b.p, b.len + 1);
        if (!p) {
                buf_release(&b);
                return -ENOMEM;
        }
        *ret_len = b.len;
        *ret = p;
        return 0;
}
