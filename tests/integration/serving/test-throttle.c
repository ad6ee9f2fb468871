/* SPDX-License-Identifier: Apache-2.0 */
/*
 * 429s from the real API server (issue #12 item 1): run-suite.sh starts this binary's
 * kube-apiserver with the classic in-flight limiter at its lowest (--enable-priority-and-fairness
 * false, --max-requests-inflight 1, --max-mutating-requests-inflight 1: every request beyond one
 * at a time is answered 429 with Retry-After: 1). The controller runs at its defaults (no
 * client-side rate limit, 4 workers, its Event sender) under a burst of TrainedModels. All of them
 * must converge (Ready, listed exactly once) and the throttling must be counted in /metrics.
 * Counts are asserted, never times (the waits are bounded polls).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "json/json-util.h"

enum { N_TM = 150 };

static struct srv S;

static void setup(void)
{
        srv_setup(&S, "throttle");
}

static void teardown(void)
{
        srv_teardown(&S);
}

TestSuite(throttle, .init = setup, .fini = teardown);

/* Number of TrainedModels Ready=True, and whether models.json lists each exactly once. */
static bool converged(unsigned *ret_ready, bool *ret_exact)
{
        json_auto_t *models = srv_models(&S, "isvc");
        json_auto_t *list = NULL;
        struct kube_status st = { 0 };
        unsigned ready = 0;
        bool exact = json_array_size(models) == N_TM;

        for (size_t i = 0; exact && i < json_array_size(models); i++)
                for (size_t j = i + 1; exact && j < json_array_size(models); j++)
                        if (streq(json_get_string_path(json_array_get(models, i), "modelName",
                                                       NULL),
                                  json_get_string_path(json_array_get(models, j), "modelName",
                                                       NULL)))
                                exact = false;
        if (kube_list(S.c, &srv_gvr_tm, S.ns, NULL, &list, &st) == 0) {
                json_t *items = json_object_get(list, "items");

                for (size_t i = 0; i < json_array_size(items); i++) {
                        const char *s = srv_cond_status(json_array_get(items, i), "Ready");
                        if (s && streq(s, "True"))
                                ready++;
                }
        }
        *ret_ready = ready;
        *ret_exact = exact;
        return exact && ready == N_TM;
}

Test(throttle, burst_under_429s_converges_and_counts_the_throttling, .timeout = 900)
{
        unsigned ready = 0;
        bool exact = false;
        double throttled, code429;

        srv_isvc_create(&S, "isvc", srv_predictor_tf("100Gi"), NULL);
        srv_isvc_set_ready(&S, "isvc", true);
        srv_controller_start(&S);
        for (int i = 0; i < N_TM; i++) {
                char name[32];

                (void)snprintf(name, sizeof(name), "m-%03d", i);
                srv_tm_create(&S, name, "isvc", "s3://bucket/model", "tensorflow", "10Mi");
        }
        SRV_WAIT(20 * SRV_TIMEOUT, converged(&ready, &exact),
                 "not converged under throttling: %u of %d Ready, models.json exact: %d", ready,
                 N_TM, exact);

        throttled = srv_metric(&S, "modelplane_kube_client_throttled_total");
        code429 = srv_metric(&S, "rest_client_requests_total{code=\"429\"");
        cr_log_info("throttled answers: %.0f (429s seen by the request observer: %.0f)", throttled,
                    code429);
        cr_assert_gt(throttled, 0, "the API server never throttled: the test proves nothing");
        cr_assert_geq(code429, 1);
        /* calls still throttled after every retry were handed back and requeued: the
         * convergence above is the proof that nothing was lost */
        cr_log_info("handed back after the retries: %.0f",
                    srv_metric(&S, "modelplane_kube_client_throttle_exhausted_total"));
        srv_controller_assert_alive(&S);
}
