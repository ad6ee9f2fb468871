/* SPDX-License-Identifier: Apache-2.0 */
#include "fake-serving.h"

#include <errno.h>
#include <jansson.h>

#include "json/json-util.h"
#include "serving/reconciler.h"

unsigned long fake_serving_put_isvc(struct fake_kube_api *f, const char *ns, const char *name,
                                    const char *memory, const char *url)
{
        json_auto_t *o = json_pack(
                "{s:s,s:s,s:{s:s},s:{s:{s:{s:{s:{s:s}}}}},s:{s:[{s:s,s:s},{s:s,s:s}],s:s}}",
                "apiVersion", "serving.kserve.io/v1beta1", "kind", "InferenceService", "metadata",
                "name", name, "spec", "predictor", "tensorflow", "resources", "limits", "memory",
                memory, "status", "conditions", "type", "Ready", "status", "True", "type",
                "PredictorReady", "status", "True", "url", url);

        return o ? fake_kube_api_put(f, &gvr_inferenceservices, ns, o) : 0;
}

unsigned long fake_serving_put_tm(struct fake_kube_api *f, const char *ns, const char *name,
                                  const char *parent, const char *uri, const char *memory)
{
        json_auto_t *o = json_pack("{s:s,s:s,s:{s:s},s:{s:s?,s:{s:s,s:s,s:s}}}", "apiVersion",
                                   "serving.kserve.io/v1alpha1", "kind", "TrainedModel", "metadata",
                                   "name", name, "spec", "inferenceService", parent, "model",
                                   "storageUri", uri, "framework", "tensorflow", "memory", memory);

        if (!o)
                return 0;
        if (!parent)
                (void)json_object_del(json_object_get(o, "spec"), "inferenceService");
        return fake_kube_api_put(f, &gvr_trainedmodels, ns, o);
}

int fake_serving_sync(struct fake_kube_api *f, struct kube_api *api, const char *ns,
                      struct cache *tms, struct cache *isvcs)
{
        const struct gvr *g[] = { &gvr_trainedmodels, &gvr_inferenceservices };
        struct cache *c[] = { tms, isvcs };

        for (size_t i = 0; i < 2; i++) {
                json_auto_t *list = NULL;
                struct kube_status st = { 0 };
                int r;

                fake_kube_api_clear_faults(f);
                r = kube_api_list(api, g[i], ns, NULL, &list, &st);
                if (r >= 0)
                        r = cache_replace(c[i], json_object_get(list, "items"), NULL, NULL);
                if (r < 0)
                        return r;
        }
        fake_kube_api_reset_calls(f);
        return 0;
}
