/* SPDX-License-Identifier: Apache-2.0 */
#include "it-helpers.h"

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json/json-util.h"

struct kube_client *it_client(struct kube_config **ret_cfg)
{
        struct kube_config_options o = { 0 };
        struct kube_config *cfg = NULL;
        struct kube_client *c = NULL;
        struct error_detail kerr = { 0 };
        const char *err = kerr.message;
        const char *path = getenv("MODELPLANE_KUBECONFIG");

        if (!path || !*path)
                cr_skip_test("MODELPLANE_KUBECONFIG is not set (run under scripts/with-testenv)");
        o.kubeconfig_path = path;
        cr_assert_eq(kube_config_load(&o, &cfg, &kerr), 0, "%s", err);
        cr_assert_eq(kube_client_new(cfg, NULL, &c), 0);
        if (ret_cfg)
                *ret_cfg = cfg;
        else
                kube_config_free(cfg);
        return c;
}

struct kube_client *it_client_with_token(const struct kube_config *admin, const char *token)
{
        struct kube_config cfg = {
                .server = admin->server,
                .ca_pem = admin->ca_pem,
                .token = (char *)token,
                .namespace = (char *)"default",
        };
        struct kube_client *c = NULL;

        cr_assert_eq(kube_client_new(&cfg, NULL, &c), 0);
        return c;
}

static const struct gvr namespaces = { "", "v1", "namespaces" };

void it_namespace_create(struct kube_client *c, const char *prefix, char *buf, size_t len)
{
        static atomic_uint counter;
        struct kube_status st;
        json_t *ns;
        int r;

        (void)snprintf(buf, len, "%s-%ld-%u", prefix, (long)getpid(),
                       atomic_fetch_add(&counter, 1));
        ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace", "metadata",
                       "name", buf);
        r = kube_create(c, &namespaces, NULL, ns, NULL, NULL, &st);
        json_decref(ns);
        cr_assert_eq(r, 0, "create namespace %s: %s", buf, st.message);
}

void it_namespace_delete(struct kube_client *c, const char *ns)
{
        (void)!kube_delete(c, &namespaces, NULL, ns, NULL, NULL, NULL);
}

static void sleep_ms(long ms)
{
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

        (void)nanosleep(&ts, NULL);
}

static bool crd_established(const json_t *crd)
{
        json_t *conds = json_get_path(crd, "status", "conditions", NULL);
        size_t i;
        json_t *cond;

        json_array_foreach(conds, i, cond) {
                const char *type = json_string_value(json_object_get(cond, "type"));
                const char *status = json_string_value(json_object_get(cond, "status"));

                if (type && status && streq(type, "Established") && streq(status, "True"))
                        return true;
        }
        return false;
}

static bool discovery_serves(struct kube_client *c, const char *group, const char *version,
                             const char *plural)
{
        char path[512];
        json_t *list = NULL, *res;
        bool found = false;
        size_t i;

        (void)snprintf(path, sizeof(path), "/apis/%s/%s", group, version);
        if (kube_request(c, "GET", path, NULL, NULL, &list, NULL) < 0)
                return false;
        json_array_foreach(json_object_get(list, "resources"), i, res) {
                const char *n = json_string_value(json_object_get(res, "name"));

                if (n && streq(n, plural))
                        found = true;
        }
        json_decref(list);
        return found;
}

void it_crd_install(struct kube_client *c, const json_t *crd)
{
        static const struct gvr crds = { "apiextensions.k8s.io", "v1",
                                         "customresourcedefinitions" };
        const char *name = json_string_value(json_get_path(crd, "metadata", "name", NULL));
        const char *group = json_string_value(json_get_path(crd, "spec", "group", NULL));
        const char *plural = json_string_value(json_get_path(crd, "spec", "names", "plural", NULL));
        struct kube_status st;
        json_t *v, *version;
        size_t i;
        int r;

        cr_assert(name && group && plural, "CRD needs metadata.name, spec.group, names.plural");
        r = kube_create(c, &crds, NULL, crd, NULL, NULL, &st);
        cr_assert(r == 0 || r == -EEXIST, "create CRD %s: %d %s", name, r, st.message);

        for (int tries = 0;; tries++) {
                json_t *got = NULL;
                bool ok;

                cr_assert_eq(kube_get(c, &crds, NULL, name, &got, &st), 0, "%s", st.message);
                ok = crd_established(got);
                json_decref(got);
                if (ok)
                        break;
                cr_assert_lt(tries, 600, "CRD %s not Established after 60 s", name);
                sleep_ms(100);
        }

        json_array_foreach(json_get_path(crd, "spec", "versions", NULL), i, version) {
                const char *vn = json_string_value(json_object_get(version, "name"));

                v = json_object_get(version, "served");
                if (!vn || (v && !json_is_true(v)))
                        continue;
                for (int tries = 0; !discovery_serves(c, group, vn, plural); tries++) {
                        cr_assert_lt(tries, 600, "%s.%s/%s not in discovery after 60 s", plural,
                                     group, vn);
                        sleep_ms(100);
                }
        }
}

char *it_serviceaccount_token(struct kube_client *c, const char *ns, const char *name)
{
        static const struct gvr sas = { "", "v1", "serviceaccounts" };
        json_t *sa, *req, *resp = NULL;
        struct kube_status st;
        char path[512];
        char *token;
        int r;

        sa = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "ServiceAccount",
                       "metadata", "name", name);
        r = kube_create(c, &sas, ns, sa, NULL, NULL, &st);
        json_decref(sa);
        cr_assert(r == 0 || r == -EEXIST, "create ServiceAccount %s/%s: %s", ns, name, st.message);

        (void)snprintf(path, sizeof(path), "/api/v1/namespaces/%s/serviceaccounts/%s/token", ns,
                       name);
        req = json_pack("{s:s, s:s, s:{s:i}}", "apiVersion", "authentication.k8s.io/v1", "kind",
                        "TokenRequest", "spec", "expirationSeconds", 3600);
        r = kube_request(c, "POST", path, NULL, req, &resp, &st);
        json_decref(req);
        cr_assert_eq(r, 0, "TokenRequest for %s/%s: %s", ns, name, st.message);
        token = strdup(json_string_value(json_get_path(resp, "status", "token", NULL)));
        json_decref(resp);
        cr_assert_not_null(token);
        return token;
}
