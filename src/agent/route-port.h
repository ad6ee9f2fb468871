/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The routing port of placement (issue 30, docs/placement.md): which other replicas of this
 * InferenceService hold a model. The agent's routing table (built from the replicas' reports)
 * implements it; the proxy (proxy.c, forward.c) calls it for a request whose model is not loaded
 * here. The in-memory fake for tests: tests/fakes/fake-route.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

struct agent_route_ops {
        /*
         * Addresses ("host:port") of other replicas that have @model Loaded, best first;
         * *ret_pending true when the model is assigned somewhere but Loaded nowhere yet. The
         * vector and its strings are owned by the caller: agent_route_addresses_free(). Returns
         * 0 or a negative errno. Thread-safe.
         */
        int (*lookup)(void *userdata, const char *model, char ***ret_addresses, size_t *ret_n,
                      bool *ret_pending);
};

struct agent_route_port {
        const struct agent_route_ops *ops;
        void *userdata;
};

/* Frees what lookup() returned: @n strings and the vector. NULL-safe. */
static inline void agent_route_addresses_free(char **v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                free(v[i]);
        free(v);
}
