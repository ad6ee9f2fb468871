/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Kubernetes client against a real kube-apiserver + etcd (scripts/testenv). Run with
 *   scripts/with-testenv meson test -C build --suite apiserver
 * Each test works in its own namespace.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "it-helpers.h"
#include "json/json-util.h"
#include "kube/client.h"

static const struct gvr configmaps = { "", "v1", "configmaps" };
static const struct gvr roles = { "rbac.authorization.k8s.io", "v1", "roles" };
static const struct gvr rolebindings = { "rbac.authorization.k8s.io", "v1", "rolebindings" };
static const struct gvr gadgets = { "it.modelplane.dev", "v1", "gadgets" };

static struct kube_client *c;
static struct kube_config *cfg;
static char ns[128];

static void setup(void)
{
        cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
        c = it_client(&cfg);
        it_namespace_create(c, "it-client", ns, sizeof(ns));
}

static void teardown(void)
{
        if (c)
                it_namespace_delete(c, ns);
        c = kube_client_free(c);
        cfg = kube_config_free(cfg);
        curl_global_cleanup();
}

TestSuite(apiserver_client, .init = setup, .fini = teardown, .timeout = 300);

static json_t *configmap(const char *name, const char *key, const char *value)
{
        json_t *o = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "v1", "kind",
                              "ConfigMap", "metadata", "name", name, "data", key, value);

        cr_assert_not_null(o);
        return o;
}

static const char *rv_of(const json_t *o)
{
        return json_string_value(json_get_path(o, "metadata", "resourceVersion", NULL));
}

static const char *data_of(const json_t *o, const char *key)
{
        return json_string_value(json_get_path(o, "data", key, NULL));
}

Test(apiserver_client, configmap_crud)
{
        json_t *cm = configmap("crud", "k", "v1");
        json_t *got = NULL, *updated = NULL, *created = NULL;
        struct kube_status st;

        cr_assert_eq(kube_create(c, &configmaps, ns, cm, NULL, &created, &st), 0, "%s", st.message);
        cr_assert_eq(st.http_code, 201);
        cr_assert_not_null(rv_of(created));
        cr_assert_eq(kube_create(c, &configmaps, ns, cm, NULL, NULL, &st), -EEXIST);
        cr_assert_str_eq(st.reason, "AlreadyExists");

        cr_assert_eq(kube_get(c, &configmaps, ns, "crud", &got, &st), 0, "%s", st.message);
        cr_assert_str_eq(data_of(got, "k"), "v1");
        cr_assert_str_eq(rv_of(got), rv_of(created));

        cr_assert_eq(json_object_set_new(json_object_get(got, "data"), "k", json_string("v2")), 0);
        cr_assert_eq(kube_update(c, &configmaps, ns, "crud", got, NULL, &updated, &st), 0, "%s",
                     st.message);
        cr_assert_str_eq(data_of(updated, "k"), "v2");
        cr_assert_str_neq(rv_of(updated), rv_of(created), "an update makes a new resourceVersion");
        json_decref(got);
        got = NULL;
        cr_assert_eq(kube_get(c, &configmaps, ns, "crud", &got, &st), 0);
        cr_assert_str_eq(data_of(got, "k"), "v2");

        cr_assert_eq(kube_delete(c, &configmaps, ns, "crud", NULL, NULL, &st), 0, "%s", st.message);
        cr_assert_eq(kube_get(c, &configmaps, ns, "crud", NULL, &st), -ENOENT);
        json_decref(cm);
        json_decref(got);
        json_decref(updated);
        json_decref(created);
}

Test(apiserver_client, stale_resource_version_is_estale)
{
        json_t *cm = configmap("stale", "k", "v");
        json_t *first = NULL, *second = NULL;
        struct kube_status st;

        cr_assert_eq(kube_create(c, &configmaps, ns, cm, NULL, &first, &st), 0, "%s", st.message);
        cr_assert_eq(json_object_set_new(json_object_get(first, "data"), "k", json_string("a")), 0);
        cr_assert_eq(kube_update(c, &configmaps, ns, "stale", first, NULL, &second, &st), 0);

        /* first still carries the old resourceVersion */
        cr_assert_eq(json_object_set_new(json_object_get(first, "data"), "k", json_string("b")), 0);
        cr_assert_eq(kube_update(c, &configmaps, ns, "stale", first, NULL, NULL, &st), -ESTALE);
        cr_assert_eq(st.http_code, 409);
        cr_assert_str_eq(st.reason, "Conflict");
        cr_assert(strstr(st.message, "the object has been modified"), "%s", st.message);
        json_decref(cm);
        json_decref(first);
        json_decref(second);
}

Test(apiserver_client, not_found_is_enoent)
{
        struct kube_status st;

        cr_assert_eq(kube_get(c, &configmaps, ns, "does-not-exist", NULL, &st), -ENOENT);
        cr_assert_eq(st.http_code, 404);
        cr_assert_str_eq(st.reason, "NotFound");
        cr_assert(strstr(st.message, "\"does-not-exist\" not found"), "%s", st.message);
        cr_assert_eq(kube_delete(c, &configmaps, ns, "does-not-exist", NULL, NULL, &st), -ENOENT);
        cr_assert_eq(kube_get(c, &gadgets, ns, "x", NULL, &st), -ENOENT,
                     "an unknown resource type is a 404 too");
}

Test(apiserver_client, forbidden_names_verb_and_resource)
{
        json_t *role = json_pack("{s:s, s:s, s:{s:s}, s:[{s:[s], s:[s], s:[s]}]}", "apiVersion",
                                 "rbac.authorization.k8s.io/v1", "kind", "Role", "metadata", "name",
                                 "cm-reader", "rules", "apiGroups", "", "resources", "configmaps",
                                 "verbs", "get");
        json_t *binding = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:s}, s:[{s:s, s:s, s:s}]}",
                                    "apiVersion", "rbac.authorization.k8s.io/v1", "kind",
                                    "RoleBinding", "metadata", "name", "cm-reader", "roleRef",
                                    "apiGroup", "rbac.authorization.k8s.io", "kind", "Role", "name",
                                    "cm-reader", "subjects", "kind", "ServiceAccount", "name",
                                    "limited", "namespace", ns);
        json_t *cm = configmap("readable", "k", "v");
        struct kube_client *limited;
        struct kube_status st;
        json_t *got = NULL;
        char *token;
        int r = -1;

        cr_assert_eq(kube_create(c, &roles, ns, role, NULL, NULL, &st), 0, "%s", st.message);
        cr_assert_eq(kube_create(c, &rolebindings, ns, binding, NULL, NULL, &st), 0, "%s",
                     st.message);
        cr_assert_eq(kube_create(c, &configmaps, ns, cm, NULL, NULL, &st), 0, "%s", st.message);
        token = it_serviceaccount_token(c, ns, "limited");
        limited = it_client_with_token(cfg, token);

        /* RBAC changes propagate to the authorizer quickly but not instantly */
        for (int i = 0; i < 100; i++) {
                r = kube_get(limited, &configmaps, ns, "readable", &got, &st);
                if (r == 0)
                        break;
                usleep(100000);
        }
        cr_assert_eq(r, 0, "the granted verb works: %s", st.message);
        cr_assert_str_eq(data_of(got, "k"), "v");

        cr_assert_eq(kube_list(limited, &configmaps, ns, NULL, NULL, &st), -EACCES);
        cr_assert_eq(st.http_code, 403);
        cr_assert_str_eq(st.reason, "Forbidden");
        cr_assert(strstr(st.message, "cannot list resource \"configmaps\""), "%s", st.message);

        cr_assert_eq(kube_delete(limited, &configmaps, ns, "readable", NULL, NULL, &st), -EACCES);
        cr_assert(strstr(st.message, "cannot delete resource \"configmaps\""), "%s", st.message);

        kube_client_free(limited);
        limited = it_client_with_token(cfg, "not-a-valid-token");
        cr_assert_eq(kube_get(limited, &configmaps, ns, "readable", NULL, &st), -EACCES);
        cr_assert_eq(st.http_code, 401);
        kube_client_free(limited);
        free(token);
        json_decref(role);
        json_decref(binding);
        json_decref(cm);
        json_decref(got);
}

static size_t count_items(const json_t *list)
{
        return json_array_size(json_object_get(list, "items"));
}

Test(apiserver_client, label_selectors)
{
        static const char *const labels[][2] = { { "a", "web" }, { "a", "db" }, { "b", "web" } };
        static const struct {
                const char *selector;
                size_t want;
        } cases[] = {
                { "app=a", 2 }, { "app=a,tier=web", 1 }, { "app in (a,b)", 3 },  { "app!=a", 1 },
                { "tier", 3 },  { "!tier", 0 },          { "app notin (a)", 1 },
        };
        struct kube_status st;

        for (size_t i = 0; i < ELEMENTSOF(labels); i++) {
                char name[32];
                json_t *o;

                (void)snprintf(name, sizeof(name), "sel-%zu", i);
                o = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s}}}", "apiVersion", "v1", "kind",
                              "ConfigMap", "metadata", "name", name, "labels", "app", labels[i][0],
                              "tier", labels[i][1]);
                cr_assert_eq(kube_create(c, &configmaps, ns, o, NULL, NULL, &st), 0, "%s",
                             st.message);
                json_decref(o);
        }
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct kube_list_options lo = { .label_selector = cases[i].selector };
                json_t *list = NULL;

                cr_assert_eq(kube_list(c, &configmaps, ns, &lo, &list, &st), 0, "%s: %s",
                             cases[i].selector, st.message);
                cr_assert_eq(count_items(list), cases[i].want, "selector %s: expected %zu, got %zu",
                             cases[i].selector, cases[i].want, count_items(list));
                json_decref(list);
        }
        {
                struct kube_list_options lo = { .field_selector = "metadata.name=sel-1" };
                json_t *list = NULL;

                cr_assert_eq(kube_list(c, &configmaps, ns, &lo, &list, &st), 0, "%s", st.message);
                cr_assert_eq(count_items(list), 1, "field selector");
                json_decref(list);
        }
        {
                struct kube_list_options lo = { .label_selector = "app in (" };

                cr_assert_eq(kube_list(c, &configmaps, ns, &lo, NULL, &st), -EINVAL,
                             "a malformed selector is a 400");
                cr_assert_eq(st.http_code, 400);
        }
}

struct creator {
        struct kube_client *client;
        const char *ns;
        unsigned from, to;
        int result;
};

static void *create_range(void *arg)
{
        struct creator *cr = arg;
        struct kube_status st;

        cr->result = 0;
        for (unsigned i = cr->from; i < cr->to && cr->result == 0; i++) {
                char name[32];
                json_t *o;

                (void)snprintf(name, sizeof(name), "page-%04u", i);
                o = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:i}}", "apiVersion", "v1", "kind",
                              "ConfigMap", "metadata", "name", name, "labels", "set", "paging",
                              "data", "i", (int)i);
                if (!o) {
                        cr->result = -ENOMEM;
                        break;
                }
                /* data values must be strings: put the number in as a string */
                json_object_set_new(json_object_get(o, "data"), "i", json_sprintf("%u", i));
                cr->result = kube_create(cr->client, &configmaps, cr->ns, o, NULL, NULL, &st);
                json_decref(o);
        }
        return NULL;
}

Test(apiserver_client, paging_through_2000_configmaps, .timeout = 600)
{
        enum { N = 2000, LIMIT = 500, THREADS = 4 };
        struct creator creators[THREADS];
        pthread_t threads[THREADS];
        char *cont = NULL;
        char *first_rv = NULL;
        static bool seen[N];
        size_t total = 0, pages = 0;
        struct kube_status st;

        /* clones share the configuration and limiter; each thread uses its own */
        for (unsigned t = 0; t < THREADS; t++) {
                creators[t] = (struct creator){ .ns = ns,
                                                .from = t * (N / THREADS),
                                                .to = (t + 1) * (N / THREADS) };
                cr_assert_eq(kube_client_dup(c, &creators[t].client), 0);
                cr_assert_eq(pthread_create(&threads[t], NULL, create_range, &creators[t]), 0);
        }
        for (unsigned t = 0; t < THREADS; t++) {
                pthread_join(threads[t], NULL);
                cr_assert_eq(creators[t].result, 0, "creator %u failed: %d", t, creators[t].result);
                kube_client_free(creators[t].client);
        }

        do {
                struct kube_list_options lo = { .limit = LIMIT,
                                                .continue_token = cont,
                                                .label_selector = "set=paging" };
                json_t *list = NULL, *item;
                const char *next, *rv;
                size_t i;

                cr_assert_eq(kube_list(c, &configmaps, ns, &lo, &list, &st), 0, "%s", st.message);
                pages++;
                cr_assert_leq(count_items(list), LIMIT);
                json_array_foreach(json_object_get(list, "items"), i, item) {
                        const char *name = json_string_value(
                                json_get_path(item, "metadata", "name", NULL));
                        unsigned idx;

                        cr_assert(name && sscanf(name, "page-%u", &idx) == 1 && idx < N);
                        cr_assert(!seen[idx], "%s listed twice", name);
                        seen[idx] = true;
                        total++;
                }
                rv = json_string_value(json_get_path(list, "metadata", "resourceVersion", NULL));
                cr_assert_not_null(rv);
                if (!first_rv)
                        first_rv = strdup(rv);
                else
                        cr_assert_str_eq(rv, first_rv, "all pages come from one snapshot");
                next = json_string_value(json_get_path(list, "metadata", "continue", NULL));
                free(cont);
                cont = next && *next ? strdup(next) : NULL;
                json_decref(list);
                cr_assert_leq(pages, N / LIMIT + 1, "paging must end");
        } while (cont);

        cr_assert_eq(total, N, "expected %d objects, got %zu", N, total);
        cr_assert_eq(pages, N / LIMIT, "expected %d pages, got %zu", N / LIMIT, pages);
        free(first_rv);
}

Test(apiserver_client, merge_json_strategic_and_apply_patches)
{
        struct kube_write_options mgr_a = { .field_manager = "manager-a" };
        struct kube_write_options mgr_b = { .field_manager = "manager-b" };
        struct kube_write_options mgr_b_force = { .field_manager = "manager-b", .force = true };
        json_t *cm = configmap("patched", "k", "v");
        json_t *merge = json_pack("{s:{s:s, s:n}}", "data", "added", "yes", "k");
        json_t *jp = json_pack("[{s:s, s:s, s:s}]", "op", "add", "path", "/data/json", "value",
                               "patch");
        json_t *failing = json_pack("[{s:s, s:s, s:s}]", "op", "test", "path", "/data/json",
                                    "value", "other");
        json_t *smp = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "smp", "1");
        json_t *applied = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "v1", "kind",
                                    "ConfigMap", "metadata", "name", "applied", "data", "owned",
                                    "a");
        json_t *applied_b = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "v1", "kind",
                                      "ConfigMap", "metadata", "name", "applied", "data", "owned",
                                      "b");
        json_t *out = NULL;
        struct kube_status st;

        cr_assert_eq(kube_create(c, &configmaps, ns, cm, NULL, NULL, &st), 0, "%s", st.message);

        cr_assert_eq(kube_patch(c, &configmaps, ns, "patched", KUBE_PATCH_MERGE, merge, NULL, &out,
                                &st),
                     0, "%s", st.message);
        cr_assert_str_eq(data_of(out, "added"), "yes");
        cr_assert_null(data_of(out, "k"), "null in a merge patch deletes");
        json_decref(out);

        cr_assert_eq(kube_patch(c, &configmaps, ns, "patched", KUBE_PATCH_JSON, jp, NULL, &out,
                                &st),
                     0, "%s", st.message);
        cr_assert_str_eq(data_of(out, "json"), "patch");
        json_decref(out);
        out = NULL;

        cr_assert_eq(kube_patch(c, &configmaps, ns, "patched", KUBE_PATCH_JSON, failing, NULL, &out,
                                &st),
                     -EINVAL, "a failed JSON-patch test op is 422");
        cr_assert_eq(st.http_code, 422);
        cr_assert_null(out);

        cr_assert_eq(kube_patch(c, &configmaps, ns, "patched", KUBE_PATCH_STRATEGIC, smp, NULL,
                                &out, &st),
                     0, "%s", st.message);
        cr_assert_str_eq(json_string_value(json_get_path(out, "metadata", "labels", "smp", NULL)),
                         "1");
        json_decref(out);

        /* server-side apply creates, then a second manager conflicts unless it forces */
        cr_assert_eq(kube_patch(c, &configmaps, ns, "applied", KUBE_PATCH_APPLY, applied, &mgr_a,
                                &out, &st),
                     0, "%s", st.message);
        cr_assert_str_eq(data_of(out, "owned"), "a");
        json_decref(out);
        out = NULL;
        cr_assert_eq(kube_patch(c, &configmaps, ns, "applied", KUBE_PATCH_APPLY, applied_b, &mgr_b,
                                &out, &st),
                     -ESTALE, "field conflict is 409 Conflict");
        cr_assert_eq(st.http_code, 409);
        cr_assert(strstr(st.message, "conflict"), "%s", st.message);
        cr_assert_eq(kube_patch(c, &configmaps, ns, "applied", KUBE_PATCH_APPLY, applied_b,
                                &mgr_b_force, &out, &st),
                     0, "%s", st.message);
        cr_assert_str_eq(data_of(out, "owned"), "b");
        json_decref(out);

        json_decref(cm);
        json_decref(merge);
        json_decref(jp);
        json_decref(failing);
        json_decref(smp);
        json_decref(applied);
        json_decref(applied_b);
}

Test(apiserver_client, delete_with_preconditions_and_dry_run)
{
        struct kube_write_options dry = { .dry_run = true };
        json_t *cm = configmap("precond", "k", "v");
        json_t *created = NULL;
        struct kube_status st;
        char *uid, *rv;

        cr_assert_eq(kube_create(c, &configmaps, ns, cm, &dry, NULL, &st), 0, "%s", st.message);
        cr_assert_eq(kube_get(c, &configmaps, ns, "precond", NULL, &st), -ENOENT,
                     "dry run creates nothing");

        cr_assert_eq(kube_create(c, &configmaps, ns, cm, NULL, &created, &st), 0, "%s", st.message);
        uid = strdup(json_string_value(json_get_path(created, "metadata", "uid", NULL)));
        rv = strdup(rv_of(created));

        {
                struct kube_delete_options wrong_uid = {
                        .precondition_uid = "00000000-0000-0000-0000-000000000000"
                };
                struct kube_delete_options wrong_rv = { .precondition_uid = uid,
                                                        .precondition_rv = "1" };
                struct kube_delete_options right = { .precondition_uid = uid,
                                                     .precondition_rv = rv,
                                                     .propagation_policy = "Foreground" };
                json_t *gone = NULL;

                cr_assert_eq(kube_delete(c, &configmaps, ns, "precond", &wrong_uid, NULL, &st),
                             -ESTALE);
                cr_assert_eq(st.http_code, 409);
                cr_assert(strstr(st.message, "precondition"), "%s", st.message);
                cr_assert_eq(kube_delete(c, &configmaps, ns, "precond", &wrong_rv, NULL, &st),
                             -ESTALE);
                cr_assert_eq(kube_get(c, &configmaps, ns, "precond", NULL, &st), 0,
                             "still there after failed preconditions");
                cr_assert_eq(kube_delete(c, &configmaps, ns, "precond", &right, &gone, &st), 0,
                             "%s", st.message);
                cr_assert_not_null(gone, "DELETE answers with an object or a Status");
                json_decref(gone);
        }
        /* Foreground with no dependents: the GC (kcm) removes the finalizer quickly; without kcm
         * the object stays with deletionTimestamp set. Either way it is being deleted. */
        {
                json_t *o = NULL;
                int r = kube_get(c, &configmaps, ns, "precond", &o, &st);

                cr_assert(r == -ENOENT || (r == 0 &&
                                           json_get_path(o, "metadata", "deletionTimestamp", NULL)),
                          "deleted or being deleted (r=%d)", r);
                json_decref(o);
        }
        free(uid);
        free(rv);
        json_decref(cm);
        json_decref(created);
}

static json_t *gadget_crd(void)
{
        json_t *crd = json_loads(
                "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
                "\"metadata\":{\"name\":\"gadgets.it.modelplane.dev\"},"
                "\"spec\":{\"group\":\"it.modelplane.dev\",\"scope\":\"Namespaced\","
                "\"names\":{\"plural\":\"gadgets\",\"singular\":\"gadget\",\"kind\":\"Gadget\","
                "\"listKind\":\"GadgetList\"},"
                "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
                "\"subresources\":{\"status\":{}},"
                "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{"
                "\"spec\":{\"type\":\"object\",\"properties\":{\"size\":{\"type\":\"integer\","
                "\"minimum\":0}}},"
                "\"status\":{\"type\":\"object\",\"properties\":{\"phase\":{\"type\":\"string\"}}}"
                "}}}}]}}",
                0, NULL);

        cr_assert_not_null(crd);
        return crd;
}

Test(apiserver_client, crd_object_crud_and_status_subresource)
{
        json_t *crd = gadget_crd();
        json_t *g = json_pack("{s:s, s:s, s:{s:s}, s:{s:i}}", "apiVersion", "it.modelplane.dev/v1",
                              "kind", "Gadget", "metadata", "name", "g1", "spec", "size", 3);
        json_t *bad = json_pack("{s:s, s:s, s:{s:s}, s:{s:i}}", "apiVersion",
                                "it.modelplane.dev/v1", "kind", "Gadget", "metadata", "name", "g2",
                                "spec", "size", -1);
        json_t *obj = NULL, *out = NULL, *list = NULL;
        json_t *status_patch = json_pack("{s:{s:s}}", "status", "phase", "Patched");
        struct kube_write_options status = { .subresource = "status" };
        struct kube_status st;

        it_crd_install(c, crd);

        cr_assert_eq(kube_create(c, &gadgets, ns, g, NULL, &obj, &st), 0, "%s", st.message);
        cr_assert_eq(kube_create(c, &gadgets, ns, bad, NULL, NULL, &st), -EINVAL,
                     "schema validation: 422 Invalid");
        cr_assert_eq(st.http_code, 422);
        cr_assert_str_eq(st.reason, "Invalid");
        cr_assert(strstr(st.message, "spec.size"), "the message names the field: %s", st.message);

        /* status through the main resource is ignored; through /status it sticks */
        cr_assert_eq(json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Ignored")), 0);
        cr_assert_eq(kube_update(c, &gadgets, ns, "g1", obj, NULL, &out, &st), 0, "%s", st.message);
        cr_assert_null(json_get_path(out, "status", "phase", NULL),
                       "status is not written through the main resource");
        json_decref(obj);
        obj = out;
        out = NULL;

        cr_assert_eq(json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Ready")), 0);
        cr_assert_eq(json_object_set_new(json_object_get(obj, "spec"), "size", json_integer(99)),
                     0);
        cr_assert_eq(kube_update(c, &gadgets, ns, "g1", obj, &status, &out, &st), 0, "%s",
                     st.message);
        cr_assert_str_eq(json_string_value(json_get_path(out, "status", "phase", NULL)), "Ready");
        cr_assert_eq(json_integer_value(json_get_path(out, "spec", "size", NULL)), 3,
                     "spec is not written through /status");
        json_decref(out);
        out = NULL;

        cr_assert_eq(kube_update(c, &gadgets, ns, "g1", obj, &status, NULL, &st), -ESTALE,
                     "a stale status update conflicts too");

        cr_assert_eq(kube_patch(c, &gadgets, ns, "g1", KUBE_PATCH_MERGE, status_patch, &status,
                                &out, &st),
                     0, "%s", st.message);
        cr_assert_str_eq(json_string_value(json_get_path(out, "status", "phase", NULL)), "Patched");
        json_decref(out);
        out = NULL;

        cr_assert_eq(kube_list(c, &gadgets, ns, NULL, &list, &st), 0, "%s", st.message);
        cr_assert_eq(count_items(list), 1);
        cr_assert_str_eq(json_string_value(json_object_get(list, "kind")), "GadgetList");

        cr_assert_eq(kube_delete(c, &gadgets, ns, "g1", NULL, NULL, &st), 0, "%s", st.message);
        cr_assert_eq(kube_get(c, &gadgets, ns, "g1", NULL, &st), -ENOENT);

        json_decref(list);
        json_decref(obj);
        json_decref(crd);
        json_decref(g);
        json_decref(bad);
        json_decref(status_patch);
}

/* ---- watch ---- */

struct seen {
        pthread_mutex_t lock;
        char events[16][64];
        size_t n;
        atomic_bool cancel;
};

static int on_event(void *userdata, const char *type, json_t *object)
{
        struct seen *s = userdata;
        const char *name = json_string_value(json_get_path(object, "metadata", "name", NULL));
        const char *v = json_string_value(json_get_path(object, "data", "k", NULL));

        if (streq(type, "BOOKMARK"))
                return 0;
        pthread_mutex_lock(&s->lock);
        if (s->n < ELEMENTSOF(s->events))
                (void)snprintf(s->events[s->n++], sizeof(s->events[0]), "%s %s %s", type,
                               name ? name : "?", v ? v : "-");
        pthread_mutex_unlock(&s->lock);
        if (streq(type, "DELETED"))
                atomic_store(&s->cancel, true);
        return 0;
}

struct watcher {
        struct kube_client *client;
        const char *ns;
        const char *rv;
        struct seen *seen;
        struct kube_status st;
        int result;
};

static void *watch_main(void *arg)
{
        struct watcher *w = arg;
        struct kube_watch_options wo = { .resource_version = w->rv,
                                         .allow_bookmarks = true,
                                         .timeout_seconds = 120,
                                         .cancel = &w->seen->cancel };

        w->result = kube_watch(w->client, &configmaps, w->ns, &wo, on_event, w->seen, &w->st);
        return NULL;
}

Test(apiserver_client, watch_sees_added_modified_deleted_in_order)
{
        struct seen seen = { .lock = PTHREAD_MUTEX_INITIALIZER };
        struct watcher w = { .ns = ns, .seen = &seen };
        json_t *list = NULL, *cm = configmap("watched", "k", "1"), *obj = NULL, *out = NULL;
        struct kube_status st;
        pthread_t t;
        char *rv;

        cr_assert_eq(kube_list(c, &configmaps, ns, NULL, &list, &st), 0, "%s", st.message);
        rv = strdup(json_string_value(json_get_path(list, "metadata", "resourceVersion", NULL)));
        w.rv = rv;
        cr_assert_eq(kube_client_dup(c, &w.client), 0);
        cr_assert_eq(pthread_create(&t, NULL, watch_main, &w), 0);

        cr_assert_eq(kube_create(c, &configmaps, ns, cm, NULL, &obj, &st), 0, "%s", st.message);
        cr_assert_eq(json_object_set_new(json_object_get(obj, "data"), "k", json_string("2")), 0);
        cr_assert_eq(kube_update(c, &configmaps, ns, "watched", obj, NULL, &out, &st), 0);
        cr_assert_eq(kube_delete(c, &configmaps, ns, "watched", NULL, NULL, &st), 0);

        pthread_join(t, NULL);
        cr_assert_eq(w.result, -ECANCELED, "the watch ends through the cancel flag: %d %s",
                     w.result, w.st.message);
        cr_assert_eq(seen.n, 3, "expected 3 events, got %zu", seen.n);
        cr_assert_str_eq(seen.events[0], "ADDED watched 1");
        cr_assert_str_eq(seen.events[1], "MODIFIED watched 2");
        cr_assert_str_eq(seen.events[2], "DELETED watched 2");

        kube_client_free(w.client);
        free(rv);
        json_decref(list);
        json_decref(cm);
        json_decref(obj);
        json_decref(out);
}

static int count_event(void *userdata, const char *type, json_t *object)
{
        (*(unsigned *)userdata)++;
        return 0;
}

Test(apiserver_client, watch_server_timeout_ends_cleanly)
{
        struct kube_watch_options wo = { .timeout_seconds = 1 };
        unsigned n = 0;
        struct kube_status st;
        json_t *cm = configmap("pre", "k", "v");

        cr_assert_eq(kube_create(c, &configmaps, ns, cm, NULL, NULL, &st), 0, "%s", st.message);
        /* no resourceVersion: synthetic ADDED for what exists, then the server closes */
        cr_assert_eq(kube_watch(c, &configmaps, ns, &wo, count_event, &n, &st), 0, "%s",
                     st.message);
        cr_assert_eq(n, 1);
        json_decref(cm);
}

static char *b64(const char *s)
{
        static const char tbl[] =
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        size_t n = strlen(s), o = 0;
        char *out = malloc(n / 3 * 4 + 8);

        cr_assert_not_null(out);
        for (size_t i = 0; i < n; i += 3) {
                unsigned v = (unsigned char)s[i] << 16;

                if (i + 1 < n)
                        v |= (unsigned char)s[i + 1] << 8;
                if (i + 2 < n)
                        v |= (unsigned char)s[i + 2];
                out[o++] = tbl[(v >> 18) & 63];
                out[o++] = tbl[(v >> 12) & 63];
                out[o++] = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
                out[o++] = i + 2 < n ? tbl[v & 63] : '=';
        }
        out[o] = '\0';
        return out;
}

/* Loads a kubeconfig written to a temp file and GETs namespace default with it. */
static int get_with_kubeconfig(const char *yaml, struct kube_status *st)
{
        static const struct gvr namespaces = { "", "v1", "namespaces" };
        char path[] = "/tmp/it-kubeconfig-XXXXXX";
        struct kube_config_options o = { .kubeconfig_path = path };
        struct kube_config *k = NULL;
        struct kube_client *kc = NULL;
        struct error_detail kerr = { 0 };
        const char *err = kerr.message;
        int fd = mkstemp(path), r;
        FILE *f;

        cr_assert_geq(fd, 0);
        f = fdopen(fd, "w");
        cr_assert_not_null(f);
        cr_assert_geq(fputs(yaml, f), 0);
        cr_assert_eq(fclose(f), 0);
        r = kube_config_load(&o, &k, &kerr);
        (void)unlink(path);
        cr_assert_eq(r, 0, "%s", err);
        cr_assert_eq(kube_client_new(k, NULL, &kc), 0);
        r = kube_get(kc, &namespaces, NULL, "default", NULL, st);
        kube_client_free(kc);
        kube_config_free(k);
        return r;
}

Test(apiserver_client, inline_credentials_and_tls_verification)
{
        char *ca = b64(cfg->ca_pem), *cert = b64(cfg->client_cert_pem),
             *key = b64(cfg->client_key_pem);
        struct kube_status st;
        char *yaml;

        cr_assert(cfg->client_cert_pem && cfg->client_key_pem, "testenv admin uses a certificate");

        /* everything inline (*-data) */
        cr_assert_gt(asprintf(&yaml,
                              "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
                              "clusters:\n- name: c\n  cluster:\n    server: %s\n"
                              "    certificate-authority-data: %s\n"
                              "users:\n- name: u\n  user:\n    client-certificate-data: %s\n"
                              "    client-key-data: %s\n"
                              "contexts:\n- name: x\n  context: {cluster: c, user: u}\n",
                              cfg->server, ca, cert, key),
                     0);
        cr_assert_eq(get_with_kubeconfig(yaml, &st), 0, "inline credentials: %s", st.message);
        free(yaml);

        /* no CA: the testenv CA is not in the system trust store, so TLS verification fails */
        cr_assert_gt(asprintf(&yaml,
                              "current-context: x\n"
                              "clusters:\n- name: c\n  cluster:\n    server: %s\n"
                              "users:\n- name: u\n  user:\n    client-certificate-data: %s\n"
                              "    client-key-data: %s\n"
                              "contexts:\n- name: x\n  context: {cluster: c, user: u}\n",
                              cfg->server, cert, key),
                     0);
        cr_assert_eq(get_with_kubeconfig(yaml, &st), -EIO, "verification is on by default");
        cr_assert_eq(st.http_code, 0);
        cr_assert(strstr(st.message, "certificate"), "%s", st.message);
        free(yaml);

        /* ... unless the kubeconfig says insecure-skip-tls-verify */
        cr_assert_gt(asprintf(&yaml,
                              "current-context: x\n"
                              "clusters:\n- name: c\n  cluster:\n    server: %s\n"
                              "    insecure-skip-tls-verify: true\n"
                              "users:\n- name: u\n  user:\n    client-certificate-data: %s\n"
                              "    client-key-data: %s\n"
                              "contexts:\n- name: x\n  context: {cluster: c, user: u}\n",
                              cfg->server, cert, key),
                     0);
        cr_assert_eq(get_with_kubeconfig(yaml, &st), 0, "insecure: %s", st.message);
        free(yaml);

        /* no user at all: anonymous requests are 401 or 403 depending on the server's flags */
        cr_assert_gt(asprintf(&yaml,
                              "current-context: x\n"
                              "clusters:\n- name: c\n  cluster:\n    server: %s\n"
                              "    certificate-authority-data: %s\n"
                              "contexts:\n- name: x\n  context: {cluster: c}\n",
                              cfg->server, ca),
                     0);
        cr_assert_eq(get_with_kubeconfig(yaml, &st), -EACCES, "%s", st.message);
        free(yaml);
        free(ca);
        free(cert);
        free(key);
}
