/* SPDX-License-Identifier: Apache-2.0 */
#include "fake-route.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Counts a lookup of @model; returns how many came before it. */
static size_t count_lookup(struct fake_route *r, const char *model)
{
        size_t i;

        r->n_lookups++;
        for (i = 0; i < r->n_counts; i++)
                if (strcmp(r->counts[i].model, model) == 0)
                        return r->counts[i].n++;
        if (i < FAKE_ROUTE_MAX && (r->counts[i].model = strdup(model))) {
                r->counts[i].n = 1;
                r->n_counts++;
        }
        return 0;
}

/* The entry that answers the @nth lookup of @model: the latest one set that has started. */
static const struct fake_route_entry *entry_for(const struct fake_route *r, const char *model,
                                                size_t nth)
{
        const struct fake_route_entry *e = NULL;

        for (size_t i = 0; i < r->n; i++)
                if (strcmp(r->entries[i].model, model) == 0 && r->entries[i].from <= nth &&
                    (!e || r->entries[i].from >= e->from))
                        e = &r->entries[i];
        return e;
}

static int copy_addresses(const struct fake_route_entry *e, char ***ret, size_t *ret_n)
{
        size_t n = 0;
        char **v;

        while (e && e->addresses[n])
                n++;
        v = calloc(n + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (!(v[i] = strdup(e->addresses[i]))) {
                        agent_route_addresses_free(v, i);
                        return -ENOMEM;
                }
        *ret = v;
        *ret_n = n;
        return 0;
}

static int fake_lookup(void *userdata, const char *model, char ***ret_addresses, size_t *ret_n,
                       bool *ret_pending)
{
        struct fake_route *r = userdata;
        const struct fake_route_entry *e;
        int k;

        pthread_mutex_lock(&r->lock);
        e = entry_for(r, model, count_lookup(r, model));
        k = copy_addresses(e, ret_addresses, ret_n);
        *ret_pending = e && e->pending;
        pthread_mutex_unlock(&r->lock);
        return k;
}

static const struct agent_route_ops fake_route_ops = { .lookup = fake_lookup };

void fake_route_init(struct fake_route *r)
{
        *r = (struct fake_route){ .port = { .ops = &fake_route_ops, .userdata = r } };
        pthread_mutex_init(&r->lock, NULL);
}

void fake_route_release(struct fake_route *r)
{
        for (size_t i = 0; i < r->n; i++) {
                free(r->entries[i].model);
                for (size_t k = 0; r->entries[i].addresses[k]; k++)
                        free(r->entries[i].addresses[k]);
        }
        for (size_t i = 0; i < r->n_counts; i++)
                free(r->counts[i].model);
        pthread_mutex_destroy(&r->lock);
}

void fake_route_set(struct fake_route *r, const char *model, unsigned from,
                    const char *const *addresses, bool pending)
{
        struct fake_route_entry *e;

        pthread_mutex_lock(&r->lock);
        if (r->n < FAKE_ROUTE_MAX) {
                e = &r->entries[r->n++];
                *e = (struct fake_route_entry){ .model = strdup(model),
                                                .from = from,
                                                .pending = pending };
                for (size_t k = 0; addresses && addresses[k] && k < 3; k++)
                        e->addresses[k] = strdup(addresses[k]);
        }
        pthread_mutex_unlock(&r->lock);
}

size_t fake_route_lookups(struct fake_route *r, const char *model)
{
        size_t n = 0;

        pthread_mutex_lock(&r->lock);
        for (size_t i = 0; i < r->n_counts; i++)
                if (!model || strcmp(r->counts[i].model, model) == 0)
                        n += r->counts[i].n;
        pthread_mutex_unlock(&r->lock);
        return n;
}
