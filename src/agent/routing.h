/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The agent's view of its InferenceService under placement (issue 30, docs/placement.md): what
 * the API source hands to the agent (agent/spread.h decides: the shared models.json, or this
 * pod's assignment), where the other replicas serve which model (agent/routes.h), the proxy's
 * port to that table (agent/route-port.h) and the hand-over check of a draining replica.
 * Thread-safe: the two watches (agent/watch-isvc.h) update it from their threads, the proxy
 * looks routes up from its threads, the main thread asks about the hand-over.
 *
 * Without the annotation modelplane.io/placement: spread on the shared ConfigMap nothing changes:
 * the shared models.json goes to the agent as it comes, no table is built, and every lookup
 * answers "serve here".
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"
#include "agent/route-port.h"
#include "util/macro.h"
#include "util/time-util.h"

struct routing;

struct routing_config {
        struct agent *agent;          /* borrowed; outlives the routing */
        const char *isvc;             /* copied; NULL: no placement (no assignment is ours) */
        const char *pod;              /* copied; NULL: no placement */
        const struct clock *realtime; /* borrowed; staleness of reports; NULL: the wall clock */
};

_warn_unused_result_ int routing_new(const struct routing_config *cfg, struct routing **ret);
struct routing *routing_free(struct routing *r);
DEFINE_CLEANUP_FUNC(struct routing *, routing_free)

/* The shared ConfigMap's watch starts (the mounted file waits for its first answer,
 * agent/source.h). */
void routing_shared_starting(struct routing *r);
/*
 * The shared ConfigMap as its watch delivered it: @cm (borrowed; NULL: absent, no models) as of
 * @generation (agent/source.h's source_generation_from_rv()). Hands the agent its view. Returns
 * whether placement is on for this pod now (the caller then starts the labelled set's watch).
 */
bool routing_shared(struct routing *r, const json_t *cm, uint64_t generation);
/* A request of the shared ConfigMap's watch failed: the agent hears of it (SOURCE_API_FAILING)
 * only while that watch has never answered. */
void routing_shared_failed(struct routing *r);
/*
 * The InferenceService's labelled ConfigMaps as their watch delivered them: @set (a JSON object
 * name -> ConfigMap; borrowed, a shallow copy is kept: the objects in it must not change) as of
 * @generation: this pod's assignment (modelconfig-<isvc>-<pod>, labelled as an assignment), the
 * other replicas' reports and the assignments.
 */
void routing_set(struct routing *r, json_t *set, uint64_t generation);

/* Placement is on for this pod (the shared ConfigMap says so and the pod is known). */
bool routing_placement(struct routing *r);

/* The port for the proxy (agent/route-port.h); valid while @r lives. */
struct agent_route_port routing_port(struct routing *r);

/*
 * The hand-over of a draining replica: how many models Loaded here (agent_status()) have no
 * live, non-draining replica holding them Loaded elsewhere (routes_covered()); 0 when handed
 * over. @ret_first (may be NULL) gets the name of one of them ("" when none). Returns the count
 * or -ENOMEM.
 */
_warn_unused_result_ int routing_handover_left(struct routing *r, char *ret_first, size_t len);
