/* SPDX-License-Identifier: Apache-2.0 */
/*
 * filterq: the input is a filterQuery text. Parses it; on success checks the tree invariants
 * (n-ary AND/OR with >= 2 kids, at most FILTERQ_CMP_MAX comparisons and FILTERQ_DEPTH_MAX
 * levels), evaluates it against a small JSON entity (plain values and MetadataValues) and
 * lowers it with the SQL back end. On failure an ASCII message must have been written.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "filterq/eval.h"
#include "filterq/sql.h"

static unsigned check(const struct filterq_node *n, unsigned depth)
{
        unsigned cmps = 0;

        if (depth > FILTERQ_DEPTH_MAX + 2)
                __builtin_trap();
        if (n->kind == FILTERQ_CMP) {
                if (!n->cmp.property || n->cmp.n_list > FILTERQ_IN_MAX)
                        __builtin_trap();
                return 1;
        }
        if (n->n_kids < 2)
                __builtin_trap();
        for (size_t i = 0; i < n->n_kids; i++)
                cmps += check(n->kids[i], depth + 1);
        return cmps;
}

static int match(void *userdata, const struct filterq_cmp *cmp)
{
        json_t *o = userdata, *v = json_object_get(o, cmp->property);
        int a, b;

        if (v)
                return filterq_compare_value(cmp, v);
        a = filterq_compare_metadata(cmp,
                                     json_object_get(json_object_get(o, "custom"), cmp->property));
        b = filterq_match_metadata(cmp,
                                   json_object_get(json_object_get(o, "custom"), cmp->property));
        if ((a > 0) != b)
                __builtin_trap();
        return a == -EDOM ? 0 : a;
}

static void resolve(void *userdata, const char *name, struct filterq_sql_target *t)
{
        static const char *const names[] = { "A", "B" };

        if (strcmp(name, "id") == 0) {
                t->is_column = true;
                t->vcol = STORE_VCOL_INT;
        } else if (strcmp(name, "state") == 0) {
                t->prop = name;
                t->vcol = STORE_VCOL_STRING;
                t->enum_names = names;
                t->n_enum_names = 2;
        } else {
                t->custom = true;
                t->prop = name;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static json_t *entity;
        struct filterq_node *n = NULL;
        struct store_cond *c = NULL;
        char *q, err[256];
        int r;

        if (!entity)
                entity = json_loads(
                        "{\"name\":\"m\",\"size\":3,\"acc\":0.5,\"ok\":true,\"tags\":[\"a\"],"
                        "\"custom\":{\"k\":{\"metadataType\":\"MetadataIntValue\",\"int_value\":\"7\"},"
                        "\"s\":{\"metadataType\":\"MetadataStringValue\",\"string_value\":\"x\"}}}",
                        0, NULL);
        q = malloc(size + 1);
        if (!q)
                return 0;
        memcpy(q, data, size);
        q[size] = '\0';
        r = filterq_parse(q, &n, err, sizeof(err));
        if (r == -EINVAL && err[0] == '\0')
                __builtin_trap(); /* every rejection names what was wrong */
        for (const char *m = err; r == -EINVAL && *m; m++)
                if ((unsigned char)*m >= 0x80)
                        __builtin_trap(); /* messages go into JSON bodies: ASCII only */
        if (r >= 0 && n) {
                if (check(n, 0) > FILTERQ_CMP_MAX)
                        __builtin_trap();
                r = filterq_eval(n, match, entity);
                if (r < 0 && r != -ENOMEM && r != -EDOM)
                        __builtin_trap();
                if (filterq_sql_lower(n, resolve, NULL, &c) >= 0)
                        store_cond_free(c);
        }
        filterq_free(n);
        free(q);
        return 0;
}
