/* SPDX-License-Identifier: Apache-2.0 */
#include "json/json-util.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int dispatch_error(struct error_detail *e, const char *name, int r, const char *fmt, ...)
        _printf_(4, 5);

static int dispatch_error(struct error_detail *e, const char *name, int r, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        r = error_detail_setv(e, r == -ENOMEM ? ERROR_INTERNAL : ERROR_INVALID, r, name ? name : "",
                              fmt, ap);
        va_end(ap);
        return r;
}

static const char *type_name(int type)
{
        switch (type) {
        case JSON_OBJECT:
                return "object";
        case JSON_ARRAY:
                return "array";
        case JSON_STRING:
                return "string";
        case JSON_INTEGER:
                return "integer";
        case JSON_REAL:
                return "number";
        case JSON_TRUE:
        case JSON_FALSE:
                return "boolean";
        case JSON_NULL:
                return "null";
        default:
                return "value";
        }
}

static bool type_matches(int want, const json_t *v)
{
        if (want == JSON_ANY_TYPE)
                return true;
        if (want == JSON_TRUE || want == JSON_FALSE)
                return json_is_boolean(v);
        if (want == JSON_REAL)
                return json_is_number(v);
        return (int)json_typeof(v) == want;
}

int json_dispatch(json_t *v, const struct json_field *table, unsigned flags, void *base,
                  struct error_detail *reterr)
{
        const char *key;
        json_t *value;
        int r;

        if (!json_is_object(v))
                return dispatch_error(reterr, NULL, -EINVAL, "expected a JSON object, got %s",
                                      v ? type_name(json_typeof(v)) : "nothing");

        if (!(flags & JSON_DISPATCH_ALLOW_UNKNOWN))
                json_object_foreach(v, key, value) {
                        const struct json_field *f = table;
                        while (f->name && !streq(f->name, key))
                                f++;
                        if (!f->name)
                                return dispatch_error(reterr, key, -EINVAL, "unknown field \"%s\"",
                                                      key);
                }

        for (const struct json_field *f = table; f->name; f++) {
                value = json_object_get(v, f->name);
                if (json_is_null(value) && (f->flags & JSON_NULLABLE))
                        value = NULL;
                if (!value) {
                        if (f->flags & JSON_MANDATORY)
                                return dispatch_error(reterr, f->name, -EINVAL,
                                                      "field \"%s\" is required", f->name);
                        continue;
                }
                if (!type_matches(f->type, value))
                        return dispatch_error(reterr, f->name, -EINVAL,
                                              "field \"%s\" must be a %s, got %s", f->name,
                                              type_name(f->type), type_name(json_typeof(value)));
                r = f->fn(f->name, value, (char *)base + f->offset, reterr);
                if (r < 0)
                        return r;
        }
        return 0;
}

bool json_string_has_nul(const json_t *v)
{
        return json_is_string(v) && strlen(json_string_value(v)) != json_string_length(v);
}

static int check_string(const char *name, const json_t *v, struct error_detail *e)
{
        if (!json_is_string(v))
                return dispatch_error(e, name, -EINVAL, "field \"%s\" must be a string", name);
        if (json_string_has_nul(v))
                return dispatch_error(e, name, -EILSEQ, "field \"%s\" contains a NUL character",
                                      name);
        return 0;
}

int json_dispatch_string(const char *name, json_t *v, void *ret, struct error_detail *e)
{
        char **s = ret, *copy;
        int r;

        r = check_string(name, v, e);
        if (r < 0)
                return r;
        copy = strndup(json_string_value(v), json_string_length(v));
        if (!copy)
                return -ENOMEM;
        free(*s);
        *s = copy;
        return 0;
}

int json_dispatch_const_string(const char *name, json_t *v, void *ret, struct error_detail *e)
{
        const char **s = ret;
        int r;

        r = check_string(name, v, e);
        if (r < 0)
                return r;
        *s = json_string_value(v);
        return 0;
}

int json_dispatch_int64(const char *name, json_t *v, void *ret, struct error_detail *e)
{
        int64_t *i = ret;

        if (!json_is_integer(v))
                return dispatch_error(e, name, -EINVAL, "field \"%s\" must be an integer", name);
        *i = (int64_t)json_integer_value(v);
        return 0;
}

int json_dispatch_uint32(const char *name, json_t *v, void *ret, struct error_detail *e)
{
        uint32_t *u = ret;
        json_int_t i;

        if (!json_is_integer(v))
                return dispatch_error(e, name, -EINVAL, "field \"%s\" must be an integer", name);
        i = json_integer_value(v);
        if (i < 0 || i > (json_int_t)UINT32_MAX)
                return dispatch_error(e, name, -ERANGE, "field \"%s\" is out of range", name);
        *u = (uint32_t)i;
        return 0;
}

int json_dispatch_bool(const char *name, json_t *v, void *ret, struct error_detail *e)
{
        bool *b = ret;

        if (!json_is_boolean(v))
                return dispatch_error(e, name, -EINVAL, "field \"%s\" must be a boolean", name);
        *b = json_is_true(v);
        return 0;
}

int json_dispatch_json(const char *name, json_t *v, void *ret, struct error_detail *e)
{
        json_t **j = ret;

        (void)name;
        (void)e;
        json_decref(*j);
        *j = json_incref(v);
        return 0;
}

int json_dispatch_borrow(const char *name, json_t *v, void *ret, struct error_detail *e)
{
        json_t **j = ret;

        (void)name;
        (void)e;
        *j = v;
        return 0;
}

int json_parse_bounded(const char *data, size_t len, json_t **ret, struct error_detail *reterr)
{
        return json_parse_bounded_flags(data, len, 0, ret, reterr);
}

int json_parse_bounded_flags(const char *data, size_t len, unsigned flags, json_t **ret,
                             struct error_detail *reterr)
{
        size_t jflags = JSON_REJECT_DUPLICATES;
        json_error_t err;
        json_t *v;

        if (flags & JSON_PARSE_ALLOW_NUL)
                jflags |= JSON_ALLOW_NUL;
        v = json_loadb(data, len, jflags, &err);
        if (!v)
                return error_detail_set(reterr, ERROR_INVALID, -EINVAL, "%s at line %d column %d",
                                        err.text, err.line, err.column);
        *ret = v;
        return 0;
}

json_t *json_get_path(const json_t *root, ...)
{
        const json_t *cur = root;
        const char *key;
        va_list ap;

        va_start(ap, root);
        while (cur && (key = va_arg(ap, const char *)))
                cur = json_is_object(cur) ? json_object_get(cur, key) : NULL;
        va_end(ap);
        return (json_t *)cur; /* NOLINT: jansson getters are not const-correct */
}

const char *json_get_string_path(const json_t *root, ...)
{
        const json_t *cur = root;
        const char *key;
        va_list ap;

        va_start(ap, root);
        while (cur && (key = va_arg(ap, const char *)))
                cur = json_is_object(cur) ? json_object_get(cur, key) : NULL;
        va_end(ap);
        return json_is_string(cur) && !json_string_has_nul(cur) ? json_string_value(cur) : NULL;
}

char *json_dumps_compact(const json_t *v)
{
        return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}
