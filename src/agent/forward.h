/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Forwarding under placement (issue 30; docs/agent.md "Forwarding"): where the proxy sends a
 * request for a model that is not Loaded on this replica, and the connections it goes over.
 *
 * forwarder_route() decides: the model Loaded here, or placed nowhere (the routing port knows no
 * holder and nothing pending) -> serve it here; a request that was forwarded already (it carries
 * the hop header) -> unavailable at once, never a second hop; else a connection to the first
 * holder the routing port lists that accepts one, the next ones tried in order; none, but the
 * model is pending (assigned, Loaded nowhere yet) or every holder was unreachable -> ask again
 * every `poll` until `wait` has passed (or the model became Loaded here), then unavailable.
 *
 * The connections: a keep-alive pool per peer address, at most max_per_peer open (a request
 * finding them all in use waits for one until its deadline), at most idle_per_peer kept idle;
 * an idle one is dropped after idle_timeout, and checked not closed by the peer before reuse.
 *
 * Counted for the agent's metrics: forwards answered, failures by reason (a holder's connection
 * failed, an exchange failed after connecting, unavailable, a loop refused), and the latency of
 * each answered forward (route decision to the response's end) as a histogram.
 */

#include <stdbool.h>
#include <stdint.h>

#include "agent/http-conn.h"
#include "agent/route-port.h"
#include "util/macro.h"
#include "util/time-util.h"

struct forwarder;
struct forward_peer;

struct forwarder_config {
        struct agent_route_port route;                    /* ops required */
        bool (*local)(void *userdata, const char *model); /* the model is Loaded here */
        void *local_userdata;
        usec_t wait;                /* a pending model's wait; default 10 s */
        usec_t poll;                /* asking again meanwhile; default 50 ms */
        usec_t connect_timeout;     /* default 2 s */
        usec_t idle_timeout;        /* default 30 s (the agents' client idle timeout is 120 s) */
        unsigned max_per_peer;      /* connections open to one replica; default 256 */
        unsigned idle_per_peer;     /* kept idle per replica; default 16 */
        unsigned io_timeout_sec;    /* a silent replica; default 600 (the model server's) */
        struct http1_limits limits; /* of the responses read */
};

/* A connection to a replica, from the pool: read its responses through @conn. */
struct forward_conn {
        struct http_conn conn;
        /* read-only outside forward.c */
        struct forward_peer *peer;
        const char *address; /* the peer's, borrowed from the pool */
        usec_t started;      /* when the route was asked for */
        usec_t idle_since;
};

enum forward_route {
        FORWARD_LOCAL,       /* serve it here */
        FORWARD_PEER,        /* *ret_conn: a connection to a replica that holds it */
        FORWARD_UNAVAILABLE, /* answer 503 with Retry-After */
};

enum forward_outcome {
        FORWARD_ANSWERED,       /* the response ended; the connection may be reused */
        FORWARD_ANSWERED_CLOSE, /* the response ended; the connection is not reusable */
        FORWARD_FAILED,         /* the exchange failed after connecting */
};

_warn_unused_result_ int forwarder_new(const struct forwarder_config *cfg, struct forwarder **ret);
/* Closes the idle connections; every connection taken must have been given back. NULL-safe. */
struct forwarder *forwarder_free(struct forwarder *f);
DEFINE_CLEANUP_FUNC(struct forwarder *, forwarder_free)
/* Ends every wait at once (the proxy is stopping): forwarder_route() returns what it has. */
void forwarder_stop(struct forwarder *f);

/* Where a request for @model goes (see above). @hop: it carries the hop header. */
enum forward_route forwarder_route(struct forwarder *f, const char *model, bool hop,
                                   struct forward_conn **ret_conn);

/* Gives a connection back after its exchange, and counts the exchange. */
void forwarder_done(struct forwarder *f, struct forward_conn *c, enum forward_outcome outcome);

/* The counters in Prometheus' text format (owned; NULL on OOM). */
char *forwarder_metrics(struct forwarder *f);
