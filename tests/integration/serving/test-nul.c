/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 16 item 3 against a real kube-apiserver: a TrainedModel with U+0000 in a spec string
 * (the API server accepts and stores it) must not stop the controller's list or watch. The good
 * TrainedModels next to it converge; the bad one gets a False condition naming the field; the
 * controller's informers decode every object (the undecodable counter stays 0).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "json/json-util.h"
#include "util/macro.h"

static struct srv S;

static void setup(void)
{
        srv_setup(&S, "nul");
}

static void teardown(void)
{
        srv_teardown(&S);
}

TestSuite(nul, .init = setup, .fini = teardown, .timeout = 240);

/* A TrainedModel under isvc whose spec field (inferenceService, storageUri or framework) is its
 * usual value followed by U+0000 and "x". */
static void tm_with_nul(const char *name, const char *isvc, const char *field)
{
        json_t *obj = srv_json("{'apiVersion': 'serving.kserve.io/v1alpha1', 'kind': "
                               "'TrainedModel', 'metadata': {'name': '%s'}, 'spec': "
                               "{'inferenceService': '%s', 'model': {'storageUri': 's3//a', "
                               "'framework': 'sklearn', 'memory': '1Mi'}}}",
                               name, isvc);
        json_t *spec = json_object_get(obj, "spec");
        json_t *at = streq(field, "inferenceService") ? spec : json_object_get(spec, "model");
        char value[64];
        int n = snprintf(value, sizeof(value), "%s", json_string_value(json_object_get(at, field)));

        cr_assert(n > 0 && (size_t)n + 2 < sizeof(value));
        value[n + 1] = 'x'; /* "<old>\0x": the NUL is where a C string would end */
        cr_assert_eq(json_object_set_new(at, field, json_stringn(value, (size_t)n + 2)), 0);
        srv_create(&S, &srv_gvr_tm, obj);
}

/* The stored object really has the NUL (the API server kept it). */
static bool stored_with_nul(const char *name, const char *field)
{
        json_t *o = srv_get(&S, &srv_gvr_tm, name);
        json_t *spec = json_object_get(o, "spec");
        json_t *v = json_object_get(
                streq(field, "inferenceService") ? spec : json_object_get(spec, "model"), field);
        bool ok = json_string_has_nul(v);

        json_decref(o);
        return ok;
}

static bool false_naming(const char *tm, const char *message)
{
        json_t *obj = srv_get(&S, &srv_gvr_tm, tm);
        const char *st = srv_cond_status(obj, "Ready");
        const char *reason = srv_cond_reason(obj, "Ready");
        const char *msg = srv_cond_message(obj, "Ready");
        bool ok = st && streq(st, "False") && reason && streq(reason, "InvalidSpec") && msg &&
                  strstr(msg, message);

        json_decref(obj);
        return ok;
}

static bool ready_and_listed(const char *tm, const char *isvc)
{
        return srv_tm_cond(&S, tm, "Ready", "True", NULL) && srv_models_has(&S, isvc, tm);
}

Test(nul, a_nul_in_a_spec_string_stops_nothing)
{
        srv_isvc_create(&S, "par", srv_predictor_tf("2Gi"), NULL);
        srv_isvc_set_ready(&S, "par", true);
        /* before the controller starts: the bad objects are in its first LIST */
        srv_tm_create(&S, "good-1", "par", "s3//g1", "sklearn", "1Mi");
        tm_with_nul("bad-uri", "par", "storageUri");
        tm_with_nul("bad-parent", "par", "inferenceService");
        srv_tm_create(&S, "good-2", "par", "s3//g2", "sklearn", "1Mi");
        cr_assert(stored_with_nul("bad-uri", "storageUri"), "the API server dropped the NUL");
        cr_assert(stored_with_nul("bad-parent", "inferenceService"));

        srv_controller_start(&S);
        SRV_WAIT(SRV_TIMEOUT,
                 ready_and_listed("good-1", "par") && ready_and_listed("good-2", "par"),
                 "the good TrainedModels next to one with a NUL never converged");
        SRV_WAIT(SRV_TIMEOUT, false_naming("bad-uri", "spec.model.storageUri contains a NUL"),
                 "bad-uri: no False condition naming spec.model.storageUri");
        SRV_WAIT(SRV_TIMEOUT, false_naming("bad-parent", "spec.inferenceService contains a NUL"),
                 "bad-parent: no False condition naming spec.inferenceService");

        /* and on the watch */
        tm_with_nul("bad-fw", "par", "framework");
        srv_tm_create(&S, "good-3", "par", "s3//g3", "sklearn", "1Mi");
        SRV_WAIT(SRV_TIMEOUT, ready_and_listed("good-3", "par"),
                 "a good TrainedModel created after a bad one never converged");
        SRV_WAIT(SRV_TIMEOUT, false_naming("bad-fw", "spec.model.framework contains a NUL"),
                 "bad-fw: no False condition naming spec.model.framework");

        json_t *models = srv_models(&S, "par");
        char *text = json_dumps(models, JSON_COMPACT);
        cr_assert_eq(json_array_size(models), 3, "models.json: %s", text);
        cr_assert_null(strstr(text, "bad-"), "models.json: %s", text);
        free(text);
        json_decref(models);

        cr_assert_eq(srv_metric(&S, "modelplane_informer_undecodable_objects_total{"), 0.0,
                     "every object decodes (NUL strings included)");
        cr_assert_eq(srv_log_count(&S, "Failed to list"), 0, "a list failed");
        cr_assert_eq(srv_log_count(&S, "Failed to watch"), 0, "a watch failed");
        srv_controller_assert_alive(&S);

        /* they can be deleted like any other */
        srv_delete(&S, &srv_gvr_tm, "bad-uri", NULL);
        SRV_WAIT(SRV_TIMEOUT, srv_gone(&S, &srv_gvr_tm, "bad-uri"), "bad-uri stuck Terminating");
}
