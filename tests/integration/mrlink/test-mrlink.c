/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The InferenceService <-> model registry controller (docs/mrlink.md, spec A.11/A.12) against a
 * real kube-apiserver (+ kube-controller-manager) and a real `modelplane registry` on loopback
 * (SQLite in a temp dir), with the real `modelplane controller` authenticated as the shipped
 * RBAC's ServiceAccount (helpers of tests/integration/serving).
 *
 * The registry listens on 127.0.0.1, not behind a Service: cases that resolve the registry from
 * a Service map the in-cluster URL the controller resolved ("http://<svc>.<ns>.svc.cluster.local:
 * <http-api port>" or "https://<external address>") to the loopback registry with
 * MODELPLANE_MRLINK_TEST_URL_REWRITE (exact match): a wrong resolution finds no registry, and the
 * test fails.
 *
 * The https_* cases run the registry with --tls-cert-file/--tls-key-file, a test CA and a server
 * certificate for 127.0.0.1/localhost made by tests/webhook/gen-certs.sh (openssl CLI), and give
 * the controller that CA with SSL_CERT_FILE / SSL_CERT_DIR — or not, or SKIP_TLS_VERIFY.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "json/json-util.h"
#include "registry-client/client.h"

#define ISID      "modelregistry.kubeflow.org/inference-service-id"
#define RMID      "modelregistry.kubeflow.org/registered-model-id"
#define MVID      "modelregistry.kubeflow.org/model-version-id"
#define NAME_L    "modelregistry.kubeflow.org/name"
#define NS_L      "modelregistry.kubeflow.org/namespace"
#define URL_A     "modelregistry.kubeflow.org/url"
#define FINALIZER "modelregistry.kubeflow.org/finalizer"
#define EXT_A     "routing.kubeflow.org/external-address-rest"

static const struct gvr gvr_services = { "", "v1", "services" };
static const struct gvr gvr_events = { "", "v1", "events" };
static const struct gvr gvr_ns = { "", "v1", "namespaces" };

/* ---- a real `modelplane registry` ---- */

struct reg {
        pid_t pid;
        unsigned port;
        char dir[256];
        char db[320];
        char url[64];
        bool tls;     /* serve HTTPS with the certificates below */
        char ca[320]; /* the test CA (PEM) that signed cert */
        char cert[320], key[320];
};

static unsigned free_port(void)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        cr_assert(fd >= 0);
        cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
        close(fd);
        return ntohs(a.sin_port);
}

static json_t *reg_call(struct reg *g, const char *method, const char *path, json_t *body,
                        int *ret_code)
{
        struct mr_client *c = NULL;
        struct error_detail e = { 0 };
        json_t *out = NULL;
        int r;

        cr_assert_eq(mr_client_new(&(struct mr_client_config){ .base_url = g->url,
                                                               .timeout_ms = 5000,
                                                               .ca_file = g->tls ? g->ca : NULL },
                                   &c),
                     0);
        r = mr_client_call(c, method, path, body, &out, &e);
        mr_client_free(c);
        if (ret_code)
                *ret_code = r;
        return r > 0 ? out : NULL;
}

static bool reg_up(struct reg *g)
{
        json_t *j = reg_call(g, "GET", "/registered_models", NULL, NULL);
        bool up = j != NULL;

        json_decref(j);
        return up;
}

/* runs tests/webhook/gen-certs.sh DIR NAME SERIAL: DIR/ca.crt (once) + DIR/NAME.{crt,key} */
static void gen_certs(const char *dir, const char *name, const char *serial)
{
        const char *src = getenv("MODELPLANE_SOURCE_ROOT");
        char script[512];
        pid_t pid;
        int status;

        cr_assert(src && *src, "MODELPLANE_SOURCE_ROOT is not set");
        if (system("command -v openssl >/dev/null 2>&1") != 0)
                cr_skip_test("openssl CLI not installed");
        (void)snprintf(script, sizeof(script), "%s/tests/webhook/gen-certs.sh", src);
        pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                execlp("bash", "bash", script, dir, name, serial, (char *)NULL);
                _exit(127);
        }
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s %s %s failed", script, dir,
                  name);
}

static void reg_start(struct reg *g)
{
        const char *bin = getenv("MODELPLANE_BIN");
        char port[16], log[400];
        pid_t pid;

        cr_assert(bin && *bin, "MODELPLANE_BIN is not set");
        if (!g->dir[0]) {
                (void)snprintf(g->dir, sizeof(g->dir), "/tmp/mrlink-it-XXXXXX");
                cr_assert_not_null(mkdtemp(g->dir));
                (void)snprintf(g->db, sizeof(g->db), "%s/mr.db", g->dir);
                g->port = free_port();
                (void)snprintf(g->url, sizeof(g->url), "%s://127.0.0.1:%u",
                               g->tls ? "https" : "http", g->port);
                if (g->tls) {
                        char certs[300];

                        (void)snprintf(certs, sizeof(certs), "%s/certs", g->dir);
                        gen_certs(certs, "registry", "1001");
                        (void)snprintf(g->ca, sizeof(g->ca), "%s/ca.crt", certs);
                        (void)snprintf(g->cert, sizeof(g->cert), "%s/registry.crt", certs);
                        (void)snprintf(g->key, sizeof(g->key), "%s/registry.key", certs);
                }
        }
        (void)snprintf(port, sizeof(port), "%u", g->port);
        (void)snprintf(log, sizeof(log), "%s/registry.log", g->dir);
        pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
                        _exit(126);
                if (g->tls)
                        execl(bin, bin, "registry", "-n", "127.0.0.1", "-p", port, "-d", g->db,
                              "--tls-cert-file", g->cert, "--tls-key-file", g->key, (char *)NULL);
                else
                        execl(bin, bin, "registry", "-n", "127.0.0.1", "-p", port, "-d", g->db,
                              (char *)NULL);
                _exit(127);
        }
        g->pid = pid;
        SRV_WAIT(SRV_TIMEOUT, reg_up(g), "registry did not come up (log %s)", log);
}

static void reg_stop(struct reg *g)
{
        int status;

        if (g->pid <= 0)
                return;
        kill(g->pid, SIGTERM);
        for (int i = 0; i < 100; i++) {
                if (waitpid(g->pid, &status, WNOHANG) == g->pid) {
                        g->pid = 0;
                        return;
                }
                srv_sleep_ms(100);
        }
        kill(g->pid, SIGKILL);
        (void)waitpid(g->pid, &status, 0);
        g->pid = 0;
}

/* The registry's temporary directory (database, log, certificates) goes with the test. */
static void reg_remove_dir(struct reg *g)
{
        char cmd[400];

        if (!g->dir[0] || !strneq(g->dir, "/tmp/mrlink-it-", strlen("/tmp/mrlink-it-")))
                return;
        (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g->dir);
        (void)!system(cmd);
        g->dir[0] = '\0';
}

/* id of a created entity */
static void reg_create(struct reg *g, const char *path, json_t *body, char *id, size_t len)
{
        int code = 0;
        json_t *j = reg_call(g, "POST", path, body, &code);

        json_decref(body);
        cr_assert_not_null(j, "POST %s: %d", path, code);
        (void)snprintf(id, len, "%s", json_string_value(json_object_get(j, "id")));
        json_decref(j);
}

/* The record named "<isvc>/<uid>" (owned), NULL when absent. */
static json_t *reg_find_is(struct reg *g, const char *full_name)
{
        json_t *list = reg_call(g, "GET", "/inference_services?pageSize=1000", NULL, NULL), *it;
        json_t *found = NULL;
        size_t i;

        json_array_foreach(json_object_get(list, "items"), i, it) {
                const char *n = json_string_value(json_object_get(it, "name"));
                if (n && streq(n, full_name))
                        found = json_incref(it);
        }
        json_decref(list);
        return found;
}

static size_t reg_count(struct reg *g, const char *path)
{
        json_t *list = reg_call(g, "GET", path, NULL, NULL);
        size_t n = json_array_size(json_object_get(list, "items"));

        json_decref(list);
        return n;
}

static json_t *reg_get_is(struct reg *g, const char *id)
{
        char path[128];

        (void)snprintf(path, sizeof(path), "/inference_services/%s", id);
        return reg_call(g, "GET", path, NULL, NULL);
}

/* ---- one test's world ---- */

struct world {
        struct srv s;
        struct reg g;
        char rm[32], mv[32];
        char extra_ns[80]; /* a second namespace to delete at teardown */
};

static void set_env(const char *registries_ns, const char *rewrite, const char *undeploy_timeout)
{
        setenv("INFERENCE_SERVICE_CONTROLLER", "managed", 1);
        setenv("NAMESPACE_LABEL", NS_L, 1);
        setenv("NAME_LABEL", NAME_L, 1);
        setenv("URL_ANNOTATION", URL_A, 1);
        setenv("INFERENCE_SERVICE_ID_LABEL", ISID, 1);
        setenv("MODEL_VERSION_ID_LABEL", MVID, 1);
        setenv("REGISTERED_MODEL_ID_LABEL", RMID, 1);
        setenv("FINALIZER", FINALIZER, 1);
        setenv("SERVICE_ANNOTATION", EXT_A, 1);
        setenv("REGISTRIES_NAMESPACE", registries_ns, 1);
        setenv("SKIP_TLS_VERIFY", "false", 1);
        /* the trust store: libcurl's defaults unless a case sets these */
        unsetenv("SSL_CERT_FILE");
        unsetenv("SSL_CERT_DIR");
        if (rewrite)
                setenv("MODELPLANE_MRLINK_TEST_URL_REWRITE", rewrite, 1);
        else
                unsetenv("MODELPLANE_MRLINK_TEST_URL_REWRITE");
        if (undeploy_timeout)
                setenv("MODELPLANE_MRLINK_UNDEPLOY_TIMEOUT", undeploy_timeout, 1);
        else
                unsetenv("MODELPLANE_MRLINK_UNDEPLOY_TIMEOUT");
}

static void world_setup_tls(struct world *w, const char *prefix, bool tls)
{
        memset(w, 0, sizeof(*w));
        w->g.tls = tls;
        srv_setup(&w->s, prefix);
        reg_start(&w->g);
        reg_create(&w->g, "/registered_models", json_pack("{s:s}", "name", "mnist"), w->rm,
                   sizeof(w->rm));
        reg_create(&w->g, "/model_versions",
                   json_pack("{s:s,s:s}", "name", "v1", "registeredModelId", w->rm), w->mv,
                   sizeof(w->mv));
        set_env(w->s.ns, NULL, NULL);
}

static void world_setup(struct world *w, const char *prefix)
{
        world_setup_tls(w, prefix, false);
}

/* rewrite "http://<svc>.<ns>.svc.cluster.local:8080" to the loopback registry */
static void rewrite_service(struct world *w, const char *svc, const char *ns, char *buf, size_t len)
{
        (void)snprintf(buf, len, "http://%s.%s.svc.cluster.local:8080=%s", svc, ns, w->g.url);
}

static void drop_isvc_finalizers(struct srv *s, const char *ns)
{
        json_t *list = NULL, *it;
        size_t i;

        if (kube_list(s->c, &srv_gvr_isvc, ns, NULL, &list, NULL) < 0)
                return;
        json_array_foreach(json_object_get(list, "items"), i, it) {
                json_t *p = json_pack("{s:{s:n}}", "metadata", "finalizers");
                (void)!kube_patch(s->c, &srv_gvr_isvc, ns,
                                  json_get_string_path(it, "metadata", "name", NULL),
                                  KUBE_PATCH_MERGE, p, NULL, NULL, NULL);
                json_decref(p);
        }
        json_decref(list);
}

static void world_teardown(struct world *w)
{
        if (w->s.ctrl > 0)
                srv_controller_stop(&w->s);
        if (w->s.c) {
                drop_isvc_finalizers(&w->s, w->s.ns);
                if (w->extra_ns[0])
                        (void)!kube_delete(w->s.c, &gvr_ns, NULL, w->extra_ns, NULL, NULL, NULL);
        }
        reg_stop(&w->g);
        reg_remove_dir(&w->g);
        srv_teardown(&w->s);
}

static void create_ns(struct world *w, const char *name)
{
        json_t *ns = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                               "metadata", "name", name);
        struct kube_status st = { 0 };

        cr_assert_eq(kube_create(w->s.c, &gvr_ns, NULL, ns, NULL, NULL, &st), 0, "%s", st.message);
        json_decref(ns);
}

/* The fixture Service (labels app=metadata, component=model-registry; http-api 8080, grpc-api). */
static void service_create(struct world *w, const char *ns, const char *name, bool http_port,
                           json_t *annotations)
{
        json_t *svc = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s}},s:{s:[{s:s,s:i,s:s}],s:{s:s}}}",
                                "apiVersion", "v1", "kind", "Service", "metadata", "name", name,
                                "namespace", ns, "labels", "app", "metadata", "component",
                                "model-registry", "spec", "ports", "name", "grpc-api", "port", 9090,
                                "protocol", "TCP", "selector", "component",
                                "model-registry-server");
        struct kube_status st = { 0 };

        if (http_port)
                json_array_append_new(json_get_path(svc, "spec", "ports", NULL),
                                      json_pack("{s:s,s:i,s:s,s:s}", "name", "http-api", "port",
                                                8080, "protocol", "TCP", "appProtocol", "http"));
        if (annotations)
                json_object_set_new(json_object_get(svc, "metadata"), "annotations", annotations);
        cr_assert_eq(kube_create(w->s.c, &gvr_services, ns, svc, NULL, NULL, &st), 0, "%s",
                     st.message);
        json_decref(svc);
}

/* ISVC with the upstream fixture's predictor; labels/annotations stolen (may be NULL). */
static void isvc_create(struct world *w, const char *name, json_t *labels, json_t *annotations)
{
        json_t *o = json_pack("{s:s,s:s,s:{s:s},s:{s:{s:{s:{s:s},s:s,s:{s:s,s:s}}}}}", "apiVersion",
                              "serving.kserve.io/v1beta1", "kind", "InferenceService", "metadata",
                              "name", name, "spec", "predictor", "model", "modelFormat", "name",
                              "onnx", "runtime", "kserve-ovms", "storage", "key", "testkey", "path",
                              "/testpath/test");

        if (labels)
                json_object_set_new(json_object_get(o, "metadata"), "labels", labels);
        if (annotations)
                json_object_set_new(json_object_get(o, "metadata"), "annotations", annotations);
        srv_create(&w->s, &srv_gvr_isvc, o);
}

static char *isid_of(struct world *w, const char *name)
{
        return srv_label(&w->s, &srv_gvr_isvc, name, ISID);
}

static bool has_isid(struct world *w, const char *name)
{
        char *v = isid_of(w, name);
        bool ok = v && *v;

        free(v);
        return ok;
}

static bool has_finalizer(struct world *w, const char *name)
{
        json_t *o = srv_get(&w->s, &srv_gvr_isvc, name), *f;
        bool found = false;
        size_t i;

        json_array_foreach(json_get_path(o, "metadata", "finalizers", NULL), i, f)
                if (streq(json_string_value(f), FINALIZER))
                        found = true;
        json_decref(o);
        return found;
}

static char *uid_of(struct world *w, const char *name)
{
        json_t *o = srv_get(&w->s, &srv_gvr_isvc, name);
        char *u;

        cr_assert_not_null(o);
        u = strdup(json_get_string_path(o, "metadata", "uid", NULL));
        json_decref(o);
        return u;
}

static bool has_event(struct world *w, const char *ns, const char *obj, const char *reason,
                      const char *needle)
{
        char sel[256];
        json_t *list = NULL, *it;
        bool found = false;
        size_t i;

        (void)snprintf(sel, sizeof(sel), "involvedObject.name=%s", obj);
        if (kube_list(w->s.c, &gvr_events, ns, &(struct kube_list_options){ .field_selector = sel },
                      &list, NULL) < 0)
                return false;
        json_array_foreach(json_object_get(list, "items"), i, it) {
                const char *r = json_string_value(json_object_get(it, "reason"));
                const char *m = json_string_value(json_object_get(it, "message"));
                if (r && streq(r, reason) && (!needle || (m && strstr(m, needle))))
                        found = true;
        }
        json_decref(list);
        return found;
}

static const char *desired_state(json_t *rec)
{
        return json_string_value(json_object_get(rec, "desiredState"));
}

static bool record_state_is(struct world *w, const char *id, const char *state)
{
        json_t *rec = reg_get_is(&w->g, id);
        bool ok = rec && desired_state(rec) && streq(desired_state(rec), state);

        json_decref(rec);
        return ok;
}

static bool record_url_is(struct world *w, const char *id, const char *url)
{
        json_t *rec = reg_get_is(&w->g, id);
        const char *u = json_get_string_path(rec, "customProperties", "url", "string_value", NULL);
        bool ok = url ? (u && streq(u, url)) : (rec && !u);

        json_decref(rec);
        return ok;
}

static void wait_gone(struct world *w, const char *name)
{
        SRV_WAIT(SRV_TIMEOUT, srv_gone(&w->s, &srv_gvr_isvc, name),
                 "InferenceService %s still exists (log %s)", name, w->s.log_path);
}

/* ---- A.11 ---- */

/* A-T1 + A-T2 (+ A-X7): name label, Service fixture, record contents, deletion. */
Test(mrlink, t1_t2_create_and_delete_with_name_label, .timeout = 240)
{
        struct world w;
        char rw[256], full[400];
        char *uid, *id;
        json_t *rec, *se_list;

        world_setup(&w, "mrl-t1");
        rewrite_service(&w, "model-registry", w.s.ns, rw, sizeof(rw));
        set_env(w.s.ns, rw, NULL);
        service_create(&w, w.s.ns, "model-registry", true, NULL);
        srv_controller_start(&w.s);
        isvc_create(&w, "example-onnx-mnist",
                    json_pack("{s:s,s:s,s:s,s:s}", RMID, w.rm, NAME_L, "model-registry", NS_L,
                              w.s.ns, MVID, w.mv),
                    NULL);
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "example-onnx-mnist"), "no IS-id label (log %s)",
                 w.s.log_path);
        cr_assert(has_finalizer(&w, "example-onnx-mnist"));
        cr_assert(srv_log_count(&w.s, "model registry URL http://model-registry.") > 0,
                  "resolved from the Service's http-api port");

        uid = uid_of(&w, "example-onnx-mnist");
        id = isid_of(&w, "example-onnx-mnist");
        (void)snprintf(full, sizeof(full), "example-onnx-mnist/%s", uid);
        rec = reg_find_is(&w.g, full);
        cr_assert_not_null(rec, "record %s", full);
        cr_assert_str_eq(json_string_value(json_object_get(rec, "id")), id);
        cr_assert_str_eq(desired_state(rec), "DEPLOYED");
        cr_assert_str_eq(json_string_value(json_object_get(rec, "runtime")), "kserve-ovms");
        cr_assert_str_eq(json_string_value(json_object_get(rec, "modelVersionId")), w.mv);
        cr_assert_str_eq(json_string_value(json_object_get(rec, "registeredModelId")), w.rm);
        json_decref(rec);
        /* the serving environment is named after the InferenceService's namespace */
        se_list = reg_call(&w.g, "GET", "/serving_environments?pageSize=100", NULL, NULL);
        cr_assert_eq(json_array_size(json_object_get(se_list, "items")), 1);
        cr_assert_str_eq(json_get_string_path(json_array_get(json_object_get(se_list, "items"), 0),
                                              "name", NULL),
                         w.s.ns);
        json_decref(se_list);

        /* A-T2 */
        srv_delete(&w.s, &srv_gvr_isvc, "example-onnx-mnist", NULL);
        SRV_WAIT(SRV_TIMEOUT, record_state_is(&w, id, "UNDEPLOYED"), "record not UNDEPLOYED");
        wait_gone(&w, "example-onnx-mnist");
        cr_assert_eq(reg_count(&w.g, "/inference_services?pageSize=100"), 1,
                     "deletion never deletes the record");
        free(uid);
        free(id);
        srv_controller_assert_alive(&w.s);
        world_teardown(&w);
}

/* A-T3: no name label, one Service labelled component=model-registry. */
Test(mrlink, t3_single_service_by_label, .timeout = 180)
{
        struct world w;
        char rw[256];

        world_setup(&w, "mrl-t3");
        rewrite_service(&w, "model-registry", w.s.ns, rw, sizeof(rw));
        set_env(w.s.ns, rw, NULL);
        service_create(&w, w.s.ns, "model-registry", true, NULL);
        srv_controller_start(&w.s);
        isvc_create(&w, "example-onnx-mnist-missing-name",
                    json_pack("{s:s,s:s}", RMID, w.rm, NS_L, w.s.ns), NULL);
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "example-onnx-mnist-missing-name"), "no IS-id label");
        world_teardown(&w);
}

/* A-T4: two registry Services and no name label: never linked, no finalizer, a Warning event
 * naming both Services. */
Test(mrlink, t4_two_services_warning, .timeout = 180)
{
        struct world w;
        char rw[256];

        world_setup(&w, "mrl-t4");
        rewrite_service(&w, "model-registry", w.s.ns, rw, sizeof(rw));
        set_env(w.s.ns, rw, NULL);
        service_create(&w, w.s.ns, "model-registry", true, NULL);
        service_create(&w, w.s.ns, "model-registry-2", true, NULL);
        srv_controller_start(&w.s);
        isvc_create(&w, "example-onnx-mnist-missing-name",
                    json_pack("{s:s,s:s}", RMID, w.rm, NS_L, w.s.ns), NULL);
        SRV_WAIT(SRV_TIMEOUT,
                 has_event(&w, w.s.ns, "example-onnx-mnist-missing-name",
                           "RegistryServiceAmbiguous", "model-registry, model-registry-2"),
                 "no Warning event naming both Services");
        cr_assert_not(has_isid(&w, "example-onnx-mnist-missing-name"));
        cr_assert_not(has_finalizer(&w, "example-onnx-mnist-missing-name"));
        cr_assert_eq(reg_count(&w.g, "/inference_services?pageSize=100"), 0);
        /* no hot retry loop: one resolution, then a requeue after minutes */
        srv_sleep_ms(2000);
        cr_assert_leq(srv_log_count(&w.s, "more than one model registry service"), 2);
        world_teardown(&w);
}

/* A-T5: the URL annotation key on the Service is ignored; the http-api port is used. */
Test(mrlink, t5_url_annotation_on_service_ignored, .timeout = 180)
{
        struct world w;
        char rw[256];

        world_setup(&w, "mrl-t5");
        rewrite_service(&w, "model-registry", w.s.ns, rw, sizeof(rw));
        set_env(w.s.ns, rw, NULL);
        service_create(&w, w.s.ns, "model-registry", true,
                       json_pack("{s:s}", URL_A, "model-registry.svc.cluster.local:8080"));
        srv_controller_start(&w.s);
        isvc_create(&w, "example-onnx-mnist",
                    json_pack("{s:s,s:s,s:s}", RMID, w.rm, NAME_L, "model-registry", NS_L, w.s.ns),
                    NULL);
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "example-onnx-mnist"), "no IS-id label");
        world_teardown(&w);
}

/* A-T6, A-T7, A-T8: customProperties.url follows status.url. */
Test(mrlink, t6_t7_t8_status_url, .timeout = 180)
{
        struct world w;
        char rw[256];
        char *id;

        world_setup(&w, "mrl-t6");
        rewrite_service(&w, "model-registry", w.s.ns, rw, sizeof(rw));
        set_env(w.s.ns, rw, NULL);
        service_create(&w, w.s.ns, "model-registry", true, NULL);
        srv_controller_start(&w.s);
        isvc_create(&w, "url-reconcile", json_pack("{s:s,s:s}", RMID, w.rm, NS_L, w.s.ns), NULL);
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "url-reconcile"), "no IS-id label");
        id = isid_of(&w, "url-reconcile");
        cr_assert(record_url_is(&w, id, NULL), "no url before status.url");

        /* A-T7: a status without url: still no url property */
        srv_patch(&w.s, &srv_gvr_isvc, "url-reconcile", "status",
                  srv_json("{'status':{'observedGeneration':1}}"));
        srv_sleep_ms(2000);
        cr_assert(record_url_is(&w, id, NULL), "no PATCH when both are empty");

        /* A-T6, A-T8 */
        srv_patch(&w.s, &srv_gvr_isvc, "url-reconcile", "status",
                  srv_json("{'status':{'url':'https://example.com'}}"));
        SRV_WAIT(SRV_TIMEOUT, record_url_is(&w, id, "https://example.com"), "url not patched");
        srv_patch(&w.s, &srv_gvr_isvc, "url-reconcile", "status",
                  srv_json("{'status':{'url':'https://example-updated.com'}}"));
        SRV_WAIT(SRV_TIMEOUT, record_url_is(&w, id, "https://example-updated.com"),
                 "url does not follow");
        /* status.url removed: the property becomes "" */
        srv_patch(&w.s, &srv_gvr_isvc, "url-reconcile", "status",
                  srv_json("{'status':{'url':null}}"));
        SRV_WAIT(SRV_TIMEOUT, record_url_is(&w, id, ""), "url not cleared");
        free(id);
        world_teardown(&w);
}

/* ---- A.12 ---- */

/* A-X1: no labels: ignored, no finalizer, no record. A-X2: URL annotation, no Service at all. */
Test(mrlink, x1_x2_unlabelled_ignored_and_url_annotation, .timeout = 180)
{
        struct world w;
        char rw[256];
        json_t *o;

        world_setup(&w, "mrl-x1");
        (void)snprintf(rw, sizeof(rw), "http://mr:8080=%s", w.g.url);
        set_env(w.s.ns, rw, NULL);
        srv_controller_start(&w.s);
        isvc_create(&w, "plain", json_pack("{s:s}", "app", "x"), NULL);
        isvc_create(&w, "annotated", json_pack("{s:s}", RMID, w.rm),
                    json_pack("{s:s}", URL_A, "http://mr:8080"));
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "annotated"), "no IS-id label (log %s)", w.s.log_path);
        cr_assert(srv_log_count(&w.s, "model registry URL http://mr:8080") > 0);
        /* the unlabelled one: untouched */
        srv_patch(&w.s, &srv_gvr_isvc, "plain", "status",
                  srv_json("{'status':{'url':'http://plain'}}"));
        srv_sleep_ms(1500);
        o = srv_get(&w.s, &srv_gvr_isvc, "plain");
        cr_assert_null(json_get_path(o, "metadata", "finalizers", NULL));
        cr_assert_eq(json_object_size(json_get_path(o, "metadata", "labels", NULL)), 1);
        json_decref(o);
        cr_assert_eq(reg_count(&w.g, "/inference_services?pageSize=100"), 1);
        world_teardown(&w);
}

/* A-X3: the Service's external-address annotation gives https://<value>. */
Test(mrlink, x3_external_address, .timeout = 180)
{
        struct world w;
        char rw[256];

        world_setup(&w, "mrl-x3");
        (void)snprintf(rw, sizeof(rw), "https://mr.example.com:443=%s", w.g.url);
        set_env(w.s.ns, rw, NULL);
        service_create(&w, w.s.ns, "model-registry", true,
                       json_pack("{s:s}", EXT_A, "mr.example.com:443"));
        srv_controller_start(&w.s);
        isvc_create(&w, "ext", json_pack("{s:s,s:s}", RMID, w.rm, NAME_L, "model-registry"), NULL);
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "ext"), "no IS-id label (log %s)", w.s.log_path);
        cr_assert(srv_log_count(&w.s, "model registry URL https://mr.example.com:443") > 0);
        world_teardown(&w);
}

/* A-X4: no http-api port: no finalizer, a Warning event, no record. */
Test(mrlink, x4_no_http_port, .timeout = 180)
{
        struct world w;

        world_setup(&w, "mrl-x4");
        service_create(&w, w.s.ns, "model-registry", false, NULL);
        srv_controller_start(&w.s);
        isvc_create(&w, "noport", json_pack("{s:s}", RMID, w.rm), NULL);
        SRV_WAIT(SRV_TIMEOUT,
                 has_event(&w, w.s.ns, "noport", "RegistryServiceNoPort",
                           "unable to find the http port"),
                 "no Warning event");
        cr_assert_not(has_finalizer(&w, "noport"));
        cr_assert_not(has_isid(&w, "noport"));
        world_teardown(&w);
}

/* A-X5, A-X6: existing serving environment and record are found, not created again. */
Test(mrlink, x5_x6_existing_records_found, .timeout = 180)
{
        struct world w;
        char rw[256], se[32], is[32], full[400];
        char *uid, *id;

        world_setup(&w, "mrl-x5");
        (void)snprintf(rw, sizeof(rw), "http://mr:8080=%s", w.g.url);
        set_env(w.s.ns, rw, NULL);
        reg_create(&w.g, "/serving_environments", json_pack("{s:s}", "name", w.s.ns), se,
                   sizeof(se));
        isvc_create(&w, "existing", json_pack("{s:s}", RMID, w.rm),
                    json_pack("{s:s}", URL_A, "http://mr:8080"));
        uid = uid_of(&w, "existing");
        (void)snprintf(full, sizeof(full), "existing/%s", uid);
        reg_create(&w.g, "/inference_services",
                   json_pack("{s:s,s:s,s:s,s:s}", "name", full, "registeredModelId", w.rm,
                             "servingEnvironmentId", se, "desiredState", "DEPLOYED"),
                   is, sizeof(is));
        srv_controller_start(&w.s);
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "existing"), "no IS-id label");
        id = isid_of(&w, "existing");
        cr_assert_str_eq(id, is, "the existing record is used");
        cr_assert_eq(reg_count(&w.g, "/serving_environments?pageSize=100"), 1);
        cr_assert_eq(reg_count(&w.g, "/inference_services?pageSize=100"), 1);
        free(uid);
        free(id);
        world_teardown(&w);
}

/* A-X8: registry Service in another namespace (namespace label); the serving environment is
 * still named after the InferenceService's own namespace. */
Test(mrlink, x8_registry_in_other_namespace, .timeout = 180)
{
        struct world w;
        char rw[256];
        json_t *se_list;

        world_setup(&w, "mrl-x8");
        (void)snprintf(w.extra_ns, sizeof(w.extra_ns), "%s-reg", w.s.ns);
        create_ns(&w, w.extra_ns);
        rewrite_service(&w, "model-registry", w.extra_ns, rw, sizeof(rw));
        set_env("kubeflow-nonexistent", rw, NULL);
        service_create(&w, w.extra_ns, "model-registry", true, NULL);
        srv_controller_start(&w.s);
        isvc_create(&w, "elsewhere", json_pack("{s:s,s:s}", RMID, w.rm, NS_L, w.extra_ns), NULL);
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "elsewhere"), "no IS-id label (log %s)", w.s.log_path);
        se_list = reg_call(&w.g, "GET", "/serving_environments?pageSize=100", NULL, NULL);
        cr_assert_str_eq(json_get_string_path(json_array_get(json_object_get(se_list, "items"), 0),
                                              "name", NULL),
                         w.s.ns);
        json_decref(se_list);
        world_teardown(&w);
}

/* A-X10 + "down during create": registry down at create, caught up once back; down at
 * deletion: finalizer kept, then UNDEPLOYED and removed once back. */
Test(mrlink, x10_registry_down_create_and_delete, .timeout = 240)
{
        struct world w;
        char rw[256];
        char *id;

        world_setup(&w, "mrl-x10");
        (void)snprintf(rw, sizeof(rw), "http://mr:8080=%s", w.g.url);
        set_env(w.s.ns, rw, NULL);
        srv_controller_start(&w.s);
        reg_stop(&w.g);
        isvc_create(&w, "flaky", json_pack("{s:s}", RMID, w.rm),
                    json_pack("{s:s}", URL_A, "http://mr:8080"));
        SRV_WAIT(SRV_TIMEOUT, has_finalizer(&w, "flaky"), "finalizer first");
        srv_sleep_ms(1500);
        cr_assert_not(has_isid(&w, "flaky"));
        reg_start(&w.g);
        SRV_WAIT(60, has_isid(&w, "flaky"), "not caught up (log %s)", w.s.log_path);
        id = isid_of(&w, "flaky");

        reg_stop(&w.g);
        srv_delete(&w.s, &srv_gvr_isvc, "flaky", NULL);
        srv_sleep_ms(2000);
        cr_assert_not(srv_gone(&w.s, &srv_gvr_isvc, "flaky"), "finalizer kept while down");
        reg_start(&w.g);
        wait_gone(&w, "flaky");
        cr_assert(record_state_is(&w, id, "UNDEPLOYED"));
        free(id);
        srv_controller_assert_alive(&w.s);
        world_teardown(&w);
}

/* ---- TrainedModels (issue 26: a deploy from the console) ---- */

static json_t *tm_record(struct world *w, const char *tm)
{
        json_t *o = srv_get(&w->s, &srv_gvr_tm, tm);
        char full[400];

        if (!o)
                return NULL;
        (void)snprintf(full, sizeof(full), "%s/%s", tm,
                       json_get_string_path(o, "metadata", "uid", NULL));
        json_decref(o);
        return reg_find_is(&w->g, full);
}

static bool tm_record_is(struct world *w, const char *tm, const char *field, const char *value)
{
        json_t *rec = tm_record(w, tm);
        const char *v = json_string_value(json_object_get(rec, field));
        bool ok = v && streq(v, value);

        json_decref(rec);
        return ok;
}

/* A TrainedModel carrying the console's four labels: recorded DEPLOYED (no finalizer, no label
 * of ours on it), the version label followed, UNDEPLOYED after deletion with the registry down
 * at that moment. */
Test(mrlink, trainedmodel_recorded_followed_and_undeployed, .timeout = 240)
{
        struct world w;
        char rw[256], mv2[32], id[32];
        json_t *rec, *tm;

        world_setup(&w, "mrl-tm");
        rewrite_service(&w, "model-registry", w.s.ns, rw, sizeof(rw));
        set_env(w.s.ns, rw, NULL);
        service_create(&w, w.s.ns, "model-registry", true, NULL);
        reg_create(&w.g, "/model_versions",
                   json_pack("{s:s,s:s}", "name", "v2", "registeredModelId", w.rm), mv2,
                   sizeof(mv2));
        srv_controller_start(&w.s);
        isvc_create(&w, "parent", NULL, NULL);
        tm = json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s,s:s,s:s}},s:{s:s,s:{s:s,s:s,s:s}}}",
                       "apiVersion", "serving.kserve.io/v1alpha1", "kind", "TrainedModel",
                       "metadata", "name", "mnist-v1", "labels", RMID, w.rm, MVID, w.mv, NAME_L,
                       "model-registry", NS_L, w.s.ns, "spec", "inferenceService", "parent",
                       "model", "storageUri", "s3://models/mnist", "framework", "onnx", "memory",
                       "1Gi");
        srv_create(&w.s, &srv_gvr_tm, tm);
        SRV_WAIT(SRV_TIMEOUT, tm_record_is(&w, "mnist-v1", "desiredState", "DEPLOYED"),
                 "no DEPLOYED record for the TrainedModel (log %s)", w.s.log_path);
        rec = tm_record(&w, "mnist-v1");
        cr_assert_str_eq(json_string_value(json_object_get(rec, "registeredModelId")), w.rm);
        cr_assert_str_eq(json_string_value(json_object_get(rec, "modelVersionId")), w.mv);
        cr_assert_str_eq(json_string_value(json_object_get(rec, "runtime")), "kserve-ovms",
                         "the parent's runtime");
        cr_assert_str_eq(json_get_string_path(rec, "customProperties",
                                              "trainedModelInferenceService", "string_value", NULL),
                         "parent");
        (void)snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(rec, "id")));
        json_decref(rec);
        tm = srv_get(&w.s, &srv_gvr_tm, "mnist-v1");
        cr_assert_null(json_get_path(tm, "metadata", "labels", ISID, NULL),
                       "no label written back");
        for (size_t i = 0; i < json_array_size(json_get_path(tm, "metadata", "finalizers", NULL));
             i++)
                cr_assert_str_neq(json_string_value(json_array_get(
                                          json_get_path(tm, "metadata", "finalizers", NULL), i)),
                                  FINALIZER);
        json_decref(tm);

        /* the version label changed: the same record follows it */
        srv_patch(&w.s, &srv_gvr_tm, "mnist-v1", NULL,
                  json_pack("{s:{s:{s:s}}}", "metadata", "labels", MVID, mv2));
        SRV_WAIT(SRV_TIMEOUT, tm_record_is(&w, "mnist-v1", "modelVersionId", mv2),
                 "modelVersionId not followed (log %s)", w.s.log_path);
        cr_assert_eq(reg_count(&w.g, "/inference_services?pageSize=100"), 1);

        /* deleted while the registry is down: gone at once, UNDEPLOYED once it is back */
        reg_stop(&w.g);
        srv_delete(&w.s, &srv_gvr_tm, "mnist-v1", NULL);
        SRV_WAIT(SRV_TIMEOUT, srv_gone(&w.s, &srv_gvr_tm, "mnist-v1"),
                 "the TrainedModel waits for nobody of ours");
        srv_sleep_ms(1500);
        reg_start(&w.g);
        SRV_WAIT(60, record_state_is(&w, id, "UNDEPLOYED"), "record %s not UNDEPLOYED (log %s)", id,
                 w.s.log_path);
        srv_controller_assert_alive(&w.s);
        world_teardown(&w);
}

/* A-X11: already UNDEPLOYED: deletion just removes the finalizer. */
Test(mrlink, x11_already_undeployed, .timeout = 180)
{
        struct world w;
        char rw[256], path[64];
        char *id;
        json_t *j;

        world_setup(&w, "mrl-x11");
        (void)snprintf(rw, sizeof(rw), "http://mr:8080=%s", w.g.url);
        set_env(w.s.ns, rw, NULL);
        srv_controller_start(&w.s);
        isvc_create(&w, "gone", json_pack("{s:s}", RMID, w.rm),
                    json_pack("{s:s}", URL_A, "http://mr:8080"));
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "gone"), "no IS-id label");
        id = isid_of(&w, "gone");
        (void)snprintf(path, sizeof(path), "/inference_services/%s", id);
        j = json_pack("{s:s}", "desiredState", "UNDEPLOYED");
        json_decref(reg_call(&w.g, "PATCH", path, j, NULL));
        json_decref(j);
        srv_delete(&w.s, &srv_gvr_isvc, "gone", NULL);
        wait_gone(&w, "gone");
        cr_assert(record_state_is(&w, id, "UNDEPLOYED"));
        free(id);
        world_teardown(&w);
}

/* A-X12: an IS-id label naming no record: retried, label never repaired, no crash. */
Test(mrlink, x12_dangling_isid, .timeout = 180)
{
        struct world w;
        char rw[256];
        char *id;

        world_setup(&w, "mrl-x12");
        (void)snprintf(rw, sizeof(rw), "http://mr:8080=%s", w.g.url);
        set_env(w.s.ns, rw, NULL);
        srv_controller_start(&w.s);
        isvc_create(&w, "dangling", json_pack("{s:s}", ISID, "999"),
                    json_pack("{s:s}", URL_A, "http://mr:8080"));
        SRV_WAIT(SRV_TIMEOUT,
                 srv_log_count(&w.s, "unable to find InferenceService with id 999") >= 2,
                 "not retried (log %s)", w.s.log_path);
        id = isid_of(&w, "dangling");
        cr_assert_str_eq(id, "999");
        free(id);
        srv_controller_assert_alive(&w.s);
        world_teardown(&w);
}

/* ---- robustness ---- */

/* The registry Service is gone at deletion: the finalizer is removed at once, with a Warning
 * event saying the record could not be marked UNDEPLOYED. */
Test(mrlink, service_gone_at_deletion, .timeout = 180)
{
        struct world w;
        char rw[256];

        world_setup(&w, "mrl-svcgone");
        rewrite_service(&w, "model-registry", w.s.ns, rw, sizeof(rw));
        set_env(w.s.ns, rw, NULL);
        service_create(&w, w.s.ns, "model-registry", true, NULL);
        srv_controller_start(&w.s);
        isvc_create(&w, "orphan", json_pack("{s:s,s:s}", RMID, w.rm, NAME_L, "model-registry"),
                    NULL);
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "orphan"), "no IS-id label");
        srv_delete(&w.s, &gvr_services, "model-registry", NULL);
        srv_delete(&w.s, &srv_gvr_isvc, "orphan", NULL);
        wait_gone(&w, "orphan");
        SRV_WAIT(SRV_TIMEOUT,
                 has_event(&w, w.s.ns, "orphan", "UndeployFailed",
                           "could not be marked UNDEPLOYED"),
                 "no Warning event");
        world_teardown(&w);
}

/* The Service (here: the URL) exists but nothing answers: retried, then after the undeploy
 * timeout (3 s here, 10 min by default) the finalizer goes with a Warning event. */
Test(mrlink, registry_silent_timeout, .timeout = 180)
{
        struct world w;
        char rw[256];

        world_setup(&w, "mrl-silent");
        (void)snprintf(rw, sizeof(rw), "http://mr:8080=%s", w.g.url);
        set_env(w.s.ns, rw, "3s");
        srv_controller_start(&w.s);
        isvc_create(&w, "silent", json_pack("{s:s}", RMID, w.rm),
                    json_pack("{s:s}", URL_A, "http://mr:8080"));
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "silent"), "no IS-id label");
        reg_stop(&w.g);
        srv_delete(&w.s, &srv_gvr_isvc, "silent", NULL);
        SRV_WAIT(SRV_TIMEOUT,
                 srv_log_count(&w.s, "Cannot mark the model registry record UNDEPLOYED yet") > 0,
                 "not retried");
        wait_gone(&w, "silent");
        SRV_WAIT(SRV_TIMEOUT,
                 has_event(&w, w.s.ns, "silent", "UndeployFailed", "within 3s of deletion"),
                 "no Warning event");
        srv_controller_assert_alive(&w.s);
        world_teardown(&w);
}

/* A registry answering 500, then garbage: retried, never a crash; carries the bearer token
 * (A-X9) from MODELPLANE_MRLINK_TOKEN_FILE, re-read when it rotates; once the URL points at a
 * real registry the InferenceService is linked. */
struct fake {
        int fd;
        unsigned port;
        atomic_int mode; /* 0: 500, 1: 200 with garbage */
        atomic_int requests, with_token, token1, token2;
        pthread_t thread;
};

static const char answer_500[] = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n"
                                 "Connection: close\r\n\r\noops";
static const char answer_garbage[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                     "Content-Length: 9\r\nConnection: close\r\n\r\n{\"id\":[}x";

static void *fake_main(void *p)
{
        struct fake *f = p;

        for (;;) {
                char req[8192];
                ssize_t n;
                int c = accept(f->fd, NULL, NULL);

                if (c < 0)
                        return NULL;
                n = read(c, req, sizeof(req) - 1);
                if (n > 0) {
                        req[n] = 0;
                        atomic_fetch_add(&f->requests, 1);
                        if (strstr(req, "Authorization: Bearer ") ||
                            strstr(req, "authorization: Bearer "))
                                atomic_fetch_add(&f->with_token, 1);
                        if (strstr(req, "Bearer rotating-token-1\r\n"))
                                atomic_fetch_add(&f->token1, 1);
                        if (strstr(req, "Bearer rotating-token-2\r\n"))
                                atomic_fetch_add(&f->token2, 1);
                        const char *a = atomic_load(&f->mode) == 0 ? answer_500 : answer_garbage;

                        (void)!write(c, a, strlen(a));
                }
                close(c);
        }
}

static void write_file(const char *path, const char *text)
{
        char tmp[400];
        FILE *fp;

        (void)snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        fp = fopen(tmp, "we");
        cr_assert_not_null(fp);
        cr_assert_eq(fputs(text, fp) >= 0, true);
        cr_assert_eq(fclose(fp), 0);
        cr_assert_eq(rename(tmp, path), 0);
}

Test(mrlink, registry_5xx_and_garbage, .timeout = 180)
{
        struct world w;
        struct fake f = { 0 };
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        char url[64], token_file[320];
        int before;

        world_setup(&w, "mrl-5xx");
        f.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert_eq(bind(f.fd, (struct sockaddr *)&a, sizeof(a)), 0);
        cr_assert_eq(listen(f.fd, 16), 0);
        cr_assert_eq(getsockname(f.fd, (struct sockaddr *)&a, &len), 0);
        f.port = ntohs(a.sin_port);
        cr_assert_eq(pthread_create(&f.thread, NULL, fake_main, &f), 0);
        (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u", f.port);
        (void)snprintf(token_file, sizeof(token_file), "%s/token", w.g.dir);
        write_file(token_file, "rotating-token-1\n");
        setenv("MODELPLANE_MRLINK_TOKEN_FILE", token_file, 1);

        srv_controller_start(&w.s);
        unsetenv("MODELPLANE_MRLINK_TOKEN_FILE");
        isvc_create(&w, "bad-registry", json_pack("{s:s}", RMID, w.rm),
                    json_pack("{s:s}", URL_A, url));
        SRV_WAIT(SRV_TIMEOUT, atomic_load(&f.requests) >= 3, "not retried after 500");
        cr_assert_eq(atomic_load(&f.with_token), atomic_load(&f.requests),
                     "every call carries the bearer token");
        cr_assert_gt(atomic_load(&f.token1), 0, "the token file's token");
        write_file(token_file, "rotating-token-2\n");
        SRV_WAIT(SRV_TIMEOUT, atomic_load(&f.token2) > 0, "rotated token not used");
        before = atomic_load(&f.requests);
        atomic_store(&f.mode, 1);
        SRV_WAIT(SRV_TIMEOUT, atomic_load(&f.requests) >= before + 3, "not retried after garbage");
        srv_controller_assert_alive(&w.s);
        cr_assert_not(has_isid(&w, "bad-registry"));
        cr_assert(has_finalizer(&w, "bad-registry"));

        /* point it at the real registry: linked */
        srv_patch(&w.s, &srv_gvr_isvc, "bad-registry", NULL,
                  json_pack("{s:{s:{s:s}}}", "metadata", "annotations", URL_A, w.g.url));
        SRV_WAIT(60, has_isid(&w, "bad-registry"), "not linked after repair (log %s)",
                 w.s.log_path);
        srv_controller_assert_alive(&w.s);
        shutdown(f.fd, SHUT_RDWR);
        close(f.fd);
        world_teardown(&w);
}

/* Deleting a namespace that holds labelled InferenceServices completes; also when the registry
 * (its Service in that namespace) is deleted with it / first. */
static bool ns_gone(struct world *w, const char *ns)
{
        json_t *o = NULL;
        int r = kube_get(w->s.c, &gvr_ns, NULL, ns, &o, NULL);

        json_decref(o);
        return r == -ENOENT;
}

Test(mrlink, namespace_deletion_completes, .timeout = 240)
{
        struct world w;
        char rw[512], rw2[256];

        world_setup(&w, "mrl-nsdel");
        rewrite_service(&w, "model-registry", w.s.ns, rw2, sizeof(rw2));
        (void)snprintf(rw, sizeof(rw), "%s,http://mr:8080=%s", rw2, w.g.url);
        set_env(w.s.ns, rw, "3s");
        service_create(&w, w.s.ns, "model-registry", true, NULL);
        srv_controller_start(&w.s);
        isvc_create(&w, "a", json_pack("{s:s,s:s}", RMID, w.rm, NAME_L, "model-registry"), NULL);
        isvc_create(&w, "b", json_pack("{s:s}", RMID, w.rm), NULL);
        isvc_create(&w, "c", json_pack("{s:s}", RMID, w.rm),
                    json_pack("{s:s}", URL_A, "http://mr:8080"));
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "a") && has_isid(&w, "b") && has_isid(&w, "c"),
                 "not linked");
        /* the registry goes first: its Service, and the process behind the URL annotation */
        srv_delete(&w.s, &gvr_services, "model-registry", NULL);
        reg_stop(&w.g);
        cr_assert_eq(kube_delete(w.s.c, &gvr_ns, NULL, w.s.ns, NULL, NULL, NULL), 0);
        SRV_WAIT(120, ns_gone(&w, w.s.ns), "namespace %s not deleted (log %s)", w.s.ns,
                 w.s.log_path);
        srv_controller_assert_alive(&w.s);
        world_teardown(&w);
}

Test(mrlink, namespace_deletion_registry_up, .timeout = 240)
{
        struct world w;
        char rw[256];
        char *id;

        world_setup(&w, "mrl-nsdel2");
        rewrite_service(&w, "model-registry", w.s.ns, rw, sizeof(rw));
        set_env(w.s.ns, rw, NULL);
        service_create(&w, w.s.ns, "model-registry", true, NULL);
        srv_controller_start(&w.s);
        isvc_create(&w, "a", json_pack("{s:s,s:s}", RMID, w.rm, NAME_L, "model-registry"), NULL);
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "a"), "not linked");
        id = isid_of(&w, "a");
        cr_assert_eq(kube_delete(w.s.c, &gvr_ns, NULL, w.s.ns, NULL, NULL, NULL), 0);
        SRV_WAIT(120, ns_gone(&w, w.s.ns), "namespace %s not deleted (log %s)", w.s.ns,
                 w.s.log_path);
        free(id);
        world_teardown(&w);
}

/* ---- an https registry ---- */

/* The controller trusts the test CA through SSL_CERT_FILE (as upstream's Go controller would):
 * the registry is resolved from the Service's external-address annotation (https://), the
 * record is created DEPLOYED and marked UNDEPLOYED at deletion, over TLS. */
Test(mrlink, https_ssl_cert_file_create_and_delete, .timeout = 240)
{
        struct world w;
        char rw[256], full[400];
        char *uid, *id;
        json_t *rec;

        world_setup_tls(&w, "mrl-tls1", true);
        cr_assert(strncmp(w.g.url, "https://", 8) == 0);
        (void)snprintf(rw, sizeof(rw), "https://mr.example.com:443=%s", w.g.url);
        set_env(w.s.ns, rw, NULL);
        setenv("SSL_CERT_FILE", w.g.ca, 1);
        service_create(&w, w.s.ns, "model-registry", true,
                       json_pack("{s:s}", EXT_A, "mr.example.com:443"));
        srv_controller_start(&w.s);
        isvc_create(&w, "tls-mnist",
                    json_pack("{s:s,s:s,s:s}", RMID, w.rm, NAME_L, "model-registry", MVID, w.mv),
                    NULL);
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "tls-mnist"), "no IS-id label (log %s)", w.s.log_path);
        cr_assert(srv_log_count(&w.s, "model registry URL https://mr.example.com:443") > 0);
        uid = uid_of(&w, "tls-mnist");
        id = isid_of(&w, "tls-mnist");
        (void)snprintf(full, sizeof(full), "tls-mnist/%s", uid);
        rec = reg_find_is(&w.g, full);
        cr_assert_not_null(rec, "record %s", full);
        cr_assert_str_eq(json_string_value(json_object_get(rec, "id")), id);
        cr_assert_str_eq(desired_state(rec), "DEPLOYED");
        json_decref(rec);

        srv_delete(&w.s, &srv_gvr_isvc, "tls-mnist", NULL);
        SRV_WAIT(SRV_TIMEOUT, record_state_is(&w, id, "UNDEPLOYED"), "record not UNDEPLOYED");
        wait_gone(&w, "tls-mnist");
        cr_assert_eq(srv_log_count(&w.s, "certificate verification failed"), 0);
        free(uid);
        free(id);
        srv_controller_assert_alive(&w.s);
        world_teardown(&w);
}

/* Verification is on by default: without the CA the controller never gets through to the
 * registry (no serving environment, no record), says why (certificate verification), and the
 * deletion still completes, like an unreachable registry: finalizer kept and retried, then
 * removed after the undeploy timeout with a Warning event carrying the TLS error. */
Test(mrlink, https_untrusted_ca_refused, .timeout = 240)
{
        struct world w;

        world_setup_tls(&w, "mrl-tls2", true);
        /* 10 s, not 3: every refused handshake costs about 1.5 s under ASan on a loaded machine,
         * and the retry this test asserts must come before the timeout expires */
        set_env(w.s.ns, NULL, "10s");
        srv_controller_start(&w.s);
        isvc_create(&w, "untrusted", json_pack("{s:s}", RMID, w.rm),
                    json_pack("{s:s}", URL_A, w.g.url));
        SRV_WAIT(SRV_TIMEOUT, srv_log_count(&w.s, "TLS certificate verification failed") >= 2,
                 "no certificate verification error, or not retried (log %s)", w.s.log_path);
        cr_assert(has_finalizer(&w, "untrusted"),
                  "finalizer first, as for a registry that is down");
        cr_assert_not(has_isid(&w, "untrusted"));
        cr_assert_eq(reg_count(&w.g, "/serving_environments?pageSize=100"), 0);
        cr_assert_eq(reg_count(&w.g, "/inference_services?pageSize=100"), 0);

        srv_delete(&w.s, &srv_gvr_isvc, "untrusted", NULL);
        SRV_WAIT(SRV_TIMEOUT,
                 srv_log_count(&w.s, "Cannot mark the model registry record UNDEPLOYED yet") > 0,
                 "not retried at deletion (log %s)", w.s.log_path);
        wait_gone(&w, "untrusted");
        SRV_WAIT(SRV_TIMEOUT,
                 has_event(&w, w.s.ns, "untrusted", "UndeployFailed",
                           "TLS certificate verification failed"),
                 "no Warning event naming the TLS error");
        cr_assert_eq(reg_count(&w.g, "/inference_services?pageSize=100"), 0);
        srv_controller_assert_alive(&w.s);
        world_teardown(&w);
}

/* SSL_CERT_FILE naming no file: the same refusal, the error names the file; SKIP_TLS_VERIFY is
 * still false, so nothing is recorded. */
Test(mrlink, https_ssl_cert_file_missing, .timeout = 240)
{
        struct world w;
        char missing[400];

        world_setup_tls(&w, "mrl-tls5", true);
        (void)snprintf(missing, sizeof(missing), "%s/no-such-ca.crt", w.g.dir);
        set_env(w.s.ns, NULL, NULL);
        setenv("SSL_CERT_FILE", missing, 1);
        srv_controller_start(&w.s);
        isvc_create(&w, "badca", json_pack("{s:s}", RMID, w.rm),
                    json_pack("{s:s}", URL_A, w.g.url));
        SRV_WAIT(SRV_TIMEOUT, srv_log_count(&w.s, "TLS certificate verification failed") > 0,
                 "no TLS error (log %s)", w.s.log_path);
        cr_assert(srv_log_count(&w.s, "no-such-ca.crt") > 0, "the file is named (log %s)",
                  w.s.log_path);
        cr_assert_not(has_isid(&w, "badca"));
        cr_assert_eq(reg_count(&w.g, "/inference_services?pageSize=100"), 0);
        srv_controller_assert_alive(&w.s);
        world_teardown(&w);
}

/* SKIP_TLS_VERIFY=true and no CA: works (this client only). */
Test(mrlink, https_skip_tls_verify, .timeout = 240)
{
        struct world w;
        char *id;

        world_setup_tls(&w, "mrl-tls3", true);
        set_env(w.s.ns, NULL, NULL);
        setenv("SKIP_TLS_VERIFY", "true", 1);
        srv_controller_start(&w.s);
        isvc_create(&w, "skipverify", json_pack("{s:s}", RMID, w.rm),
                    json_pack("{s:s}", URL_A, w.g.url));
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "skipverify"), "no IS-id label (log %s)", w.s.log_path);
        id = isid_of(&w, "skipverify");
        cr_assert(record_state_is(&w, id, "DEPLOYED"));
        srv_delete(&w.s, &srv_gvr_isvc, "skipverify", NULL);
        SRV_WAIT(SRV_TIMEOUT, record_state_is(&w, id, "UNDEPLOYED"), "record not UNDEPLOYED");
        wait_gone(&w, "skipverify");
        free(id);
        srv_controller_assert_alive(&w.s);
        world_teardown(&w);
}

/* SSL_CERT_DIR (a hashed directory, `openssl rehash`, listed after a directory without the CA),
 * and a host name checked against the certificate's DNS name: https://localhost:<port>. */
Test(mrlink, https_ssl_cert_dir, .timeout = 240)
{
        struct world w;
        char dir[300], dirs[700], cmd[2400], url[64];

        world_setup_tls(&w, "mrl-tls4", true);
        (void)snprintf(dir, sizeof(dir), "%s/cadir", w.g.dir);
        (void)snprintf(
                cmd, sizeof(cmd),
                "mkdir -p '%s' '%s-empty' && cp '%s' '%s/test-ca.pem' && openssl rehash '%s'", dir,
                dir, w.g.ca, dir, dir);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        (void)snprintf(dirs, sizeof(dirs), "%s-empty:%s", dir, dir);
        (void)snprintf(url, sizeof(url), "https://localhost:%u", w.g.port);
        set_env(w.s.ns, NULL, NULL);
        setenv("SSL_CERT_DIR", dirs, 1);
        srv_controller_start(&w.s);
        isvc_create(&w, "cadir", json_pack("{s:s}", RMID, w.rm), json_pack("{s:s}", URL_A, url));
        SRV_WAIT(SRV_TIMEOUT, has_isid(&w, "cadir"), "no IS-id label (log %s)", w.s.log_path);
        cr_assert_eq(srv_log_count(&w.s, "certificate verification failed"), 0);
        srv_controller_assert_alive(&w.s);
        world_teardown(&w);
}

/* `modelplane registry` with a wrong HTTPS setup stops at once, saying what is wrong: one of
 * the two files only (from a flag, the environment or the config file) is exit 2; a missing
 * file or a key that does not match the certificate is exit 1. */
static void expect_registry_fails(const char *dir, const char *const *args, const char *env_name,
                                  const char *env_value, int want_status, const char *needle)
{
        const char *bin = getenv("MODELPLANE_BIN");
        char log[400], db[400], text[4096] = "";
        const char *argv[16];
        size_t n = 0;
        int status = -1;
        ssize_t len;
        pid_t pid;
        int fd;

        (void)snprintf(log, sizeof(log), "%s/fail.log", dir);
        (void)snprintf(db, sizeof(db), "%s/mr.db", dir);
        argv[n++] = bin;
        argv[n++] = "registry";
        argv[n++] = "-p";
        argv[n++] = "0";
        argv[n++] = "-d";
        argv[n++] = db;
        for (size_t i = 0; args[i] && n < ELEMENTSOF(argv) - 1; i++)
                argv[n++] = args[i];
        argv[n] = NULL;
        pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
                        _exit(126);
                setenv("HOME", dir, 1); /* no ~/.model-registry.yaml */
                unsetenv("MR_TLS_CERT_FILE");
                unsetenv("MR_TLS_KEY_FILE");
                if (env_name)
                        setenv(env_name, env_value, 1);
                execv(bin, (char *const *)argv);
                _exit(127);
        }
        for (int i = 0; i < 300 && waitpid(pid, &status, WNOHANG) != pid; i++)
                srv_sleep_ms(100);
        if (status == -1) {
                kill(pid, SIGKILL);
                (void)waitpid(pid, &status, 0);
                cr_assert_fail("registry %s did not stop (log %s)", args[0], log);
        }
        fd = open(log, O_RDONLY | O_CLOEXEC);
        cr_assert(fd >= 0);
        len = read(fd, text, sizeof(text) - 1);
        close(fd);
        text[len > 0 ? len : 0] = 0;
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == want_status,
                  "%s: status %d, want exit %d: %s", args[0], status, want_status, text);
        cr_assert(strstr(text, needle), "%s: '%s' not in: %s", args[0], needle, text);
}

Test(mrlink, https_registry_bad_tls_options, .timeout = 120)
{
        char dir[] = "/tmp/mrlink-tlsopt-XXXXXX", certs[300], ca[320], a_crt[320], b_key[320],
             conf[320], missing[320], rm[400];
        FILE *f;

        cr_assert_not_null(mkdtemp(dir));
        (void)snprintf(certs, sizeof(certs), "%s/certs", dir);
        gen_certs(certs, "a", "1001");
        gen_certs(certs, "b", "1002");
        (void)snprintf(ca, sizeof(ca), "%s/ca.crt", certs);
        (void)snprintf(a_crt, sizeof(a_crt), "%s/a.crt", certs);
        (void)snprintf(b_key, sizeof(b_key), "%s/b.key", certs);
        (void)snprintf(missing, sizeof(missing), "%s/missing.crt", certs);
        (void)snprintf(conf, sizeof(conf), "%s/registry.yaml", dir);
        f = fopen(conf, "we");
        cr_assert_not_null(f);
        fprintf(f, "tls-cert-file: %s\n", a_crt);
        cr_assert_eq(fclose(f), 0);

        expect_registry_fails(dir, (const char *const[]){ "--tls-cert-file", a_crt, NULL }, NULL,
                              NULL, 2,
                              "--tls-cert-file (from the command line) needs --tls-key-file");
        expect_registry_fails(dir, (const char *const[]){ "--hostname", "127.0.0.1", NULL },
                              "MR_TLS_KEY_FILE", b_key, 2,
                              "--tls-key-file (from the environment) needs --tls-cert-file");
        expect_registry_fails(dir, (const char *const[]){ "--config", conf, NULL }, NULL, NULL, 2,
                              "--tls-cert-file (from the config file) needs --tls-key-file");
        expect_registry_fails(dir,
                              (const char *const[]){ "--tls-cert-file", a_crt, "--tls-key-file",
                                                     b_key, NULL },
                              NULL, NULL, 1, "cannot serve HTTPS");
        expect_registry_fails(dir,
                              (const char *const[]){ "--tls-cert-file", missing, "--tls-key-file",
                                                     b_key, NULL },
                              NULL, NULL, 1, "No such file or directory");
        /* a CA certificate is no key */
        expect_registry_fails(dir,
                              (const char *const[]){ "--tls-cert-file", a_crt, "--tls-key-file", ca,
                                                     NULL },
                              NULL, NULL, 1, "cannot serve HTTPS");
        (void)snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
        (void)!system(rm);
}
