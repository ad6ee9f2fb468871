/* SPDX-License-Identifier: Apache-2.0 */
#include "filterq/eval.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "util/parse-util.h"

int filterq_eval(const struct filterq_node *n, filterq_match_fn *fn, void *userdata)
{
        if (!n)
                return 1;
        switch (n->kind) {
        case FILTERQ_AND:
        case FILTERQ_OR:
                for (size_t i = 0; i < n->n_kids; i++) {
                        int r = filterq_eval(n->kids[i], fn, userdata);

                        if (r < 0)
                                return r;
                        if ((r > 0) == (n->kind == FILTERQ_OR))
                                return r > 0 ? 1 : 0;
                }
                return n->kind == FILTERQ_AND ? 1 : 0;
        case FILTERQ_CMP:
                return fn(userdata, &n->cmp);
        }
        return -EINVAL;
}

static int fold(char c)
{
        return tolower((unsigned char)c);
}

bool filterq_like(const char *pattern, const char *s, bool ci)
{
        const char *p = pattern;
        const char *star = NULL, *resume = NULL;

        while (*s) {
                if (*p == '%') {
                        star = ++p;
                        resume = s;
                        continue;
                }
                if (*p == '_' ||
                    (*p == '\\' && p[1] && (ci ? fold(p[1]) == fold(*s) : p[1] == *s)) ||
                    (*p && *p != '\\' && (ci ? fold(*p) == fold(*s) : *p == *s))) {
                        p += *p == '\\' ? 2 : 1;
                        s++;
                        continue;
                }
                if (!star)
                        return false;
                p = star;
                s = ++resume;
        }
        while (*p == '%')
                p++;
        return *p == '\0';
}

static int cmp_numbers(double a, double b)
{
        return a < b ? -1 : a > b ? 1 : 0;
}

static int op_result(enum filterq_op op, int c)
{
        switch (op) {
        case FILTERQ_OP_EQ:
        case FILTERQ_OP_IN:
                return c == 0;
        case FILTERQ_OP_NE:
                return c != 0;
        case FILTERQ_OP_LT:
                return c < 0;
        case FILTERQ_OP_LE:
                return c <= 0;
        case FILTERQ_OP_GT:
                return c > 0;
        case FILTERQ_OP_GE:
                return c >= 0;
        default:
                return -EDOM;
        }
}

static int compare_string(enum filterq_op op, const char *lit, const json_t *actual)
{
        if (!json_is_string(actual))
                return -EDOM;
        if (op == FILTERQ_OP_LIKE)
                return filterq_like(lit, json_string_value(actual), false);
        if (op == FILTERQ_OP_ILIKE)
                return filterq_like(lit, json_string_value(actual), true);
        return op_result(op, strcmp(json_string_value(actual), lit));
}

/* An integer literal against a JSON integer (exactly) or real. */
static int compare_int(enum filterq_op op, int64_t lit, const json_t *actual)
{
        json_int_t a;

        if (json_is_real(actual))
                return op_result(op, cmp_numbers(json_real_value(actual), (double)lit));
        if (!json_is_integer(actual))
                return -EDOM;
        a = json_integer_value(actual);
        if (a == lit)
                return op_result(op, 0);
        return op_result(op, a < lit ? -1 : 1);
}

static int compare_literal(enum filterq_op op, const struct filterq_literal *l,
                           const json_t *actual)
{
        switch (l->type) {
        case FILTERQ_LIT_STRING:
                return compare_string(op, l->s, actual);
        case FILTERQ_LIT_INT:
                return compare_int(op, l->i, actual);
        case FILTERQ_LIT_FLOAT:
                if (!json_is_number(actual))
                        return -EDOM;
                return op_result(op, cmp_numbers(json_number_value(actual), l->f));
        case FILTERQ_LIT_BOOL:
                if (!json_is_boolean(actual) ||
                    (op != FILTERQ_OP_EQ && op != FILTERQ_OP_NE && op != FILTERQ_OP_IN))
                        return -EDOM;
                return op_result(op, json_is_true(actual) == l->b ? 0 : 1);
        }
        return -EDOM;
}

int filterq_compare_value(const struct filterq_cmp *cmp, const json_t *actual)
{
        int r = 0;

        if (!actual || json_is_null(actual))
                return 0;
        if (cmp->op == FILTERQ_OP_IN) {
                bool comparable = cmp->n_list == 0;

                for (size_t i = 0; i < cmp->n_list; i++) {
                        r = compare_literal(FILTERQ_OP_EQ, &cmp->list[i], actual);
                        if (r > 0)
                                return 1;
                        comparable = comparable || r == 0;
                }
                return comparable ? 0 : -EDOM;
        }
        if ((cmp->op == FILTERQ_OP_LIKE || cmp->op == FILTERQ_OP_ILIKE) &&
            cmp->value.type != FILTERQ_LIT_STRING)
                return -EDOM;
        return compare_literal(cmp->op, &cmp->value, actual);
}

/* Whether every literal of cmp can be compared with a value of the suffix's type. */
static bool suffix_accepts(enum filterq_suffix want, const struct filterq_cmp *cmp)
{
        size_t n = cmp->op == FILTERQ_OP_IN ? cmp->n_list : 1;

        for (size_t i = 0; i < n; i++) {
                enum filterq_literal_type t = cmp->op == FILTERQ_OP_IN ? cmp->list[i].type
                                                                       : cmp->value.type;
                bool ok = want == FILTERQ_SUFFIX_STRING ? t == FILTERQ_LIT_STRING
                          : want == FILTERQ_SUFFIX_BOOL
                                  ? t == FILTERQ_LIT_BOOL
                                  : t == FILTERQ_LIT_INT || t == FILTERQ_LIT_FLOAT;
                if (!ok)
                        return false;
        }
        return true;
}

static enum filterq_suffix implied_suffix(const struct filterq_cmp *cmp, const char *type)
{
        const struct filterq_literal *l = filterq_cmp_first_literal(cmp);

        switch (l ? l->type : FILTERQ_LIT_STRING) {
        case FILTERQ_LIT_STRING:
                return FILTERQ_SUFFIX_STRING;
        case FILTERQ_LIT_FLOAT:
                return FILTERQ_SUFFIX_DOUBLE;
        case FILTERQ_LIT_BOOL:
                return FILTERQ_SUFFIX_BOOL;
        case FILTERQ_LIT_INT:
                /* integer literals compare with int_value OR double_value */
                return streq(type, "MetadataDoubleValue") ? FILTERQ_SUFFIX_DOUBLE
                                                          : FILTERQ_SUFFIX_INT;
        }
        return FILTERQ_SUFFIX_NONE;
}

static int compare_int_value(const struct filterq_cmp *cmp, const json_t *mv)
{
        const json_t *v = json_object_get(mv, "int_value");
        json_auto_t *iv = NULL;
        int64_t i;

        /* int_value is a string of an integer on the wire (B.5) */
        if (!json_is_string(v) || safe_atoi64(json_string_value(v), &i) < 0)
                return 0;
        iv = json_integer(i);
        if (!iv)
                return -ENOMEM;
        return filterq_compare_value(cmp, iv);
}

/* The MetadataValue type a suffix compares with, and its value field; NULL for NONE. */
static const char *suffix_metadata_type(enum filterq_suffix s, const char **ret_field)
{
        switch (s) {
        case FILTERQ_SUFFIX_STRING:
                *ret_field = "string_value";
                return "MetadataStringValue";
        case FILTERQ_SUFFIX_DOUBLE:
                *ret_field = "double_value";
                return "MetadataDoubleValue";
        case FILTERQ_SUFFIX_INT:
                *ret_field = "int_value";
                return "MetadataIntValue";
        case FILTERQ_SUFFIX_BOOL:
                *ret_field = "bool_value";
                return "MetadataBoolValue";
        case FILTERQ_SUFFIX_NONE:
                break;
        }
        *ret_field = NULL;
        return NULL;
}

int filterq_compare_metadata(const struct filterq_cmp *cmp, const json_t *mv)
{
        const char *type = json_string_value(json_object_get(mv, "metadataType"));
        const char *want_type, *field;
        enum filterq_suffix want = cmp->suffix;

        if (want != FILTERQ_SUFFIX_NONE && !suffix_accepts(want, cmp))
                return -EDOM;
        if (!type)
                return 0;
        if (want == FILTERQ_SUFFIX_NONE)
                want = implied_suffix(cmp, type);
        want_type = suffix_metadata_type(want, &field);
        if (!want_type || !streq(type, want_type))
                return 0;
        if (want == FILTERQ_SUFFIX_INT)
                return compare_int_value(cmp, mv);
        return filterq_compare_value(cmp, json_object_get(mv, field));
}

bool filterq_match_value(const struct filterq_cmp *cmp, const json_t *actual)
{
        return filterq_compare_value(cmp, actual) > 0;
}

bool filterq_match_metadata(const struct filterq_cmp *cmp, const json_t *metadata_value)
{
        return filterq_compare_metadata(cmp, metadata_value) > 0;
}
