/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Placement's objects and decisions for one InferenceService annotated
 * modelplane.io/placement: spread (issue 30, docs/placement.md "The objects"): pure, no I/O, no
 * clock (now is an input). The planner itself is serving/placement.h; this module feeds it from
 * the Kubernetes objects and turns its result into admission, ConfigMap writes and status.
 *
 * Inputs, read from the InferenceService's ConfigMaps (the controller's cache index
 * REPLICAS_INDEX_ISVC, serving/replicas.h):
 *  - the replicas: counted, non-stale agent reports (modelstatus-<pod>); one with
 *    data.draining "true" is draining; capacity: the predictor's memory limit, less the memory
 *    of TrainedModels being deleted that its assignment still lists (they are still loaded);
 *  - the holders of each model: the replicas whose assignment ConfigMap (the last one written)
 *    lists it;
 *  - the failed replicas of each model: those whose report says FailedToLoad for it at its
 *    storageUri, and those recorded in the TrainedModel's status annotation
 *    modelplane.io/failed ({"storageUri","pods"}) at the same storageUri, so that a replica
 *    that dropped the model from its report after it moved away is not chosen again.
 *
 * Two runs of the planner:
 *  A. the assignment, over the real replicas: what is written;
 *  B. admission of the models A placed nowhere: copies 1 over the free memory A left on the live
 *     replicas (failures ignored) plus one "virtual" replica per replica the predictor declares
 *     (spec.predictor.minReplicas, default 1) that does not report yet. A model is admitted when
 *     A or B places it: before any replica reports, every model that fits the declared replicas
 *     is admitted (nothing is written until real replicas report), and a model that failed to
 *     load everywhere stays admitted and is reported FailedToLoad. MemoryResourceAvailable is
 *     False only for a model neither run places, with B's shortfall message.
 *
 * Writes (O(changes)): one ConfigMap per live replica, modelconfig-<isvc>-<pod>, created or
 * merge-patched only when its models.json or its metadata differ from what is observed; none for
 * a draining replica (it keeps serving what it holds until it stops); the assignment
 * ConfigMaps of pods that are no longer replicas (gone, stale) are deleted.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serving/modelconfig.h"
#include "serving/placement.h"
#include "serving/replicas.h"
#include "util/macro.h"
#include "util/time-util.h"

#define SPREAD_ANNOTATION        "modelplane.io/placement" /* InferenceService, -0, ISVC status */
#define SPREAD_ON                "spread"
#define SPREAD_COPIES_ANNOTATION "modelplane.io/copies"
#define SPREAD_COPIES_ALL        "all"
#define SPREAD_COPIES_MAX        1000U
#define SPREAD_POD_ANNOTATION    "modelplane.io/pod"
#define SPREAD_FAILED_ANNOTATION "modelplane.io/failed" /* TrainedModel status annotation */
#define SPREAD_NAME_MAX          253                    /* a ConfigMap name */
/* The ISVC status annotation lists at most this many pods. */
#define SPREAD_STATUS_PODS_MAX   256U
#define SPREAD_REASON_NOT_PLACED "NotPlaced"

/* The copies annotation: a positive integer up to SPREAD_COPIES_MAX (decimal digits, no sign, no
 * leading zero) or "all" (PLACEMENT_COPIES_ALL). Returns 0, -EINVAL for anything else. */
_warn_unused_result_ int spread_copies_parse(const char *value, unsigned *ret);

/* Whether the InferenceService (borrowed, may be NULL) is annotated for placement. */
bool spread_enabled(const json_t *isvc);

/* The replicas the predictor declares: spec.predictor.minReplicas, at least 1 (default 1). */
unsigned spread_declared_replicas(const json_t *isvc);

/* "modelconfig-<isvc>-<pod>" into buf. Returns 0, -ENAMETOOLONG beyond SPREAD_NAME_MAX. */
_warn_unused_result_ int spread_assignment_name(const char *isvc, const char *pod, char *buf,
                                                size_t len);

/* One model of a pass, in admission order (valid, not being deleted). */
struct spread_model {
        const char *name;        /* borrowed */
        const char *storage_uri; /* borrowed */
        uint64_t memory;         /* bytes */
        unsigned copies;         /* wanted; PLACEMENT_COPIES_ALL: every live replica */
        const json_t *status;    /* borrowed; the TrainedModel's status as read, may be NULL */
        const struct model_entry *entry; /* borrowed; its models.json entry when the pass lists
                                          * it (then it is written to its replicas), else NULL */
};

/* A model being deleted that assignments may still list: its memory stays taken there. */
struct spread_held {
        const char *name; /* borrowed */
        uint64_t memory;
};

struct spread_input {
        const char *isvc;         /* required */
        const char *namespace_;   /* required */
        const json_t *configmaps; /* borrowed array; NULL: no replica reports */
        usec_t now;
        uint64_t capacity; /* per replica, bytes */
        unsigned declared; /* replicas the predictor declares (>= 1) */
        const struct spread_model *models;
        size_t n_models;
        const struct spread_held *held;
        size_t n_held;
};

/* Where one model goes; what the TrainedModel's status says about it. */
struct spread_tm {
        char **pods; /* owned; assigned replicas, most preferred first */
        size_t n_pods;
        unsigned wanted;        /* copies wanted (all resolved to the live count, at least 1) */
        char *note;             /* owned; why fewer copies than wanted are placed, NULL: all are */
        char *failed;           /* owned; the modelplane.io/failed status annotation, NULL: none */
        bool failed_everywhere; /* placed nowhere, and every live replica failed to load it */
};

void spread_tm_free(struct spread_tm *t);

struct spread_model_result {
        bool admitted;
        char *refusal;        /* owned; the shortfall when not admitted */
        struct spread_tm *tm; /* owned */
};

/* A real replica (counted, non-stale report), with its assignment as observed. */
struct spread_replica {
        const char *pod;        /* borrowed from the report */
        const char *owner_name; /* borrowed; the Pod to own its assignment */
        const char *owner_uid;  /* borrowed; NULL: no ownerReference written */
        bool draining;
        bool writable; /* its assignment's name fits */
        char name[SPREAD_NAME_MAX + 1];
        const json_t *assignment;      /* borrowed; the observed assignment ConfigMap, NULL: none */
        struct model_entries observed; /* owned; its models.json as read */
        const struct replica *report;  /* borrowed from the result's set */
        uint64_t capacity;             /* after the memory of models being deleted it holds */
        uint64_t assigned;             /* bytes of the models written to it */
        size_t n_models;               /* models written to it */
};

/* Strings are borrowed from the input's ConfigMaps: keep them while the result is used. */
struct spread_result {
        struct spread_model_result *models; /* owned; parallel to input.models */
        size_t n_models;
        struct replica_set set;          /* owned; every counted report */
        struct spread_replica *replicas; /* owned; the live and draining ones, sorted by pod */
        size_t n_replicas;
        size_t n_live;
        size_t moved; /* copies placed on a replica that did not hold them */
};

void spread_result_release(struct spread_result *r);

/* Runs the two planner passes. Returns 0, -EINVAL (missing names), -ENOMEM. */
_warn_unused_result_ int spread_compute(const struct spread_input *in, struct spread_result *ret);

enum spread_op {
        SPREAD_CREATE,
        SPREAD_PATCH,
        SPREAD_DELETE,
};

struct spread_write {
        enum spread_op op;
        char *name;   /* owned; the ConfigMap */
        json_t *body; /* owned; the object (create) or merge patch (patch); NULL for a delete */
};

void spread_writes_free(struct spread_write *w, size_t n);

/*
 * The writes that make the assignment ConfigMaps say what @res assigns (the models whose
 * input entry is set), and the deletes of the assignment ConfigMaps of pods that are no longer
 * replicas. Fills the replicas' assigned/n_models. Returns 0 with *ret (owned, NULL when none)
 * and *ret_n, -ENOMEM.
 */
_warn_unused_result_ int spread_plan_writes(const struct spread_input *in,
                                            struct spread_result *res, struct spread_write **ret,
                                            size_t *ret_n);

/* Deletes of every assignment ConfigMap of @isvc among @configmaps (borrowed, may be NULL):
 * placement was switched off. Returns 0 with *ret (owned, NULL when none) and *ret_n, -ENOMEM. */
_warn_unused_result_ int spread_plan_cleanup(const char *isvc, const json_t *configmaps,
                                             struct spread_write **ret, size_t *ret_n);

/* The InferenceService status annotation: compact JSON [{"pod","models","assigned","capacity",
 * "draining"?}] sorted by pod (bytes), at most SPREAD_STATUS_PODS_MAX. Returns: owned; NULL on OOM. */
char *spread_status_summary(const struct spread_result *res);

/* A merge patch of the InferenceService's status that sets its SPREAD_ANNOTATION annotation to
 * @value (NULL: removes it), or NULL in *ret when it already is so. Returns 0, -ENOMEM. */
_warn_unused_result_ int spread_isvc_status_patch(const json_t *isvc, const char *value,
                                                  json_t **ret);

/*
 * Merges placement into @status (a desired TrainedModel status, modified in place): ModelLoaded
 * counts copies over the assigned replicas ("2/2 copies loaded"; a degraded placement adds
 * its note), NotPlaced (Unknown) or FailedToLoad (False, placed nowhere because every replica
 * failed) when placed nowhere; status.annotations["modelplane.io/replicas"] lists the assigned
 * pods and their states; the modelplane.io/failed record is kept or dropped. @observed as in
 * model_loaded_apply(). Returns 0, -EINVAL when @status is not an object, -ENOMEM.
 */
_warn_unused_result_ int spread_status_apply(json_t *status, const json_t *observed,
                                             const struct replica_set *set, const char *model,
                                             const char *storage_uri, const struct spread_tm *tm,
                                             bool ready_requires_loaded, usec_t now);
