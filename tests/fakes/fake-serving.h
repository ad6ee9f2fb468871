/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The serving objects the TrainedModel reconciler's fake-port tests and bench/serving/pass-cpu
 * put into the in-memory kube_api (fake-kube-api.h), and the informer's part of a pass: listing
 * the fake into the caches.
 */

#include "fake-kube-api.h"
#include "kube/cache.h"

/*
 * An InferenceService `name` in ns, Ready and PredictorReady, with a tensorflow predictor limited
 * to `memory` and status.url `url`. Returns the new resourceVersion, 0 on OOM.
 */
unsigned long fake_serving_put_isvc(struct fake_kube_api *f, const char *ns, const char *name,
                                    const char *memory, const char *url);

/*
 * A TrainedModel `name` in ns on InferenceService `parent` (NULL: spec.inferenceService is
 * absent), tensorflow, with storageUri `uri` and spec.model.memory `memory`. Returns the new
 * resourceVersion, 0 on OOM.
 */
unsigned long fake_serving_put_tm(struct fake_kube_api *f, const char *ns, const char *name,
                                  const char *parent, const char *uri, const char *memory);

/*
 * What the informers would do: clears the fake's pending faults, lists the TrainedModels into tms
 * and the InferenceServices into isvcs (namespace ns), then resets the fake's call counts, so the
 * next pass counts only its own calls. 0 or the negative errno of the list or the cache.
 */
int fake_serving_sync(struct fake_kube_api *f, struct kube_api *api, const char *ns,
                      struct cache *tms, struct cache *isvcs);
