/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/record.h"

#include <stdlib.h>
#include <string.h>

/* The keys of catalog models (YAML and Hugging Face sources): stored as pointers, not copies. */
static const char *const known_keys[] = {
        "name",
        "description",
        "readme",
        "maturity",
        "language",
        "tasks",
        "provider",
        "logo",
        "license",
        "licenseLink",
        "libraryName",
        "externalId",
        "createTimeSinceEpoch",
        "lastUpdateTimeSinceEpoch",
        "customProperties",
};

static const char *known_key(const char *k)
{
        for (size_t i = 0; i < ELEMENTSOF(known_keys); i++)
                if (streq(k, known_keys[i]))
                        return known_keys[i];
        return NULL;
}

int catalog_record_from_json(const json_t *o, struct catalog_record **ret)
{
        size_t n = json_object_size(o), extra = 0, i = 0;
        struct catalog_record *r;
        const char *k;
        json_t *v;
        char *tail;

        if (!json_is_object(o))
                return -EINVAL;
        json_object_foreach((json_t *)o, k, v)
                if (!known_key(k))
                        extra += strlen(k) + 1;
        r = malloc(sizeof(*r) + n * sizeof(r->v[0]) + extra);
        if (!r)
                return -ENOMEM;
        tail = (char *)&r->v[n];
        json_object_foreach((json_t *)o, k, v) {
                const char *key = known_key(k);

                if (!key) {
                        size_t len = strlen(k) + 1;

                        key = memcpy(tail, k, len);
                        tail += len;
                }
                r->v[i++] = (struct catalog_record_member){ key, json_incref(v) };
        }
        r->n = i;
        *ret = r;
        return 0;
}

struct catalog_record *catalog_record_free(struct catalog_record *r)
{
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n; i++)
                json_decref(r->v[i].value);
        free(r);
        return NULL;
}

json_t *catalog_record_get(const struct catalog_record *r, const char *key)
{
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n; i++)
                if (streq(r->v[i].key, key))
                        return r->v[i].value;
        return NULL;
}

json_t *catalog_record_to_json(const struct catalog_record *r)
{
        json_t *o = json_object();

        if (!o)
                return NULL;
        for (size_t i = 0; r && i < r->n; i++)
                if (json_object_set(o, r->v[i].key, r->v[i].value) < 0) {
                        json_decref(o);
                        return NULL;
                }
        return o;
}
