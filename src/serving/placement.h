/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Where each TrainedModel of an InferenceService under placement is loaded (issue 30,
 * docs/placement.md): pure, no I/O, no clock; the same input gives the same output.
 *
 * Inputs: the serving replicas (a stable id, the pod name; the memory each may hold; whether it
 * takes new models or drains), and the models in priority order (the admission order of
 * serving/plan.h: those already placed first), each with its memory, the number of copies wanted
 * (or every replica), the replicas that hold it now (the last assignment written) and the
 * replicas where it failed to load (never chosen again for it).
 *
 * The rule: each model has a preference order over the replicas, by rendezvous (highest random
 * weight) hashing of (model name, replica id); its ideal replicas are the first `copies` of that
 * order. A model keeps a replica that holds it now while that replica is live and not excluded;
 * one that holds all its copies moves a copy only to an ideal replica that has room, giving up
 * its least preferred non-ideal holder; missing copies go to the most preferred replicas with
 * room, model by model in priority order (so a later model never takes the room an earlier one
 * needs for its first copy). Current holders
 * reserve their memory before any model moves, so a kept copy never loses its room to another
 * model. Consequences the unit tests check: no replica's assigned memory exceeds its capacity;
 * adding one of n replicas moves about copies/(n+1) of the copies (those whose ideal set now
 * includes it), removing one moves only the copies it held; unchanged input, unchanged output.
 *
 * A model that gets no copy is not admitted: the result names the shortfall ("needs 3Gi; the
 * most free on one replica is 1Gi (pod-b), 2.5Gi free over 3 replicas"). One that gets fewer
 * copies than wanted is admitted, degraded.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

#define PLACEMENT_COPIES_ALL 0U /* every live replica (KServe's behaviour) */

enum placement_replica_state {
        PLACEMENT_LIVE,     /* holds models and takes new ones */
        PLACEMENT_DRAINING, /* terminating: its models are placed elsewhere, nothing new comes */
};

struct placement_replica {
        const char *id;    /* borrowed; unique */
        uint64_t capacity; /* bytes of model memory it may hold */
        enum placement_replica_state state;
};

struct placement_model {
        const char *name;           /* borrowed; unique */
        uint64_t memory;            /* bytes */
        unsigned copies;            /* wanted; PLACEMENT_COPIES_ALL: every live replica */
        const char *const *holders; /* borrowed; replica ids holding it now (unknown ids ignored) */
        size_t n_holders;
        const char *const *failed; /* borrowed; replica ids where it failed to load */
        size_t n_failed;
};

struct placement_input {
        const struct placement_replica *replicas;
        size_t n_replicas;
        const struct placement_model *models; /* in priority order */
        size_t n_models;
};

struct placement_assignment {
        size_t *replicas; /* owned; indexes into input.replicas, most preferred first */
        size_t n;         /* copies placed; 0: not admitted */
        unsigned wanted;  /* copies wanted (PLACEMENT_COPIES_ALL resolved to the live count) */
        size_t moved;     /* copies placed on a replica that did not hold the model before */
        char *shortfall;  /* owned; why fewer than wanted were placed, NULL when all were */
};

struct placement_result {
        struct placement_assignment *models; /* owned; parallel to input.models */
        uint64_t *assigned;                  /* owned; bytes assigned per replica */
        size_t n_models, n_replicas;
        size_t moved;   /* copies placed on a replica that did not hold them before */
        size_t dropped; /* copies taken off a replica that held them */
};

void placement_result_release(struct placement_result *r);

/* Computes the placement. Returns 0, -EINVAL (a NULL or duplicate id or name), -ENOMEM. */
_warn_unused_result_ int placement_compute(const struct placement_input *in,
                                           struct placement_result *ret);

/* The preference weight of (model, replica): a 64-bit hash, higher is preferred. */
uint64_t placement_weight(const char *model, const char *replica);
