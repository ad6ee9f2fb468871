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
        /* and those of artifacts that models do not have */
        "artifactType",
        "metricsType",
        "uri",
};

static const char *known_key(const char *k)
{
        /* the loader passes string literals, which the linker merges with these: compare the
         * addresses first (strcmp() of each member against the table was 1% of a load) */
        for (size_t i = 0; i < ELEMENTSOF(known_keys); i++)
                if (k == known_keys[i])
                        return known_keys[i];
        for (size_t i = 0; i < ELEMENTSOF(known_keys); i++)
                if (streq(k, known_keys[i]))
                        return known_keys[i];
        return NULL;
}

/* A record of the n members v (their references moved into it), unknown keys packed. */
static struct catalog_record *record_new(const struct catalog_record_member *v, size_t n)
{
        struct catalog_record *r;
        size_t extra = 0;
        char *tail;

        for (size_t i = 0; i < n; i++)
                if (!known_key(v[i].key))
                        extra += strlen(v[i].key) + 1;
        r = malloc(sizeof(*r) + n * sizeof(r->v[0]) + extra);
        if (!r)
                return NULL;
        tail = (char *)&r->v[n];
        for (size_t i = 0; i < n; i++) {
                const char *key = known_key(v[i].key);

                if (!key) {
                        size_t len = strlen(v[i].key) + 1;

                        key = memcpy(tail, v[i].key, len);
                        tail += len;
                }
                r->v[i] = (struct catalog_record_member){ key, v[i].value };
        }
        r->refs = 1;
        r->n = (uint32_t)n;
        return r;
}

int catalog_record_builder_add(struct catalog_record_builder *b, const char *key, json_t *value)
{
        if (!value)
                return -ENOMEM;
        if (b->n >= ELEMENTSOF(b->v)) {
                json_decref(value);
                return -E2BIG;
        }
        b->v[b->n++] = (struct catalog_record_member){ key, value };
        return 0;
}

json_t *catalog_record_builder_get(const struct catalog_record_builder *b, const char *key)
{
        for (size_t i = 0; i < b->n; i++)
                if (streq(b->v[i].key, key))
                        return b->v[i].value;
        return NULL;
}

void catalog_record_builder_release(struct catalog_record_builder *b)
{
        for (size_t i = 0; i < b->n; i++)
                json_decref(b->v[i].value);
        b->n = 0;
}

int catalog_record_build(struct catalog_record_builder *b, struct catalog_record **ret)
{
        struct catalog_record *r = record_new(b->v, b->n);

        if (!r) {
                catalog_record_builder_release(b);
                return -ENOMEM;
        }
        b->n = 0;
        *ret = r;
        return 0;
}

int catalog_record_from_json(const json_t *o, struct catalog_record **ret)
{
        struct catalog_record_member *v;
        struct catalog_record *r;
        size_t i = 0;
        const char *k;
        json_t *e;

        if (!json_is_object(o))
                return -EINVAL;
        if (json_object_size(o) > UINT32_MAX)
                return -E2BIG;
        v = malloc((json_object_size(o) + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        json_object_foreach((json_t *)o, k, e)
                v[i++] = (struct catalog_record_member){ k, e };
        r = record_new(v, i);
        free(v);
        if (!r)
                return -ENOMEM;
        for (size_t j = 0; j < r->n; j++)
                json_incref(r->v[j].value);
        *ret = r;
        return 0;
}

struct catalog_record *catalog_record_ref(struct catalog_record *r)
{
        if (r)
                r->refs++;
        return r;
}

struct catalog_record *catalog_record_unref(struct catalog_record *r)
{
        if (!r || --r->refs > 0)
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
