/* SPDX-License-Identifier: Apache-2.0 */
/* Who may use the registry and the catalog: the Service reference, the review, the cache. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "ui/access.h"

static struct ui_service_ref ref(const char *s)
{
        struct ui_service_ref r;

        cr_assert_eq(ui_service_ref_parse(s, &r), 0, "%s", s);
        return r;
}

Test(service_ref, parse)
{
        struct ui_service_ref r = ref("kubeflow/model-registry-service");
        static const char *const bad[] = {
                "",
                "kubeflow",
                "/name",
                "ns/",
                "ns/a/b",
                "NS/name",
                "ns/na_me",
                "-ns/name",
                "ns/name-",
                "ns/na.me",
                "ns /name",
                "ns/name\n",
                "a234567890123456789012345678901234567890123456789012345678901234/x",
        };

        cr_assert_str_eq(r.ns, "kubeflow");
        cr_assert_str_eq(r.name, "model-registry-service");
        r = ref("a23456789012345678901234567890123456789012345678901234567890123/b");
        cr_assert_eq(strlen(r.ns), 63);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                cr_assert_eq(ui_service_ref_parse(bad[i], &r), -EINVAL, "'%s'", bad[i]);
        cr_assert_eq(ui_service_ref_parse(NULL, &r), -EINVAL);
}

Test(service_ref, from_url)
{
        struct ui_service_ref r;
        static const char *const none[] = {
                "http://127.0.0.1:8080",
                "http://localhost:8080",
                "https://example.com",
                "http://a.b.svcx:80",
                "http://registry.team-a",
                "http://x.y.svc-like.z",
                "not a url",
                "http://UPPER.ns.svc:80",
                "http://.ns.svc",
        };

        cr_assert_eq(ui_service_ref_from_url("http://model-registry-service.kubeflow.svc:8080", "x",
                                             &r),
                     0);
        cr_assert_str_eq(r.ns, "kubeflow");
        cr_assert_str_eq(r.name, "model-registry-service");
        cr_assert_eq(ui_service_ref_from_url("https://cat.team-a.svc.cluster.local/api", NULL, &r),
                     0);
        cr_assert_str_eq(r.ns, "team-a");
        cr_assert_str_eq(r.name, "cat");
        cr_assert_eq(ui_service_ref_from_url("http://reg.ns.svc", NULL, &r), 0);
        for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
                cr_assert_eq(ui_service_ref_from_url(none[i], NULL, &r), -ENOENT, "%s", none[i]);
        cr_assert_eq(ui_service_ref_from_url(NULL, "ns", &r), -ENOENT);
        /* a short host name is a Service of the server's own namespace */
        cr_assert_eq(ui_service_ref_from_url("http://model-catalog:8080", "mp-system", &r), 0);
        cr_assert_str_eq(r.ns, "mp-system");
        cr_assert_str_eq(r.name, "model-catalog");
        cr_assert_eq(ui_service_ref_from_url("http://model-catalog:8080", NULL, &r), -ENOENT);
        cr_assert_eq(ui_service_ref_from_url("http://Upper:8080", "ns", &r), -ENOENT);
        cr_assert_eq(ui_service_ref_from_url("http://localhost:8080", "ns", &r), -ENOENT);
}

Test(review, proxy_user_is_a_subject_access_review)
{
        char g0[] = "team-a", g1[] = "ml";
        char *g[] = { g0, g1 };
        struct ui_identity id = { .mode = UI_AUTH_PROXY, .user = "alice", .n_groups = 2 };
        struct ui_service_ref svc = ref("kubeflow/model-registry-service");
        json_t *b, *ra;

        id.groups[0] = g[0];
        id.groups[1] = g[1];
        b = ui_access_review_body(&id, &svc);
        cr_assert_not_null(b);
        cr_assert_str_eq(json_string_value(json_object_get(b, "kind")), "SubjectAccessReview");
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(b, "spec"), "user")),
                         "alice");
        cr_assert_eq(json_array_size(json_object_get(json_object_get(b, "spec"), "groups")), 2);
        ra = json_object_get(json_object_get(b, "spec"), "resourceAttributes");
        cr_assert_str_eq(json_string_value(json_object_get(ra, "verb")), "get");
        cr_assert_str_eq(json_string_value(json_object_get(ra, "resource")), "services");
        cr_assert_str_eq(json_string_value(json_object_get(ra, "group")), "");
        cr_assert_str_eq(json_string_value(json_object_get(ra, "namespace")), "kubeflow");
        cr_assert_str_eq(json_string_value(json_object_get(ra, "name")), "model-registry-service");
        cr_assert_str_eq(ui_access_review_path(&id),
                         "/apis/authorization.k8s.io/v1/subjectaccessreviews");
        json_decref(b);
}

Test(review, bearer_is_a_self_review_without_user)
{
        char tok[] = "tok";
        struct ui_identity id = { .mode = UI_AUTH_BEARER, .token = tok };
        struct ui_service_ref svc = ref("ns/cat");
        json_t *b = ui_access_review_body(&id, &svc);

        cr_assert_str_eq(json_string_value(json_object_get(b, "kind")), "SelfSubjectAccessReview");
        cr_assert_null(json_object_get(json_object_get(b, "spec"), "user"));
        cr_assert_null(json_object_get(json_object_get(b, "spec"), "groups"));
        cr_assert_str_eq(ui_access_review_path(&id),
                         "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews");
        json_decref(b);
}

Test(review, only_true_allows)
{
        json_t *yes = json_loads("{\"status\":{\"allowed\":true}}", 0, NULL);
        json_t *no = json_loads("{\"status\":{\"allowed\":false,\"denied\":true}}", 0, NULL);
        json_t *odd = json_loads("{\"status\":{\"allowed\":\"true\"}}", 0, NULL);
        json_t *none = json_loads("{}", 0, NULL);

        cr_assert(ui_access_review_allowed(yes));
        cr_assert_not(ui_access_review_allowed(no));
        cr_assert_not(ui_access_review_allowed(odd));
        cr_assert_not(ui_access_review_allowed(none));
        cr_assert_not(ui_access_review_allowed(NULL));
        json_decref(yes);
        json_decref(no);
        json_decref(odd);
        json_decref(none);
}

Test(review, refusal_names_user_permission_and_place)
{
        struct ui_service_ref svc = ref("kubeflow/model-registry-service");
        char msg[512];

        ui_access_refusal("bob", "the model registry \"modelplane\"", &svc, msg, sizeof(msg));
        cr_assert(strstr(msg, "user \"bob\" may not use the model registry \"modelplane\""), "%s",
                  msg);
        cr_assert(strstr(msg, "\"model-registry-service\" in namespace \"kubeflow\""), "%s", msg);
        cr_assert(strstr(msg, "get on services/model-registry-service"), "%s", msg);
        ui_access_refusal("", "the model catalog", &svc, msg, sizeof(msg));
        cr_assert(strncmp(msg, "you may not use the model catalog", 33) == 0, "%s", msg);
}

static void key_of(struct ui_identity *id, const char *svc, uint8_t k[UI_ACCESS_KEY_SIZE])
{
        struct ui_service_ref s = ref(svc);

        cr_assert_eq(ui_access_key(id, &s, k), 0);
}

Test(key, tells_identities_and_services_apart)
{
        char a_[] = "a", b_[] = "b", tok1[] = "t1", tok2[] = "t2";
        char *ga[] = { a_, b_ }, *gb[] = { b_, a_ }, *gc[] = { a_ };
        struct ui_identity alice = { .mode = UI_AUTH_PROXY, .user = "alice" };
        struct ui_identity alice2 = alice, alice3 = alice,
                           bob = { .mode = UI_AUTH_PROXY, .user = "bob" };
        struct ui_identity dev = { .mode = UI_AUTH_DEV, .user = "alice" };
        struct ui_identity t1 = { .mode = UI_AUTH_BEARER, .token = tok1 };
        struct ui_identity t2 = { .mode = UI_AUTH_BEARER, .token = tok2 };
        uint8_t k[8][UI_ACCESS_KEY_SIZE];

        alice.groups[0] = ga[0];
        alice.groups[1] = ga[1];
        alice.n_groups = 2;
        alice2.groups[0] = gb[0];
        alice2.groups[1] = gb[1];
        alice2.n_groups = 2;
        alice3.groups[0] = gc[0];
        alice3.n_groups = 1;
        key_of(&alice, "ns/reg", k[0]);
        key_of(&alice2, "ns/reg", k[1]);
        cr_assert_eq(memcmp(k[0], k[1], UI_ACCESS_KEY_SIZE), 0, "group order does not matter");
        key_of(&alice3, "ns/reg", k[2]);
        key_of(&bob, "ns/reg", k[3]);
        key_of(&alice, "ns/cat", k[4]);
        key_of(&dev, "ns/reg", k[5]);
        key_of(&t1, "ns/reg", k[6]);
        key_of(&t2, "ns/reg", k[7]);
        for (size_t i = 1; i < 8; i++)
                for (size_t j = i + 1; j < 8; j++)
                        cr_assert_neq(memcmp(k[i], k[j], UI_ACCESS_KEY_SIZE), 0, "%zu vs %zu", i,
                                      j);
        cr_assert_neq(memcmp(k[0], k[2], UI_ACCESS_KEY_SIZE), 0, "fewer groups, other key");
}

Test(cache, expiry_and_overwrite)
{
        struct ui_access_cache *c = NULL;
        uint8_t a[UI_ACCESS_KEY_SIZE] = { 1 }, b[UI_ACCESS_KEY_SIZE] = { 2 };

        cr_assert_eq(ui_access_cache_new(64, 10 * USEC_PER_SEC, 2 * USEC_PER_SEC, &c), 0);
        cr_assert_eq(ui_access_cache_get(c, a, 1000), -ENOENT);
        ui_access_cache_put(c, a, true, 1000);
        ui_access_cache_put(c, b, false, 1000);
        cr_assert_eq(ui_access_cache_get(c, a, 1000 + 9 * USEC_PER_SEC), 1);
        cr_assert_eq(ui_access_cache_get(c, a, 1000 + 10 * USEC_PER_SEC), -ENOENT, "allowed ttl");
        cr_assert_eq(ui_access_cache_get(c, b, 1000 + USEC_PER_SEC), 0);
        cr_assert_eq(ui_access_cache_get(c, b, 1000 + 2 * USEC_PER_SEC), -ENOENT, "denied ttl");
        /* a revoked permission replaces the allowed answer at once */
        ui_access_cache_put(c, a, false, 2000);
        cr_assert_eq(ui_access_cache_get(c, a, 2001), 0);
        ui_access_cache_free(c);
}

Test(cache, bounded_and_drops_what_expires_first)
{
        struct ui_access_cache *c = NULL;
        uint8_t k[UI_ACCESS_KEY_SIZE] = { 0 };
        unsigned hits = 0;

        /* one set of four: the fifth key drops the one that expires first */
        cr_assert_eq(ui_access_cache_new(4, 10 * USEC_PER_SEC, 10 * USEC_PER_SEC, &c), 0);
        for (unsigned i = 0; i < 5; i++) {
                k[8] = (uint8_t)i;
                ui_access_cache_put(c, k, true, 1000 + i);
        }
        for (unsigned i = 0; i < 5; i++) {
                k[8] = (uint8_t)i;
                hits += ui_access_cache_get(c, k, 2000) == 1;
                if (i == 0)
                        cr_assert_eq(ui_access_cache_get(c, k, 2000), -ENOENT, "oldest dropped");
        }
        cr_assert_eq(hits, 4);
        ui_access_cache_free(c);
        cr_assert_null(ui_access_cache_free(NULL));
}

Test(cache, zero_ttl_caches_nothing)
{
        struct ui_access_cache *c = NULL;
        uint8_t k[UI_ACCESS_KEY_SIZE] = { 7 };

        cr_assert_eq(ui_access_cache_new(16, 0, 0, &c), 0);
        ui_access_cache_put(c, k, true, 5);
        cr_assert_eq(ui_access_cache_get(c, k, 5), -ENOENT);
        ui_access_cache_free(c);
}
