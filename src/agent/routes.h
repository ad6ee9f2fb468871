/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Where the other replicas of an InferenceService serve which model (issue 30, placement
 * forwarding; docs/placement.md "Routing"). Pure: no I/O, no clock ("now" is an argument), no
 * logging; the thread-safe holder and the proxy's port are agent/routing.h.
 *
 * Input: this pod's name, the shared models.json (modelconfig-<isvc>-0: which storageUri each
 * model should have) and the InferenceService's labelled ConfigMaps (serving.kserve.io/
 * inferenceservice=<isvc>): the agents' reports (serving/report.h) and the assignment ConfigMaps
 * (label modelplane.io/placement=assignment; their models.json lists the models placed there).
 *
 * A model's holders are the replicas whose report
 *  - counts (serving/replicas.h: labelled as a report, owned by a Pod, not being deleted),
 *  - is not this pod's,
 *  - has an address (data.address),
 *  - lists the model Loaded from the storageUri the shared models.json wants;
 * ordered non-draining first, then by the rendezvous weight placement_weight(model, pod)
 * (serving/placement.h), highest first, then by pod name: every agent orders them the same way,
 * so the requests of all agents for one model go to the same holder first. A holder whose report
 * is stale at the time of the query (its heartbeat older than REPLICAS_STALE_PERIODS periods) is
 * skipped then; staleness is judged at query time, so the table needs no rebuild when time
 * passes. A model the shared models.json does not list has no route (the local model server
 * answers for it, 404 for an unknown model).
 *
 * "Assigned": some assignment ConfigMap lists the model: when it has no live holder it is
 * expected to load soon (the proxy waits for it instead of answering 404).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"
#include "util/time-util.h"

#define ROUTES_ASSIGNMENT_LABEL "modelplane.io/placement"
#define ROUTES_ASSIGNMENT_VALUE "assignment"

struct route_holder {
        char *pod;       /* owned */
        char *address;   /* owned; "host:port" of its agent's proxy */
        bool draining;   /* its report says draining */
        usec_t stale_at; /* wall-clock time after which its report is stale; USEC_INFINITY: never */
};

struct route {
        char *model;                  /* owned */
        char *storage_uri;            /* owned; wanted (the shared models.json) */
        struct route_holder *holders; /* owned; in preference order (above) */
        size_t n;
        bool assigned; /* listed by some assignment ConfigMap */
};

/* Fields read-only outside this module. */
struct routes {
        struct route *items; /* owned; sorted by model, one per model of the shared models.json */
        size_t n;
};

struct routes_input {
        const char *pod;                /* borrowed; this replica (never a holder); may be NULL */
        const char *shared_models_json; /* borrowed; NULL or not an array: no model is wanted */
        const json_t *configmaps; /* borrowed; JSON object name -> ConfigMap (others ignored) */
};

/* Builds the table. Returns 0 or -ENOMEM. */
_warn_unused_result_ int routes_build(const struct routes_input *in, struct routes *ret);
void routes_release(struct routes *r);

/* The route of @model, or NULL when the shared models.json does not list it. Borrowed. */
const struct route *routes_find(const struct routes *r, const char *model);

/* Whether @h may take requests at @now (wall clock): its report is not stale. */
bool route_holder_live(const struct route_holder *h, usec_t now);

/* How many holders of @rt are live at @now and not draining. */
size_t route_live_serving(const struct route *rt, usec_t now);

/*
 * Hand-over: whether another replica serves @model so that this one may stop: true when the
 * shared models.json does not list it (nobody needs it) or a live, non-draining replica holds
 * it Loaded from the wanted storageUri.
 */
bool routes_covered(const struct routes *r, const char *model, usec_t now);
