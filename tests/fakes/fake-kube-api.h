/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * An in-memory implementation of the reconcilers' port (src/kube/api.h), for the fast shell tests
 * of the reconcilers (house style 5.8, 5.14). It is an extra tier: the real-apiserver tests stay.
 *
 * It behaves like kube-apiserver where the reconcilers can tell:
 *   - one global resourceVersion counter; every write gives the object a new one;
 *   - create: 409 AlreadyExists when the name exists; uid, creationTimestamp, generation set;
 *   - update (PUT) and merge patch: 404 when absent; a metadata.resourceVersion in the body that
 *     is not the stored one is 409 Conflict; the "status" subresource changes only .status, the
 *     main resource never changes .status;
 *   - delete: 404 when absent; precondition_rv / precondition_uid checked (409); an object with
 *     finalizers only gets a deletionTimestamp, and goes once a write empties its finalizers;
 *   - list: by namespace (NULL = all) and label selector ("k=v,k2=v2" and "k" terms), items in
 *     name order;
 *   - only merge patches (KUBE_PATCH_MERGE); other types answer 415 (-EINVAL).
 *
 * Failures are programmable per verb and resource ("configmaps", "trainedmodels/status" for the
 * subresource, NULL for any): the nth matching call from now (1 = the next), and the times-1
 * matching calls after it, answer the given HTTP code (409 is AlreadyExists for a create,
 * Conflict otherwise; 0 = a transport timeout, -ETIMEDOUT) without touching the store.
 *
 * Thread-safe (one mutex): one port may serve all workers of a controller.
 */

#include <jansson.h>

#include "kube/api.h"
#include "util/macro.h"
#include "util/time-util.h"

enum fake_kube_verb {
        FAKE_KUBE_GET,
        FAKE_KUBE_LIST,
        FAKE_KUBE_CREATE,
        FAKE_KUBE_UPDATE,
        FAKE_KUBE_PATCH,
        FAKE_KUBE_DELETE,
        FAKE_KUBE_ANY,
        FAKE_KUBE_VERB__MAX,
};

struct fake_kube_api;

/* NULL on OOM. clock (borrowed, may be NULL = CLOCK_REALTIME) stamps creation and deletion. */
struct fake_kube_api *fake_kube_api_new(const struct clock *clock);
struct fake_kube_api *fake_kube_api_free(struct fake_kube_api *f);
DEFINE_CLEANUP_FUNC(struct fake_kube_api *, fake_kube_api_free)

/* The port; userdata is f (borrowed). */
struct kube_api fake_kube_api_port(struct fake_kube_api *f);

/*
 * Stores a copy of obj (borrowed) as resource r in namespace ns (NULL: cluster-scoped; wins over
 * metadata.namespace), replacing any object of that name, with a new resourceVersion, which is
 * returned (0 on OOM or a nameless obj). Calls and faults are not counted.
 */
unsigned long fake_kube_api_put(struct fake_kube_api *f, const struct gvr *r, const char *ns,
                                const json_t *obj);
/* Removes without finalizers or counting; true when it existed. */
bool fake_kube_api_remove(struct fake_kube_api *f, const struct gvr *r, const char *ns,
                          const char *name);
/* Returns: new reference to a copy of the stored object; NULL when absent. */
json_t *fake_kube_api_get(struct fake_kube_api *f, const struct gvr *r, const char *ns,
                          const char *name);
/* The current global resourceVersion. */
unsigned long fake_kube_api_rv(struct fake_kube_api *f);

/* Arms a failure: see the top of this file. resource is copied. */
_warn_unused_result_ int fake_kube_api_fail(struct fake_kube_api *f, enum fake_kube_verb verb,
                                            const char *resource, unsigned nth, unsigned times,
                                            int http_code);
/* Forgets every armed failure. */
void fake_kube_api_clear_faults(struct fake_kube_api *f);

/* Calls served so far (failed ones included) of verb on resource (as for faults). */
unsigned fake_kube_api_calls(struct fake_kube_api *f, enum fake_kube_verb verb,
                             const char *resource);
/* Forgets the call counts. */
void fake_kube_api_reset_calls(struct fake_kube_api *f);
