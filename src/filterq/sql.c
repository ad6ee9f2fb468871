/* SPDX-License-Identifier: Apache-2.0 */
#include "filterq/sql.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse-util.h"

static const enum store_op ops[] = {
        [FILTERQ_OP_EQ] = STORE_OP_EQ,     [FILTERQ_OP_NE] = STORE_OP_NE,
        [FILTERQ_OP_LT] = STORE_OP_LT,     [FILTERQ_OP_LE] = STORE_OP_LE,
        [FILTERQ_OP_GT] = STORE_OP_GT,     [FILTERQ_OP_GE] = STORE_OP_GE,
        [FILTERQ_OP_LIKE] = STORE_OP_LIKE, [FILTERQ_OP_ILIKE] = STORE_OP_ILIKE,
        [FILTERQ_OP_IN] = STORE_OP_IN,
};

static const enum store_vcol suffix_vcols[] = {
        [FILTERQ_SUFFIX_STRING] = STORE_VCOL_STRING,
        [FILTERQ_SUFFIX_DOUBLE] = STORE_VCOL_DOUBLE,
        [FILTERQ_SUFFIX_INT] = STORE_VCOL_INT,
        [FILTERQ_SUFFIX_BOOL] = STORE_VCOL_BOOL,
};

static struct store_cond *cond_new(enum store_cond_kind kind)
{
        struct store_cond *c = calloc(1, sizeof(*c));

        if (c)
                c->kind = kind;
        return c;
}

/* The converters of convert(), one per value column: 0 when it cannot match, 1 done, -ENOMEM. */
static int convert_string(const struct filterq_sql_target *t, const struct filterq_literal *l,
                          struct store_val *ret)
{
        if (l->type == FILTERQ_LIT_BOOL)
                return 0;
        if (t->enum_names && l->type == FILTERQ_LIT_INT) {
                if (l->i < 0 || (uint64_t)l->i >= t->n_enum_names)
                        return 0;
                *ret = SV_TEXT(strdup(t->enum_names[l->i]));
        } else
                *ret = SV_TEXT(strdup(l->s));
        return ret->s ? 1 : -ENOMEM;
}

static int convert_int(const struct filterq_literal *l, struct store_val *ret)
{
        int64_t i;

        if (l->type == FILTERQ_LIT_INT)
                *ret = SV_INT(l->i);
        else if (l->type == FILTERQ_LIT_FLOAT)
                *ret = SV_DOUBLE(l->f);
        else if (l->type == FILTERQ_LIT_STRING && safe_atoi64(l->s, &i) >= 0)
                *ret = SV_INT(i);
        else
                return 0;
        return 1;
}

static int convert_double(const struct filterq_literal *l, struct store_val *ret)
{
        char *end = NULL;
        double d;

        if (l->type == FILTERQ_LIT_INT || l->type == FILTERQ_LIT_FLOAT) {
                *ret = SV_DOUBLE(l->f);
                return 1;
        }
        if (l->type != FILTERQ_LIT_STRING || !l->s[0])
                return 0;
        d = strtod(l->s, &end);
        if (!end || *end)
                return 0;
        *ret = SV_DOUBLE(d);
        return 1;
}

/* Converts one literal for the value column vcol; 0 when it cannot match, 1 done, -ENOMEM. */
static int convert(const struct filterq_sql_target *t, enum store_vcol vcol,
                   const struct filterq_literal *l, struct store_val *ret)
{
        switch (vcol) {
        case STORE_VCOL_STRING:
                return convert_string(t, l, ret);
        case STORE_VCOL_INT:
        case STORE_VCOL_INT_OR_DOUBLE:
                return convert_int(l, ret);
        case STORE_VCOL_DOUBLE:
                return convert_double(l, ret);
        case STORE_VCOL_BOOL:
                if (l->type != FILTERQ_LIT_BOOL)
                        return 0;
                *ret = SV_INT(l->b ? 1 : 0);
                return 1;
        }
        return 0;
}

/* The typed value column a comparison looks at. */
static enum store_vcol pick_vcol(const struct filterq_cmp *cmp, const struct filterq_sql_target *t)
{
        const struct filterq_literal *l = filterq_cmp_first_literal(cmp);

        if (!t->custom)
                return t->vcol;
        if (cmp->suffix != FILTERQ_SUFFIX_NONE)
                return suffix_vcols[cmp->suffix];
        switch (l ? l->type : FILTERQ_LIT_INT) {
        case FILTERQ_LIT_STRING:
                return STORE_VCOL_STRING;
        case FILTERQ_LIT_FLOAT:
                return STORE_VCOL_DOUBLE;
        case FILTERQ_LIT_BOOL:
                return STORE_VCOL_BOOL;
        case FILTERQ_LIT_INT:
                break;
        }
        return STORE_VCOL_INT_OR_DOUBLE;
}

static int add_values(struct store_cond *c, const struct filterq_sql_target *t,
                      const struct filterq_literal *lits, size_t n)
{
        c->vals = calloc(n ? n : 1, sizeof(*c->vals));
        if (!c->vals)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                enum store_vcol want = c->vcol;
                int r;

                if (want == STORE_VCOL_INT_OR_DOUBLE && lits[i].type != FILTERQ_LIT_INT)
                        want = STORE_VCOL_DOUBLE;
                r = convert(t, want, &lits[i], &c->vals[c->n_vals]);
                if (r < 0)
                        return r;
                c->n_vals += (size_t)r;
        }
        return 0;
}

static int lower_cmp(const struct filterq_cmp *cmp, filterq_sql_resolve_fn *resolve, void *userdata,
                     struct store_cond **ret)
{
        CLEANUP(store_cond_freep) struct store_cond *c = NULL;
        struct filterq_sql_target t = { 0 };
        const struct filterq_literal *first = filterq_cmp_first_literal(cmp);
        bool in = cmp->op == FILTERQ_OP_IN;
        int r;

        resolve(userdata, cmp->property, &t);
        c = cond_new(STORE_COND_CMP);
        if (!c)
                return -ENOMEM;
        c->is_column = t.is_column;
        c->column = t.column;
        c->custom = t.custom;
        c->vcol = pick_vcol(cmp, &t);
        c->op = ops[cmp->op];
        if ((cmp->op == FILTERQ_OP_LIKE || cmp->op == FILTERQ_OP_ILIKE) &&
            (c->vcol != STORE_VCOL_STRING || first->type != FILTERQ_LIT_STRING))
                c->kind = STORE_COND_FALSE;
        if (c->kind == STORE_COND_CMP && !t.is_column) {
                c->prop = strdup(t.prop);
                if (!c->prop)
                        return -ENOMEM;
        }
        if (c->kind == STORE_COND_CMP) {
                r = add_values(c, &t, in ? cmp->list : &cmp->value, in ? cmp->n_list : 1);
                if (r < 0)
                        return r;
        }
        if (c->kind == STORE_COND_CMP && c->n_vals == 0) {
                store_cond_free(c);
                c = cond_new(STORE_COND_FALSE);
                if (!c)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

int filterq_sql_lower(const struct filterq_node *n, filterq_sql_resolve_fn *resolve, void *userdata,
                      struct store_cond **ret)
{
        CLEANUP(store_cond_freep) struct store_cond *c = NULL;
        int r;

        if (!n) {
                *ret = NULL;
                return 0;
        }
        if (n->kind == FILTERQ_CMP)
                return lower_cmp(&n->cmp, resolve, userdata, ret);
        c = cond_new(n->kind == FILTERQ_AND ? STORE_COND_AND : STORE_COND_OR);
        if (!c)
                return -ENOMEM;
        c->kids = calloc(n->n_kids, sizeof(struct store_cond *));
        if (!c->kids)
                return -ENOMEM;
        for (size_t i = 0; i < n->n_kids; i++) {
                r = filterq_sql_lower(n->kids[i], resolve, userdata, &c->kids[i]);
                if (r < 0)
                        return r;
                c->n_kids++;
        }
        *ret = TAKE_PTR(c);
        return 0;
}
