/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 27 item 2 against a real kube-apiserver: deletes without KServe's finalizer (the
 * controller's default, --trainedmodel-finalizer=false; docs/serving.md "Deletes and the
 * finalizer"). A TrainedModel's delete is the API server's alone; its entry leaves models.json in
 * the controller's next pass, found by the DELETED event or by the relist after a restart.
 *   - deleted while the controller is down: the entry goes once it starts;
 *   - deleted and created again under its name at once: exactly one entry, the new spec's;
 *   - the finalizers KServe (or an older modelplane) left: a model being deleted goes, live
 *     ones lose trainedmodel.finalizer (and keep any other), and nothing else changes.
 * The controller runs with the shipped RBAC (helpers.h). Waits are bounded polls.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "json/json-util.h"
#include "util/macro.h"

#define FINALIZER "trainedmodel.finalizer"

static struct srv S;

static void setup(void)
{
        srv_setup(&S, "finalizer");
}

static void teardown(void)
{
        srv_teardown(&S);
}

TestSuite(finalizer, .init = setup, .fini = teardown, .timeout = 240);

static void isvc_ready(const char *name, const char *limit)
{
        srv_isvc_create(&S, name, srv_predictor_tf(limit), NULL);
        srv_isvc_set_ready(&S, name, true);
}

/* How many entries of models.json are named tm; *ret_uri the storageUri of the last (borrowed
 * from *ret_models, owned by the caller). */
static size_t entries_named(const char *isvc, const char *tm, json_t **ret_models,
                            const char **ret_uri)
{
        json_t *e;
        size_t i, n = 0;

        *ret_models = srv_models(&S, isvc);
        *ret_uri = NULL;
        json_array_foreach(*ret_models, i, e)
                if (streq(json_string_value(json_object_get(e, "modelName")), tm)) {
                        n++;
                        *ret_uri = json_get_string_path(e, "modelSpec", "storageUri", NULL);
                }
        return n;
}

/* models.json lists tm exactly once, with storageUri uri, and tm is Ready. */
static bool listed_once_with(const char *isvc, const char *tm, const char *uri)
{
        const char *got;
        json_t *models;
        bool ok = entries_named(isvc, tm, &models, &got) == 1 && got && streq(got, uri);

        json_decref(models);
        return ok && srv_tm_cond(&S, tm, "Ready", "True", NULL);
}

static bool has_finalizer(const char *tm, const char *finalizer)
{
        json_t *obj = srv_get(&S, &srv_gvr_tm, tm), *f;
        bool found = false;
        size_t i;

        json_array_foreach(json_get_path(obj, "metadata", "finalizers", NULL), i, f)
                found = found || streq(json_string_value(f), finalizer);
        json_decref(obj);
        return found;
}

/* A TrainedModel as KServe's controller (or an older modelplane) leaves it: with finalizers. */
static void tm_create_with_finalizers(const char *name, const char *isvc, const char *uri,
                                      json_t *finalizers /* stolen */)
{
        json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:o}, s:{s:s, s:{s:s, s:s, s:s}}}",
                                "apiVersion", "serving.kserve.io/v1alpha1", "kind", "TrainedModel",
                                "metadata", "name", name, "finalizers", finalizers, "spec",
                                "inferenceService", isvc, "model", "storageUri", uri, "framework",
                                "sklearn", "memory", "100Mi");

        cr_assert_not_null(obj);
        srv_create(&S, &srv_gvr_tm, obj);
}

Test(finalizer, deleted_while_the_controller_is_down_the_entry_goes_once_it_starts)
{
        isvc_ready("down", "1Gi");
        srv_controller_start(&S);
        srv_tm_create(&S, "a", "down", "s3://b/a", "sklearn", "100Mi");
        srv_tm_create(&S, "b", "down", "s3://b/b", "sklearn", "100Mi");
        SRV_WAIT(SRV_TIMEOUT,
                 listed_once_with("down", "a", "s3://b/a") &&
                         listed_once_with("down", "b", "s3://b/b"),
                 "a and b never listed and Ready");
        cr_assert_not(has_finalizer("a", FINALIZER), "a finalizer without the flag");

        srv_controller_stop(&S);
        srv_delete(&S, &srv_gvr_tm, "a", NULL);
        cr_assert(srv_gone(&S, &srv_gvr_tm, "a"), "no finalizer: the delete needs no controller");
        cr_assert(srv_models_has(&S, "down", "a"), "nothing removed the entry yet");

        srv_controller_start(&S);
        SRV_WAIT(SRV_TIMEOUT, !srv_models_has(&S, "down", "a"),
                 "the entry of a, deleted while the controller was down, stayed");
        cr_assert(listed_once_with("down", "b", "s3://b/b"), "b lost its entry");
        cr_assert_eq(srv_metric(&S, "modelplane_trainedmodel_metadata_writes_total"), 0.0,
                     "a TrainedModel written to remove an entry");
}

Test(finalizer, deleted_and_created_again_at_once_one_entry_the_new_one)
{
        char uri[64];

        isvc_ready("again", "1Gi");
        srv_controller_start(&S);
        srv_tm_create(&S, "m", "again", "s3://b/m/v0", "sklearn", "100Mi");
        srv_tm_create(&S, "other", "again", "s3://b/other", "sklearn", "100Mi");
        SRV_WAIT(SRV_TIMEOUT, listed_once_with("again", "m", "s3://b/m/v0"), "m never listed");
        for (int v = 1; v <= 3; v++) {
                (void)snprintf(uri, sizeof(uri), "s3://b/m/v%d", v);
                srv_delete(&S, &srv_gvr_tm, "m", NULL);
                /* at once: with a finalizer this create is refused (AlreadyExists) */
                srv_tm_create(&S, "m", "again", uri, "sklearn", v % 2 ? "200Mi" : "100Mi");
                SRV_WAIT(SRV_TIMEOUT, listed_once_with("again", "m", uri),
                         "models.json never listed m once with %s", uri);
        }
        cr_assert(listed_once_with("again", "other", "s3://b/other"));
        {
                json_t *models = srv_models(&S, "again");
                cr_assert_eq(json_array_size(models), 2, "entries beyond m and other");
                json_decref(models);
        }
        srv_controller_assert_alive(&S);
}

/* Switching from the finalizer (KServe, an older modelplane) strands nothing: the objects exist
 * before the controller starts, as KServe left them; models.json lists the live one and the one
 * being deleted. */
Test(finalizer, the_finalizers_kserve_left_are_released)
{
        isvc_ready("kserve", "1Gi");
        srv_cm_create(&S, "kserve",
                      "[{\"modelName\":\"doomed\",\"modelSpec\":{\"storageUri\":\"s3://b/d\","
                      "\"framework\":\"sklearn\",\"memory\":\"100Mi\"}},"
                      "{\"modelName\":\"live\",\"modelSpec\":{\"storageUri\":\"s3://b/l\","
                      "\"framework\":\"sklearn\",\"memory\":\"100Mi\"}}]");
        tm_create_with_finalizers("live", "kserve", "s3://b/l", json_pack("[s]", FINALIZER));
        tm_create_with_finalizers("shared", "kserve", "s3://b/s",
                                  json_pack("[s,s]", "example.com/keep", FINALIZER));
        tm_create_with_finalizers("doomed", "kserve", "s3://b/d", json_pack("[s]", FINALIZER));
        srv_delete(&S, &srv_gvr_tm, "doomed", NULL);
        cr_assert_not(srv_gone(&S, &srv_gvr_tm, "doomed"), "KServe's finalizer holds it");

        srv_controller_start(&S);
        SRV_WAIT(SRV_TIMEOUT, srv_gone(&S, &srv_gvr_tm, "doomed"),
                 "the model being deleted with KServe's finalizer stayed Terminating");
        SRV_WAIT(SRV_TIMEOUT,
                 !has_finalizer("live", FINALIZER) && !has_finalizer("shared", FINALIZER),
                 "a live model kept trainedmodel.finalizer");
        cr_assert(has_finalizer("shared", "example.com/keep"), "another's finalizer removed");
        SRV_WAIT(SRV_TIMEOUT,
                 listed_once_with("kserve", "live", "s3://b/l") &&
                         listed_once_with("kserve", "shared", "s3://b/s") &&
                         !srv_models_has(&S, "kserve", "doomed"),
                 "models.json never settled on live and shared");
        srv_controller_assert_alive(&S);
}
