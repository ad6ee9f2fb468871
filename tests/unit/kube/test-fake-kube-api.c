/* SPDX-License-Identifier: Apache-2.0 */
/* The in-memory kube_api fake behaves as kube-apiserver does where the reconcilers can tell. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "fake-kube-api.h"
#include "json/json-util.h"

static const struct gvr cms = { "", "v1", "configmaps" };
static const struct gvr tms = { "serving.kserve.io", "v1alpha1", "trainedmodels" };

static json_t *obj(const char *name)
{
        json_t *o = json_pack("{s:{s:s,s:{s:s}},s:{s:s},s:{s:s}}", "metadata", "name", name,
                              "labels", "app", name, "spec", "a", "1", "status", "phase", "x");

        cr_assert_not_null(o);
        return o;
}

static const char *rv_of(const json_t *o)
{
        return json_get_string_path(o, "metadata", "resourceVersion", NULL);
}

Test(fake_kube_api, create_get_conflicts_and_404)
{
        CLEANUP(fake_kube_api_freep) struct fake_kube_api *f = fake_kube_api_new(NULL);
        struct kube_api api = fake_kube_api_port(f);
        struct kube_status st = { 0 };
        json_auto_t *o = obj("a"), *created = NULL, *got = NULL, *patched = NULL;
        json_auto_t *stale = json_pack("{s:{s:s},s:{s:s}}", "metadata", "resourceVersion", "1",
                                       "spec", "a", "2");

        cr_assert(f && o && stale, "out of memory making the test's objects");
        cr_assert_eq(kube_api_create(&api, &cms, "ns", o, NULL, &created, &st), 0);
        cr_assert_not_null(rv_of(created));
        cr_assert_not_null(json_get_path(created, "metadata", "uid", NULL));
        cr_assert_eq(kube_api_create(&api, &cms, "ns", o, NULL, NULL, &st), -EEXIST);
        cr_assert_eq(st.http_code, 409);
        cr_assert_str_eq(st.reason, "AlreadyExists");
        cr_assert_eq(kube_api_get(&api, &cms, "ns", "b", NULL, &st), -ENOENT);
        cr_assert_eq(st.http_code, 404);
        cr_assert_eq(kube_api_get(&api, &cms, "other", "a", NULL, &st), -ENOENT);

        /* a stale resourceVersion precondition is a 409 Conflict and changes nothing */
        cr_assert_eq(kube_api_patch(&api, &cms, "ns", "a", KUBE_PATCH_MERGE, stale, NULL, NULL,
                                    &st),
                     -ESTALE);
        cr_assert_str_eq(st.reason, "Conflict");
        cr_assert_eq(kube_api_get(&api, &cms, "ns", "a", &got, &st), 0);
        cr_assert_str_eq(rv_of(got), rv_of(created));
        cr_assert_str_eq(json_get_string_path(got, "spec", "a", NULL), "1");

        /* the current one passes; a merge patch null deletes; the main resource keeps .status */
        json_auto_t *p = json_pack("{s:{s:s,s:{s:n}},s:{s:s},s:{s:s}}", "metadata",
                                   "resourceVersion", rv_of(got), "labels", "app", "spec", "a", "2",
                                   "status", "phase", "y");
        cr_assert_eq(kube_api_patch(&api, &cms, "ns", "a", KUBE_PATCH_MERGE, p, NULL, &patched,
                                    &st),
                     0);
        cr_assert_str_neq(rv_of(patched), rv_of(got));
        cr_assert_str_eq(json_get_string_path(patched, "spec", "a", NULL), "2");
        cr_assert_null(json_get_path(patched, "metadata", "labels", "app", NULL));
        cr_assert_str_eq(json_get_string_path(patched, "status", "phase", NULL), "x");
        cr_assert_eq(kube_api_patch(&api, &cms, "ns", "a", KUBE_PATCH_JSON, p, NULL, NULL, &st),
                     -EINVAL);
        cr_assert_eq(kube_api_patch(&api, &cms, "ns", "zz", KUBE_PATCH_MERGE, p, NULL, NULL, &st),
                     -ENOENT);
}

Test(fake_kube_api, status_subresource_changes_only_status)
{
        CLEANUP(fake_kube_api_freep) struct fake_kube_api *f = fake_kube_api_new(NULL);
        struct kube_api api = fake_kube_api_port(f);
        json_auto_t *o = obj("a"), *out = NULL;
        json_auto_t *p = json_pack("{s:{s:s},s:{s:s}}", "spec", "a", "9", "status", "phase", "y");

        cr_assert(f && o && p, "out of memory making the test's objects");
        cr_assert_gt(fake_kube_api_put(f, &tms, "ns", o), 0);
        cr_assert_eq(kube_api_patch(&api, &tms, "ns", "a", KUBE_PATCH_MERGE, p,
                                    &(struct kube_write_options){ .subresource = "status" }, &out,
                                    NULL),
                     0);
        cr_assert_str_eq(json_get_string_path(out, "status", "phase", NULL), "y");
        cr_assert_str_eq(json_get_string_path(out, "spec", "a", NULL), "1");
        cr_assert_eq(fake_kube_api_calls(f, FAKE_KUBE_PATCH, "trainedmodels/status"), 1);
        cr_assert_eq(fake_kube_api_calls(f, FAKE_KUBE_PATCH, "trainedmodels"), 0);
}

Test(fake_kube_api, finalizers_hold_a_delete_until_they_are_gone)
{
        CLEANUP(fake_kube_api_freep) struct fake_kube_api *f = fake_kube_api_new(NULL);
        struct kube_api api = fake_kube_api_port(f);
        struct kube_status st = { 0 };
        json_auto_t *o = obj("a"), *held = NULL, *gone = NULL;
        json_auto_t *drop = json_pack("{s:{s:[]}}", "metadata", "finalizers");

        cr_assert(f && o && drop, "out of memory making the test's objects");
        json_object_set_new(json_object_get(o, "metadata"), "finalizers", json_pack("[s]", "x"));
        cr_assert_gt(fake_kube_api_put(f, &tms, "ns", o), 0);
        cr_assert_eq(kube_api_delete(&api, &tms, "ns", "a",
                                     &(struct kube_delete_options){ .precondition_rv = "1" }, NULL,
                                     &st),
                     -ESTALE);
        cr_assert_eq(kube_api_delete(&api, &tms, "ns", "a", NULL, NULL, &st), 0);
        held = fake_kube_api_get(f, &tms, "ns", "a");
        cr_assert_not_null(json_get_path(held, "metadata", "deletionTimestamp", NULL));
        cr_assert_eq(kube_api_patch(&api, &tms, "ns", "a", KUBE_PATCH_MERGE, drop, NULL, NULL, &st),
                     0);
        gone = fake_kube_api_get(f, &tms, "ns", "a");
        cr_assert_null(gone);
        cr_assert_eq(kube_api_delete(&api, &tms, "ns", "a", NULL, NULL, &st), -ENOENT);
}

Test(fake_kube_api, list_by_namespace_and_label_in_name_order)
{
        CLEANUP(fake_kube_api_freep) struct fake_kube_api *f = fake_kube_api_new(NULL);
        struct kube_api api = fake_kube_api_port(f);
        const char *names[] = { "c", "a", "b" };
        json_auto_t *all = NULL, *sel = NULL, *other = NULL;

        cr_assert(f, "out of memory making the test's objects");
        for (size_t i = 0; i < 3; i++) {
                json_auto_t *o = obj(names[i]);
                cr_assert_gt(fake_kube_api_put(f, &cms, "ns", o), 0);
        }
        json_auto_t *x = obj("x");
        cr_assert_gt(fake_kube_api_put(f, &cms, "ns2", x), 0);
        cr_assert_eq(kube_api_list(&api, &cms, "ns", NULL, &all, NULL), 0);
        cr_assert_eq(json_array_size(json_object_get(all, "items")), 3);
        cr_assert_str_eq(json_get_string_path(json_array_get(json_object_get(all, "items"), 0),
                                              "metadata", "name", NULL),
                         "a");
        cr_assert_eq(kube_api_list(&api, &cms, "ns",
                                   &(struct kube_list_options){ .label_selector = "app=b" }, &sel,
                                   NULL),
                     0);
        cr_assert_eq(json_array_size(json_object_get(sel, "items")), 1);
        cr_assert_eq(kube_api_list(&api, &cms, NULL, NULL, &other, NULL), 0);
        cr_assert_eq(json_array_size(json_object_get(other, "items")), 4);
}

Test(fake_kube_api, faults_on_the_nth_matching_call)
{
        CLEANUP(fake_kube_api_freep) struct fake_kube_api *f = fake_kube_api_new(NULL);
        struct kube_api api = fake_kube_api_port(f);
        struct kube_status st = { 0 };
        json_auto_t *o = obj("a");

        cr_assert(f && o, "out of memory making the test's objects");
        cr_assert_gt(fake_kube_api_put(f, &cms, "ns", o), 0);
        cr_assert_eq(fake_kube_api_fail(f, FAKE_KUBE_GET, "configmaps", 2, 2, 429), 0);
        cr_assert_eq(fake_kube_api_fail(f, FAKE_KUBE_GET, "secrets", 1, 1, 500), 0);
        cr_assert_eq(kube_api_get(&api, &cms, "ns", "a", NULL, &st), 0);
        cr_assert_eq(kube_api_get(&api, &cms, "ns", "a", NULL, &st), -EAGAIN);
        cr_assert_eq(st.http_code, 429);
        cr_assert_gt(st.retry_after, 0);
        cr_assert_eq(kube_api_get(&api, &cms, "ns", "a", NULL, &st), -EAGAIN);
        cr_assert_eq(kube_api_get(&api, &cms, "ns", "a", NULL, &st), 0);
        cr_assert_eq(fake_kube_api_calls(f, FAKE_KUBE_GET, "configmaps"), 4);

        cr_assert_eq(fake_kube_api_fail(f, FAKE_KUBE_ANY, NULL, 1, 1, 0), 0);
        cr_assert_eq(kube_api_get(&api, &cms, "ns", "a", NULL, &st), -ETIMEDOUT);
        cr_assert_eq(st.http_code, 0);
        cr_assert_eq(fake_kube_api_fail(f, FAKE_KUBE_GET, NULL, 0, 1, 500), -EINVAL);
}
