/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The models.json the API source hands to the agent (agent/source.h) when placement may be on
 * (issue 30, docs/placement.md "The objects"). Pure: no I/O, no clock, no logging.
 *
 * Two watches feed it: the shared ConfigMap modelconfig-<isvc>-0 (its models.json, and whether it
 * carries the annotation modelplane.io/placement: spread) and, once placement is on, the
 * InferenceService's labelled ConfigMaps, from which this pod's assignment
 * modelconfig-<isvc>-<pod> is taken (present or absent).
 *
 * The view:
 *  - without the annotation, or without a pod name (no assignment can be ours), the shared
 *    models.json, as without placement;
 *  - with it, this pod's assignment's models.json; an absent assignment is "[]" (nothing assigned
 *    here yet: load nothing), but only once the labelled set has been listed: until then there
 *    is no view (the agent keeps acting on what it had; after a start it does nothing yet);
 *  - when the annotation goes away, the shared models.json again.
 *  - Before the shared ConfigMap has answered there is no view.
 *
 * Its generation is the highest either watch delivered: both follow configmaps of one namespace,
 * whose resourceVersions are one growing sequence (etcd's revision), so views handed over in
 * turn never go back (agent/source.h drops an older view).
 */

#include <stdbool.h>
#include <stdint.h>

#include "util/macro.h"

#define SPREAD_ANNOTATION "modelplane.io/placement"
#define SPREAD_VALUE      "spread"

/* Fields read-only outside this module. Zero-initialised = nothing known, no pod. */
struct spread_state {
        char *shared;        /* owned; the shared ConfigMap's models.json; NULL: not answered */
        bool spread;         /* it carries the annotation */
        bool have_pod;       /* this pod's name is known (an assignment can be ours) */
        bool own_known;      /* the labelled set has been listed */
        char *own;           /* owned; this pod's assignment's models.json; NULL: absent */
        uint64_t generation; /* the highest delivered */
};

void spread_state_init(struct spread_state *s, bool have_pod);
void spread_state_release(struct spread_state *s);

/* The shared ConfigMap: @models_json (copied; "" when it has none or is absent) and whether it
 * carries the annotation, as of @generation. Returns 0 or -ENOMEM (nothing changed then). */
_warn_unused_result_ int spread_set_shared(struct spread_state *s, const char *models_json,
                                           bool spread, uint64_t generation);
/* This pod's assignment: @models_json (copied; NULL: absent) as of the labelled set's
 * @generation; it marks the set as listed. Returns 0 or -ENOMEM (nothing changed then). */
_warn_unused_result_ int spread_set_own(struct spread_state *s, const char *models_json,
                                        uint64_t generation);

/* Placement is on for this pod: the annotation is there and the pod is known. */
bool spread_on(const struct spread_state *s);

/* The view (borrowed; valid until the next call on @s) and its generation, or NULL: none yet. */
const char *spread_view(const struct spread_state *s, uint64_t *ret_generation);
