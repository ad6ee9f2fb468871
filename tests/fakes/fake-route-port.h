/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * An in-memory routing table behind the proxy's port (src/agent/route-port.h) for the proxy's
 * fast tests: the test says, per model, which addresses hold it and whether it is pending; any
 * other model is served here. Thread-safe (one mutex): the proxy's threads look up while the
 * test changes the table, as the watches do in the agent. Counts the lookups per model.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/route-port.h"

#define FAKE_ROUTE_MAX           32
#define FAKE_ROUTE_ADDRESSES_MAX 8

struct fake_route {
        char *model;                               /* owned */
        char *addresses[FAKE_ROUTE_ADDRESSES_MAX]; /* owned; best first */
        size_t n;
        bool pending;
        unsigned lookups;
        /* from the @later_from-th lookup on (counting from 0), the later answer instead */
        bool has_later;
        unsigned later_from;
        char *later_addresses[FAKE_ROUTE_ADDRESSES_MAX]; /* owned */
        size_t later_n;
        bool later_pending;
};

struct fake_route_port {
        pthread_mutex_t lock;
        struct fake_route routes[FAKE_ROUTE_MAX];
        size_t n_routes;
        unsigned lookups;             /* all models */
        bool fail;                    /* lookup() answers -ENOMEM */
        struct agent_route_port port; /* hand &port (or port) to the proxy */
};

void fake_route_port_init(struct fake_route_port *f);
void fake_route_port_release(struct fake_route_port *f);
/* @model is held at @addresses (@n of them, copied; 0: none) and @pending; replaces its route. */
void fake_route_set(struct fake_route_port *f, const char *model, const char *const *addresses,
                    size_t n, bool pending);
/* From the @from-th lookup of @model on (counting from 0), it is held at @addresses (@n of
 * them, copied) and @pending instead: a model that becomes Loaded somewhere while a request
 * waits. Call after fake_route_set() for the model. */
void fake_route_set_later(struct fake_route_port *f, const char *model, unsigned from,
                          const char *const *addresses, size_t n, bool pending);
/* @model is served here again (its route removed). */
void fake_route_clear(struct fake_route_port *f, const char *model);
/* lookup() fails with -ENOMEM from now on (@fail) or answers again. */
void fake_route_fail(struct fake_route_port *f, bool fail);
/* How many lookups of @model (NULL: any model) were made. */
unsigned fake_route_lookups(struct fake_route_port *f, const char *model);
