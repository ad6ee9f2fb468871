/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 28 item 6 against a real kube-apiserver: a TrainedModel whose spec.inferenceService is
 * longer than 63 characters. The name is the value of the TrainedModel's inferenceservice label
 * and of its ConfigMap's serving.kserve.io/inferenceservice label, which the API server refuses
 * past 63 bytes; the controller must not attempt the write, and the TrainedModel gets a False
 * condition (InvalidSpec) naming the limit instead of nothing. Its neighbours converge; it can be
 * deleted. (Before: "Reconciler error (terminal, not retried): Failed to patch metadata of
 * TrainedModel …: metadata.labels: Invalid value: …: must be no more than 63 bytes", and no
 * condition.) The InferenceService of that name exists: the API server accepts a custom resource
 * name of up to 253 characters (no KServe webhook here).
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
        srv_setup(&S, "labellimit");
}

static void teardown(void)
{
        srv_teardown(&S);
}

TestSuite(label_limit, .init = setup, .fini = teardown, .timeout = 240);

static bool invalid_naming_the_limit(const char *tm)
{
        json_t *obj = srv_get(&S, &srv_gvr_tm, tm);
        const char *st = srv_cond_status(obj, "Ready");
        const char *reason = srv_cond_reason(obj, "Ready");
        const char *msg = srv_cond_message(obj, "Ready");
        bool ok = st && streq(st, "False") && reason && streq(reason, "InvalidSpec") && msg &&
                  strstr(msg, "spec.inferenceService") && strstr(msg, "63");

        json_decref(obj);
        return ok;
}

Test(label_limit, a_parent_name_over_63_characters_gets_invalid_spec_and_no_label_write)
{
        /* 64 characters: a valid DNS subdomain, one byte over a label value */
        static const char long_isvc[] =
                "a-parent-name-of-sixty-four-characters-which-no-label-can-hold-x";
        char *label;

        cr_assert_eq(strlen(long_isvc), 64);
        srv_isvc_create(&S, long_isvc, srv_predictor_tf("2Gi"), NULL);
        srv_isvc_set_ready(&S, long_isvc, true);
        srv_isvc_create(&S, "par", srv_predictor_tf("2Gi"), NULL);
        srv_isvc_set_ready(&S, "par", true);
        srv_tm_create(&S, "long-parent", long_isvc, "s3//l", "sklearn", "1Mi");
        srv_tm_create(&S, "good", "par", "s3//g", "sklearn", "1Mi");

        srv_controller_start(&S);
        SRV_WAIT(SRV_TIMEOUT,
                 srv_tm_cond(&S, "good", "Ready", "True", NULL) &&
                         srv_models_has(&S, "par", "good"),
                 "the good TrainedModel never converged");
        SRV_WAIT(SRV_TIMEOUT, invalid_naming_the_limit("long-parent"),
                 "long-parent: no InvalidSpec condition naming the 63-character limit");
        label = srv_label(&S, &srv_gvr_tm, "long-parent", "inferenceservice");
        cr_assert_null(label, "a label was written: %s", label);
        cr_assert_eq(srv_log_count(&S, "must be no more than 63 bytes"), 0,
                     "the controller attempted a write the API server refused");
        srv_controller_assert_alive(&S);

        /* deleted like any other (the finalizer, if any, is released) */
        srv_delete(&S, &srv_gvr_tm, "long-parent", NULL);
        SRV_WAIT(SRV_TIMEOUT, srv_gone(&S, &srv_gvr_tm, "long-parent"),
                 "long-parent stuck Terminating");
        cr_assert_eq(srv_log_count(&S, "must be no more than 63 bytes"), 0,
                     "the controller attempted a write the API server refused");
}
