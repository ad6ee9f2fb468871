/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * An in-memory routing table behind the placement routing port (src/agent/route-port.h), for the
 * proxy's forwarding tests: per model, what lookup() answers, possibly changing after a number
 * of lookups (a model that becomes Loaded somewhere while a request waits). Counts lookups per
 * model. Thread-safe (one mutex).
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/route-port.h"

#define FAKE_ROUTE_MAX 16

struct fake_route_entry {
        char *model;        /* owned */
        unsigned from;      /* answers from this lookup of the model on (0: the first) */
        char *addresses[4]; /* owned; NULL-terminated */
        bool pending;
};

struct fake_route {
        pthread_mutex_t lock;
        struct fake_route_entry entries[FAKE_ROUTE_MAX];
        size_t n;
        struct {
                char *model; /* owned */
                size_t n;
        } counts[FAKE_ROUTE_MAX]; /* lookups per model asked for */
        size_t n_counts;
        size_t n_lookups;             /* all models */
        struct agent_route_port port; /* hand &port to proxy_config.route */
};

void fake_route_init(struct fake_route *r);
void fake_route_release(struct fake_route *r);
/*
 * From the @from-th lookup of @model on (counting from 0), lookup() answers @addresses (NULL-
 * terminated, at most 3, copied; NULL: none) and @pending. A model without an entry: no holder,
 * not pending.
 */
void fake_route_set(struct fake_route *r, const char *model, unsigned from,
                    const char *const *addresses, bool pending);
/* How many times @model was looked up (NULL: any). */
size_t fake_route_lookups(struct fake_route *r, const char *model);
