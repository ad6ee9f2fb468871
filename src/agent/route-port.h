/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The proxy's port to the routing table (issue 30, placement forwarding; docs/placement.md):
 * where to send a request for a model. The real one is agent/routing.h's routing_port(); the
 * in-memory one for tests is tests/fakes/fake-route-port.h.
 *
 * lookup(): for @model (the name in the request's path), *@ret_addresses (owned: free with
 * agent_route_addresses_free(); NULL when *@ret_n is 0) are the "host:port" addresses of the
 * agent proxies of other replicas that hold it Loaded from the storageUri the InferenceService
 * wants, best first (non-draining first, then the rendezvous order every agent shares: the
 * requests of all agents for one model go to the same replica first; the next ones are
 * fallbacks). *@ret_pending: no replica holds it yet but it is assigned to one (it is expected
 * to load soon: wait and look up again, within a deadline, then answer 503 with Retry-After).
 * Returns 0, or -ENOMEM (nothing written then: serve locally).
 *
 * What the answer means to the proxy:
 *   *ret_n > 0                  forward to the addresses in order (the first that answers)
 *   *ret_n == 0 && *ret_pending wait for the load (look up again), then 503 + Retry-After
 *   *ret_n == 0 && !*ret_pending serve here, as without placement: the model is loaded on this
 *                               replica, or placement is off, or nobody wants the model (the
 *                               local model server answers, 404 for an unknown model)
 * A model Loaded on this replica always gets the last answer: requests for it are never
 * forwarded. Never lists this replica. Thread-safe: called from the proxy's threads while the
 * watches update the table; it does not block on I/O (a mutex and a copy of a few strings).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

struct agent_route_ops {
        int (*lookup)(void *userdata, const char *model, char ***ret_addresses, size_t *ret_n,
                      bool *ret_pending);
};

struct agent_route_port {
        const struct agent_route_ops *ops; /* NULL: no routing (serve everything here) */
        void *userdata;
};

/* Frees an address list of lookup() (NULL-terminated; NULL-safe). */
static inline void agent_route_addresses_free(char **addresses)
{
        for (size_t i = 0; addresses && addresses[i]; i++)
                free(addresses[i]);
        free(addresses);
}

/* lookup() through @port; a port without ops answers "serve here". */
static inline int agent_route_lookup(const struct agent_route_port *port, const char *model,
                                     char ***ret_addresses, size_t *ret_n, bool *ret_pending)
{
        if (!port || !port->ops || !port->ops->lookup) {
                *ret_addresses = NULL;
                *ret_n = 0;
                *ret_pending = false;
                return 0;
        }
        return port->ops->lookup(port->userdata, model, ret_addresses, ret_n, ret_pending);
}
