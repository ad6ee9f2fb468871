/* SPDX-License-Identifier: Apache-2.0 */
#include "fake-route-port.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"

/* Caller holds the lock. */
static struct fake_route *find(struct fake_route_port *f, const char *model)
{
        for (size_t i = 0; i < f->n_routes; i++)
                if (streq(f->routes[i].model, model))
                        return &f->routes[i];
        return NULL;
}

static void route_release(struct fake_route *r)
{
        free(r->model);
        for (size_t i = 0; i < r->n; i++)
                free(r->addresses[i]);
        for (size_t i = 0; i < r->later_n; i++)
                free(r->later_addresses[i]);
        *r = (struct fake_route){ 0 };
}

/* Caller holds the lock: copies @n @addresses into an owned NULL-terminated list. */
static int copy_addresses(char *const *addresses, size_t n, char ***ret)
{
        char **v = calloc(n + 1, sizeof(char *));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                v[i] = strdup(addresses[i]);
                if (!v[i]) {
                        agent_route_addresses_free(v);
                        return -ENOMEM;
                }
        }
        *ret = v;
        return 0;
}

static int fake_lookup(void *userdata, const char *model, char ***ret_addresses, size_t *ret_n,
                       bool *ret_pending)
{
        struct fake_route_port *f = userdata;
        struct fake_route *r;
        char **v = NULL;
        size_t n = 0;
        bool pending = false;
        int e = 0;

        pthread_mutex_lock(&f->lock);
        f->lookups++;
        r = find(f, model);
        if (!r && f->n_routes < FAKE_ROUTE_MAX) { /* counted; no route: served here */
                r = &f->routes[f->n_routes++];
                r->model = strdup(model);
        }
        if (r) {
                bool later = r->has_later && r->lookups >= r->later_from;
                char *const *a = later ? r->later_addresses : r->addresses;
                size_t an = later ? r->later_n : r->n;

                r->lookups++;
                if (f->fail)
                        e = -ENOMEM;
                else if (an > 0)
                        e = copy_addresses(a, an, &v);
                if (e >= 0) {
                        n = v ? an : 0;
                        pending = (later ? r->later_pending : r->pending) && n == 0;
                }
        } else if (f->fail) {
                e = -ENOMEM;
        }
        pthread_mutex_unlock(&f->lock);
        if (e < 0)
                return e;
        *ret_addresses = v;
        *ret_n = n;
        *ret_pending = pending;
        return 0;
}

static const struct agent_route_ops fake_route_ops = { .lookup = fake_lookup };

void fake_route_port_init(struct fake_route_port *f)
{
        *f = (struct fake_route_port){ 0 };
        pthread_mutex_init(&f->lock, NULL);
        f->port = (struct agent_route_port){ .ops = &fake_route_ops, .userdata = f };
}

void fake_route_port_release(struct fake_route_port *f)
{
        for (size_t i = 0; i < f->n_routes; i++)
                route_release(&f->routes[i]);
        f->n_routes = 0;
        pthread_mutex_destroy(&f->lock);
}

void fake_route_set(struct fake_route_port *f, const char *model, const char *const *addresses,
                    size_t n, bool pending)
{
        struct fake_route *r;

        pthread_mutex_lock(&f->lock);
        r = find(f, model);
        if (r) {
                unsigned lookups = r->lookups;
                route_release(r);
                r->lookups = lookups;
        } else {
                if (f->n_routes == FAKE_ROUTE_MAX)
                        abort(); /* a test with more models than the fake holds */
                r = &f->routes[f->n_routes++];
        }
        r->model = strdup(model);
        for (size_t i = 0; i < n && i < FAKE_ROUTE_ADDRESSES_MAX; i++)
                r->addresses[r->n++] = strdup(addresses[i]);
        r->pending = pending;
        pthread_mutex_unlock(&f->lock);
}

void fake_route_set_later(struct fake_route_port *f, const char *model, unsigned from,
                          const char *const *addresses, size_t n, bool pending)
{
        struct fake_route *r;

        pthread_mutex_lock(&f->lock);
        r = find(f, model);
        if (!r)
                abort(); /* fake_route_set() first */
        for (size_t i = 0; i < r->later_n; i++)
                free(r->later_addresses[i]);
        r->later_n = 0;
        for (size_t i = 0; i < n && i < FAKE_ROUTE_ADDRESSES_MAX; i++)
                r->later_addresses[r->later_n++] = strdup(addresses[i]);
        r->has_later = true;
        r->later_from = from;
        r->later_pending = pending;
        pthread_mutex_unlock(&f->lock);
}

void fake_route_clear(struct fake_route_port *f, const char *model)
{
        struct fake_route *r;

        pthread_mutex_lock(&f->lock);
        r = find(f, model);
        if (r) {
                route_release(r);
                *r = f->routes[--f->n_routes];
                f->routes[f->n_routes] = (struct fake_route){ 0 };
        }
        pthread_mutex_unlock(&f->lock);
}

void fake_route_fail(struct fake_route_port *f, bool fail)
{
        pthread_mutex_lock(&f->lock);
        f->fail = fail;
        pthread_mutex_unlock(&f->lock);
}

unsigned fake_route_lookups(struct fake_route_port *f, const char *model)
{
        struct fake_route *r;
        unsigned n;

        pthread_mutex_lock(&f->lock);
        r = model ? find(f, model) : NULL;
        n = model ? (r ? r->lookups : 0) : f->lookups;
        pthread_mutex_unlock(&f->lock);
        return n;
}
