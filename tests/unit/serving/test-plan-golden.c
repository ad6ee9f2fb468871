/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Golden-file tests of the planner (house style 5.12 rule 3): each case in
 * tests/fixtures/serving/plan/<case>/ has input.json ({isvcName, now, isvc, configMap,
 * trainedModels; configMaps, the replicas' reports, when the shell reads them; noFinalizer and
 * readyRequiresLoaded when true}) and expected.json (isvc_plan_to_json()). UPDATE_GOLDEN=1
 * rewrites expected.json; review the diff.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "serving/plan.h"

static void run_case(const char *name)
{
        const char *root = getenv("MODELPLANE_SOURCE_ROOT");
        char in_path[4096], exp_path[4096];
        json_error_t err;
        json_auto_t *input = NULL, *got = NULL, *want = NULL;
        const json_t **tms = NULL;
        json_t *list;
        struct plan_input in;
        struct isvc_plan plan;
        usec_t now;
        int r;

        cr_assert_not_null(root, "MODELPLANE_SOURCE_ROOT must point at the source tree");
        (void)snprintf(in_path, sizeof(in_path), "%s/tests/fixtures/serving/plan/%s/input.json",
                       root, name);
        (void)snprintf(exp_path, sizeof(exp_path),
                       "%s/tests/fixtures/serving/plan/%s/expected.json", root, name);
        input = json_load_file(in_path, JSON_REJECT_DUPLICATES, &err);
        cr_assert_not_null(input, "%s: %s", in_path, err.text);
        cr_assert_eq(parse_rfc3339(json_string_value(json_object_get(input, "now")), &now), 0);

        list = json_object_get(input, "trainedModels");
        tms = calloc(json_array_size(list) + 1, sizeof(*tms));
        cr_assert_not_null(tms);
        for (size_t i = 0; i < json_array_size(list); i++)
                tms[i] = json_array_get(list, i);
        in = (struct plan_input){
                .isvc_name = json_string_value(json_object_get(input, "isvcName")),
                .isvc = json_is_null(json_object_get(input, "isvc"))
                                ? NULL
                                : json_object_get(input, "isvc"),
                .configmap = json_is_null(json_object_get(input, "configMap"))
                                     ? NULL
                                     : json_object_get(input, "configMap"),
                .tms = tms,
                .n_tms = json_array_size(list),
                .now = now,
                .configmaps = json_object_get(input, "configMaps"),
                .ready_requires_loaded = json_is_true(
                        json_object_get(input, "readyRequiresLoaded")),
                .no_finalizer = json_is_true(json_object_get(input, "noFinalizer")),
        };
        r = isvc_plan_compute(&in, &plan);
        free(tms);
        cr_assert_eq(r, 0);
        got = isvc_plan_to_json(&plan);
        isvc_plan_release(&plan);
        cr_assert_not_null(got);

        if (getenv("UPDATE_GOLDEN")) {
                cr_assert_eq(json_dump_file(got, exp_path, JSON_INDENT(2) | JSON_SORT_KEYS), 0);
                return;
        }
        want = json_load_file(exp_path, JSON_REJECT_DUPLICATES, &err);
        cr_assert_not_null(want, "%s: %s (UPDATE_GOLDEN=1 creates it)", exp_path, err.text);
        if (!json_equal(got, want)) {
                char *s = json_dumps(got, JSON_INDENT(2) | JSON_SORT_KEYS);
                cr_assert_fail("plan for %s differs from %s; got:\n%s", name, exp_path, s);
                free(s);
        }
}

Test(plan_golden, healthy)
{
        run_case("healthy");
}

Test(plan_golden, mixed)
{
        run_case("mixed");
}

Test(plan_golden, parent_missing)
{
        run_case("parent-missing");
}

/* Issue 28 item 6: a parent name over a label value's 63 characters. InvalidSpec naming the limit;
 * the metadata patch has the finalizer and the ownerReference but no label, the ConfigMap create
 * no serving.kserve.io/inferenceservice label. */
Test(plan_golden, parent_name_over_label_limit)
{
        run_case("parent-name-over-label-limit");
}

/* Issue 27: without the finalizer. The gone model's entry leaves, and its memory (with the
 * still listed deleting model's) keeps waiting out for this write (1Gi: 4 x 256Mi); settled's
 * leftover finalizer is released on its own (releaseFinalizer), fresh's goes with its label
 * patch (the foreign one kept); deleting is still released only once unlisted. */
Test(plan_golden, no_finalizer)
{
        run_case("no-finalizer");
}

/* Issue 28 item 2: the replicas' reports are the planner's input. Three replicas (k = 3): a
 * model loaded on all ("3/3 replicas loaded", True), one that failed on one (False,
 * FailedToLoad naming the pod), one still loading, one missing from a report and one loaded
 * from an older storageUri (both Pending: "2/3"); nextStale is the earliest fresh report's. */
Test(plan_golden, replicas)
{
        run_case("replicas");
}

/* One of two reports is stale (no heartbeat for 4 periods): Unknown, Stale, naming the pod. */
Test(plan_golden, replicas_stale)
{
        run_case("replicas-stale");
}

/* --ready-requires-loaded: Ready waits while no replica has loaded the model (False when every
 * reporting replica failed, else Unknown); one loaded copy is enough. */
Test(plan_golden, replicas_ready_requires_loaded)
{
        run_case("replicas-ready-requires-loaded");
}

/* No replica reports (m = 0) while Ready requires Loaded: Unknown, NoReplicas. */
Test(plan_golden, replicas_no_reports)
{
        run_case("replicas-no-reports");
}

/* Deletes with the finalizer: a deleting model still listed is Deleting (no status, no
 * ModelLoaded though a report lists it); one no longer listed is Finalized with its finalizer
 * removal after the write (metadataPhase "finalize"); one with another controller's finalizer
 * only has nothing to remove. */
Test(plan_golden, deleting)
{
        run_case("deleting");
}

/* The same deletes without the finalizer: the same finalizer removals (switching strands
 * nothing), and the live model's leftover finalizer goes with its metadata patch. */
Test(plan_golden, deleting_no_finalizer)
{
        run_case("deleting-no-finalizer");
}

/* Placement: ModelLoaded counts copies over the replicas a model is assigned ("n/k copies
 * loaded": 1 copy, 2 copies, "all" three), not over every replica. */
Test(plan_golden, placement_copies)
{
        run_case("placement-copies");
}
