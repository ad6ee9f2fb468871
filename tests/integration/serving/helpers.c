/* SPDX-License-Identifier: Apache-2.0 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json/json-util.h"
#include "util/macro.h"

const struct gvr srv_gvr_tm = { "serving.kserve.io", "v1alpha1", "trainedmodels" };
const struct gvr srv_gvr_isvc = { "serving.kserve.io", "v1beta1", "inferenceservices" };
const struct gvr srv_gvr_cm = { "", "v1", "configmaps" };
static const struct gvr gvr_namespaces = { "", "v1", "namespaces" };

void srv_sleep_ms(long ms)
{
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

        (void)nanosleep(&ts, NULL);
}

const char *srv_variant(void)
{
        const char *v = getenv("MODELPLANE_SERVING_VARIANT");

        return v && *v ? v : "deploy";
}

bool srv_crd_validates(void)
{
        return !streq(srv_variant(), "kserve-minimal");
}

void srv_sh(const char *fmt, ...)
{
        char cmd[4096];
        va_list ap;
        int n, r;

        va_start(ap, fmt);
        n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        cr_assert(n > 0 && (size_t)n < sizeof(cmd), "command too long");
        r = system(cmd);
        cr_assert(r != -1 && WIFEXITED(r) && WEXITSTATUS(r) == 0, "command failed (%d): %s", r,
                  cmd);
}

json_t *srv_json(const char *fmt, ...)
{
        char *text = NULL;
        json_error_t err;
        va_list ap;
        json_t *v;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&text, fmt, ap);
        va_end(ap);
        cr_assert(n >= 0 && text, "vasprintf");
        for (char *p = text; *p; p++)
                if (*p == '\'')
                        *p = '"';
        v = json_loads(text, 0, &err);
        cr_assert_not_null(v, "bad test JSON (%s): %s", err.text, text);
        free(text);
        return v;
}

static const char *source_root(void)
{
        const char *r = getenv("MODELPLANE_SOURCE_ROOT");

        return r && *r ? r : ".";
}

/* The ServiceAccount kubeconfig, made once per testenv (a file in the testenv directory). */
static void controller_kubeconfig(char *buf, size_t len)
{
        const char *dir = getenv("MODELPLANE_TESTENV_DIR");
        const char *src = source_root();
        struct stat st;

        cr_assert(dir && *dir,
                  "MODELPLANE_TESTENV_DIR is not set (run under scripts/with-testenv)");
        (void)snprintf(buf, len, "%s/kubeconfig-modelplane-system-modelplane-controller", dir);
        if (stat(buf, &st) == 0)
                return;
        /* Exactly the shipped RBAC: namespace, ServiceAccount, ClusterRole(+Binding), Role(+Binding). */
        srv_sh("'%s/scripts/testenv' kubectl '%s' apply -f '%s/deploy/controller/namespace.yaml' "
               "-f '%s/deploy/controller/serviceaccount.yaml' -f '%s/deploy/controller/clusterrole.yaml' "
               "-f '%s/deploy/controller/clusterrolebinding.yaml' -f '%s/deploy/controller/role.yaml' "
               ">/dev/null",
               src, dir, src, src, src, src, src);
        srv_sh("'%s/scripts/testenv' kubeconfig '%s' modelplane-system/modelplane-controller >/dev/null",
               src, dir);
        cr_assert_eq(stat(buf, &st), 0, "no %s", buf);
}

void srv_setup(struct srv *s, const char *prefix)
{
        struct kube_config_options o = { 0 };
        const char *path = getenv("MODELPLANE_KUBECONFIG");
        char kc[512];
        struct error_detail kerr = { 0 };
        const char *err = kerr.message;
        struct kube_status st;
        json_t *ns;
        int r;

        *s = (struct srv){ .leader_elect = true };
        if (!path || !*path)
                cr_skip_test("MODELPLANE_KUBECONFIG is not set (run under scripts/with-testenv)");
        o.kubeconfig_path = path;
        cr_assert_eq(kube_config_load(&o, &s->cfg, &kerr), 0, "%s", err);
        cr_assert_eq(kube_client_new(s->cfg, NULL, &s->c), 0);
        controller_kubeconfig(kc, sizeof(kc));

        (void)snprintf(s->ns, sizeof(s->ns), "%s-%ld", prefix, (long)getpid());
        ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace", "metadata",
                       "name", s->ns);
        r = kube_create(s->c, &gvr_namespaces, NULL, ns, NULL, NULL, &st);
        json_decref(ns);
        cr_assert_eq(r, 0, "create namespace %s: %s", s->ns, st.message);
}

void srv_teardown(struct srv *s)
{
        json_t *list = NULL, *item;
        size_t i;

        if (!s->c)
                return;
        if (s->ctrl > 0)
                srv_controller_stop(s);
        /* nothing must stay Terminating because of us: drop leftover finalizers */
        if (kube_list(s->c, &srv_gvr_tm, s->ns, NULL, &list, NULL) >= 0)
                json_array_foreach(json_object_get(list, "items"), i, item) {
                        const char *name = json_get_string_path(item, "metadata", "name", NULL);
                        json_t *p = json_pack("{s:{s:n}}", "metadata", "finalizers");

                        if (name)
                                (void)!kube_patch(s->c, &srv_gvr_tm, s->ns, name, KUBE_PATCH_MERGE,
                                                  p, NULL, NULL, NULL);
                        json_decref(p);
                }
        json_decref(list);
        (void)!kube_delete(s->c, &gvr_namespaces, NULL, s->ns, NULL, NULL, NULL);
        kube_client_free(s->c);
        kube_config_free(s->cfg);
        s->c = NULL;
        s->cfg = NULL;
}

int srv_try_create(struct srv *s, const struct gvr *r, json_t *obj, struct kube_status *st)
{
        int k = kube_create(s->c, r, s->ns, obj, NULL, NULL, st);

        json_decref(obj);
        return k;
}

void srv_create(struct srv *s, const struct gvr *r, json_t *obj)
{
        const char *name = json_get_string_path(obj, "metadata", "name", NULL);
        char n[256];
        struct kube_status st = { 0 };
        int k;

        (void)snprintf(n, sizeof(n), "%s", name ? name : "?");
        k = srv_try_create(s, r, obj, &st);
        cr_assert_eq(k, 0, "create %s %s/%s: %d %s", r->resource, s->ns, n, k, st.message);
}

json_t *srv_get(struct srv *s, const struct gvr *r, const char *name)
{
        struct kube_status st = { 0 };
        json_t *obj = NULL;
        int k;

        for (int attempt = 0;; attempt++) {
                k = kube_get(s->c, r, s->ns, name, &obj, &st);
                if (k == -ENOENT)
                        return NULL;
                if (k >= 0)
                        return obj;
                /* the apiserver may be restarting (chaos): retry for a while */
                cr_assert_lt(attempt, 150, "get %s %s/%s: %d %s", r->resource, s->ns, name, k,
                             st.message);
                srv_sleep_ms(200);
        }
}

void srv_patch(struct srv *s, const struct gvr *r, const char *name, const char *subresource,
               json_t *patch)
{
        struct kube_write_options wo = { .subresource = subresource };
        struct kube_status st = { 0 };
        int k = kube_patch(s->c, r, s->ns, name, KUBE_PATCH_MERGE, patch, &wo, NULL, &st);

        json_decref(patch);
        cr_assert_eq(k, 0, "patch %s%s%s %s/%s: %d %s", r->resource, subresource ? "/" : "",
                     subresource ? subresource : "", s->ns, name, k, st.message);
}

void srv_delete(struct srv *s, const struct gvr *r, const char *name, const char *propagation)
{
        struct kube_delete_options o = { .propagation_policy = propagation };
        struct kube_status st = { 0 };
        int k = kube_delete(s->c, r, s->ns, name, &o, NULL, &st);

        cr_assert(k == 0 || k == -ENOENT, "delete %s %s/%s: %d %s", r->resource, s->ns, name, k,
                  st.message);
}

size_t srv_count(struct srv *s, const struct gvr *r)
{
        json_t *list = NULL;
        struct kube_status st = { 0 };
        size_t n;

        cr_assert_eq(kube_list(s->c, r, s->ns, NULL, &list, &st), 0, "list: %s", st.message);
        n = json_array_size(json_object_get(list, "items"));
        json_decref(list);
        return n;
}

json_t *srv_predictor_tf(const char *memory_limit)
{
        return srv_json("{'minReplicas': 1, 'maxReplicas': 3, 'tensorflow': {'runtimeVersion': "
                        "'1.14.0', 'name': 'kserve-container', 'resources': {'requests': {'cpu': "
                        "'1', 'memory': '%s'}, 'limits': {'cpu': '1', 'memory': '%s'}}}}",
                        memory_limit, memory_limit);
}

void srv_isvc_create(struct srv *s, const char *name, json_t *predictor, json_t *labels)
{
        json_t *obj = srv_json("{'apiVersion': 'serving.kserve.io/v1beta1', 'kind': "
                               "'InferenceService', 'metadata': {'name': '%s'}, 'spec': {}}",
                               name);

        cr_assert_eq(json_object_set_new(json_object_get(obj, "spec"), "predictor", predictor), 0);
        if (labels)
                cr_assert_eq(json_object_set_new(json_object_get(obj, "metadata"), "labels",
                                                 labels),
                             0);
        srv_create(s, &srv_gvr_isvc, obj);
}

void srv_isvc_url(struct srv *s, const char *name, bool address, char *buf, size_t len)
{
        if (address)
                (void)snprintf(buf, len, "http://%s-predictor.%s.svc.cluster.local", name, s->ns);
        else
                (void)snprintf(buf, len, "http://%s-predictor.%s.example.com", name, s->ns);
}

void srv_isvc_set_ready(struct srv *s, const char *name, bool ready)
{
        char url[256], addr[256];
        const char *st = ready ? "True" : "False";

        srv_isvc_url(s, name, false, url, sizeof(url));
        srv_isvc_url(s, name, true, addr, sizeof(addr));
        srv_patch(s, &srv_gvr_isvc, name, "status",
                  srv_json("{'status': {'url': '%s', 'address': {'url': '%s'}, 'conditions': ["
                           "{'type': 'IngressReady', 'status': '%s', 'lastTransitionTime': "
                           "'2026-01-01T00:00:00Z'},"
                           "{'type': 'PredictorReady', 'status': '%s', 'lastTransitionTime': "
                           "'2026-01-01T00:00:00Z'},"
                           "{'type': 'Ready', 'status': '%s', 'lastTransitionTime': "
                           "'2026-01-01T00:00:00Z'}]}}",
                           url, addr, st, st, st));
}

void srv_tm_create(struct srv *s, const char *name, const char *isvc, const char *uri,
                   const char *framework, const char *memory)
{
        json_t *obj = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{s:s, s:s, s:s}}}", "apiVersion",
                                "serving.kserve.io/v1alpha1", "kind", "TrainedModel", "metadata",
                                "name", name, "spec", "inferenceService", isvc, "model",
                                "storageUri", uri, "framework", framework, "memory", memory);

        cr_assert_not_null(obj);
        srv_create(s, &srv_gvr_tm, obj);
}

void srv_cm_create(struct srv *s, const char *isvc, const char *models_json)
{
        json_t *obj = json_pack("{s:s, s:s, s:{s:s++}}", "apiVersion", "v1", "kind", "ConfigMap",
                                "metadata", "name", "modelconfig-", isvc, "-0");

        cr_assert_not_null(obj);
        if (models_json)
                cr_assert_eq(json_object_set_new(obj, "data",
                                                 json_pack("{s:s}", "models.json", models_json)),
                             0);
        srv_create(s, &srv_gvr_cm, obj);
}

char *srv_models_json(struct srv *s, const char *isvc, char **ret_rv)
{
        char name[300];
        json_t *cm;
        const char *v, *rv;
        char *out;

        (void)snprintf(name, sizeof(name), "modelconfig-%s-0", isvc);
        cm = srv_get(s, &srv_gvr_cm, name);
        if (!cm)
                return NULL;
        v = json_get_string_path(cm, "data", "models.json", NULL);
        out = strdup(v ? v : "");
        cr_assert_not_null(out);
        if (ret_rv) {
                rv = json_get_string_path(cm, "metadata", "resourceVersion", NULL);
                *ret_rv = strdup(rv ? rv : "");
        }
        json_decref(cm);
        return out;
}

json_t *srv_models(struct srv *s, const char *isvc)
{
        char *text = srv_models_json(s, isvc, NULL);
        json_error_t err;
        json_t *v;

        if (!text || !*text) {
                free(text);
                return json_array();
        }
        v = json_loads(text, 0, &err);
        cr_assert(json_is_array(v), "models.json of %s is not a JSON array (%s): %.200s", isvc,
                  err.text, text);
        free(text);
        return v;
}

bool srv_models_has(struct srv *s, const char *isvc, const char *tm)
{
        json_t *arr = srv_models(s, isvc), *e;
        bool found = false;
        size_t i;

        json_array_foreach(arr, i, e) {
                const char *n = json_string_value(json_object_get(e, "modelName"));
                if (n && streq(n, tm))
                        found = true;
        }
        json_decref(arr);
        return found;
}

static const json_t *find_cond(const json_t *obj, const char *type)
{
        json_t *c;
        size_t i;

        json_array_foreach(json_get_path(obj, "status", "conditions", NULL), i, c) {
                const char *t = json_string_value(json_object_get(c, "type"));
                if (t && streq(t, type))
                        return c;
        }
        return NULL;
}

const char *srv_cond_status(const json_t *obj, const char *type)
{
        return json_string_value(json_object_get(find_cond(obj, type), "status"));
}

const char *srv_cond_reason(const json_t *obj, const char *type)
{
        return json_string_value(json_object_get(find_cond(obj, type), "reason"));
}

const char *srv_cond_message(const json_t *obj, const char *type)
{
        return json_string_value(json_object_get(find_cond(obj, type), "message"));
}

bool srv_tm_cond(struct srv *s, const char *tm, const char *type, const char *status,
                 const char *reason)
{
        json_t *obj = srv_get(s, &srv_gvr_tm, tm);
        const char *st, *re;
        bool ok;

        st = srv_cond_status(obj, type);
        re = srv_cond_reason(obj, type);
        ok = st && streq(st, status) && (!reason || (re && streq(re, reason)));
        json_decref(obj);
        return ok;
}

bool srv_gone(struct srv *s, const struct gvr *r, const char *name)
{
        json_t *obj = srv_get(s, r, name);

        json_decref(obj);
        return obj == NULL;
}

char *srv_label(struct srv *s, const struct gvr *r, const char *name, const char *key)
{
        json_t *obj = srv_get(s, r, name);
        const char *v = json_get_string_path(obj, "metadata", "labels", key, NULL);
        char *out = v ? strdup(v) : NULL;

        json_decref(obj);
        return out;
}

/* ---- the controller process ---- */

static const char *modelplane_bin(char *buf, size_t len)
{
        const char *b = getenv("MODELPLANE_BIN");
        const char *root = getenv("MODELPLANE_BUILD_ROOT");

        if (b && *b)
                return b;
        cr_assert(root && *root, "neither MODELPLANE_BIN nor MODELPLANE_BUILD_ROOT is set");
        (void)snprintf(buf, len, "%s/src/cmd/modelplane", root);
        return buf;
}

static long file_size(const char *path)
{
        struct stat st;

        return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* Finds "<needle><number>" in the log after offset; 0 when absent. */
static unsigned log_port(const char *path, long offset, const char *needle)
{
        FILE *f = fopen(path, "re");
        char line[4096];
        unsigned port = 0;

        if (!f)
                return 0;
        if (fseek(f, offset, SEEK_SET) == 0)
                while (fgets(line, sizeof(line), f)) {
                        const char *p = strstr(line, needle);
                        if (p) {
                                unsigned long v = strtoul(p + strlen(needle), NULL, 10);
                                if (v > 0 && v < 65536)
                                        port = (unsigned)v;
                        }
                }
        (void)fclose(f);
        return port;
}

static size_t discard_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
        (void)ptr;
        (void)userdata;
        return size * nmemb;
}

struct body {
        char *data;
        size_t len;
};

static size_t collect_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
        struct body *b = userdata;
        size_t n = size * nmemb;
        char *p;

        if (b->len + n > 16u << 20)
                return 0;
        p = realloc(b->data, b->len + n + 1);
        if (!p)
                return 0;
        memcpy(p + b->len, ptr, n);
        b->data = p;
        b->len += n;
        b->data[b->len] = '\0';
        return n;
}

/* GET http://127.0.0.1:port/path; returns the HTTP status (0 on transport error). */
static long http_get(unsigned port, const char *path, struct body *ret_body)
{
        CURL *h = curl_easy_init();
        char url[128];
        long code = 0;

        if (!h)
                return 0;
        (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
        (void)curl_easy_setopt(h, CURLOPT_URL, url);
        (void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 5L);
        (void)curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        if (ret_body) {
                (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect_cb);
                (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, ret_body);
        } else
                (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard_cb);
        if (curl_easy_perform(h) == CURLE_OK)
                (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_cleanup(h);
        return code;
}

/* The log is gone with CI's checkout: a failing test prints the controller's last lines (and
 * any sanitizer report, which comes last) to stderr. */
static void dump_log_tail(const char *path)
{
        enum { KEEP = 80 };
        char *lines[KEEP] = { NULL };
        char buf[8192];
        size_t n = 0;
        FILE *f = fopen(path, "re");

        if (!f)
                return;
        while (fgets(buf, sizeof(buf), f)) {
                free(lines[n % KEEP]);
                lines[n % KEEP] = strdup(buf);
                n++;
        }
        (void)fclose(f);
        fprintf(stderr, "---- last %zu line(s) of %s\n", n < KEEP ? n : (size_t)KEEP, path);
        for (size_t i = n < KEEP ? 0 : n - KEEP; i < n; i++) {
                if (lines[i % KEEP])
                        fputs(lines[i % KEEP], stderr);
                free(lines[i % KEEP]);
                lines[i % KEEP] = NULL;
        }
        fprintf(stderr, "----\n");
}

void srv_controller_start(struct srv *s)
{
        char bin_buf[512], kc[512], lease[128], finalizer[64];
        const char *bin = modelplane_bin(bin_buf, sizeof(bin_buf));
        const char *root = getenv("MODELPLANE_BUILD_ROOT");
        const char *argv[24];
        size_t n = 0;
        long offset;
        pid_t pid;

        cr_assert_eq(s->ctrl, 0, "controller already running");
        controller_kubeconfig(kc, sizeof(kc));
        if (!s->log_path[0])
                (void)snprintf(s->log_path, sizeof(s->log_path), "%s/controller-%s.log",
                               root && *root ? root : "/tmp", s->ns);
        offset = file_size(s->log_path);
        (void)snprintf(lease, sizeof(lease), "modelplane-it-%s", s->ns);

        argv[n++] = bin;
        argv[n++] = "controller";
        argv[n++] = "--kubeconfig";
        argv[n++] = kc;
        argv[n++] = "--namespace";
        argv[n++] = s->ns;
        argv[n++] = "--health-probe-bind-address";
        argv[n++] = "127.0.0.1:0";
        argv[n++] = "--metrics-bind-address";
        argv[n++] = "127.0.0.1:0";
        if (s->leader_elect) {
                argv[n++] = "--leader-elect";
                argv[n++] = "--leader-election-id";
                argv[n++] = lease;
                argv[n++] = "--leader-election-namespace";
                argv[n++] = "modelplane-system";
        }
        if (s->finalizer) {
                (void)snprintf(finalizer, sizeof(finalizer), "--trainedmodel-finalizer=%s",
                               s->finalizer);
                argv[n++] = finalizer;
        }
        argv[n++] = "--zap-log-level";
        argv[n++] = "debug";
        argv[n] = NULL;

        pid = fork();
        cr_assert(pid >= 0, "fork: %d", errno);
        if (pid == 0) {
                int fd = open(s->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
                        _exit(126);
                execv(bin, (char *const *)argv);
                _exit(127);
        }
        s->ctrl = pid;

        s->probe_port = s->metrics_port = 0;
        for (int i = 0; i < 300 && !s->probe_port; i++) {
                srv_controller_assert_alive(s);
                s->probe_port = log_port(s->log_path, offset, "Serving health probes on port ");
                if (!s->probe_port)
                        srv_sleep_ms(100);
        }
        cr_assert(s->probe_port > 0, "controller did not report its probe port (log %s)",
                  s->log_path);
        s->metrics_port = log_port(s->log_path, offset, "Serving metrics on port ");
        for (int i = 0; i < SRV_TIMEOUT * 5; i++) {
                srv_controller_assert_alive(s);
                if (http_get(s->probe_port, "/readyz", NULL) == 200)
                        return;
                srv_sleep_ms(200);
        }
        dump_log_tail(s->log_path);
        cr_assert_fail("controller /readyz not 200 within %d s (log %s)", SRV_TIMEOUT, s->log_path);
}

void srv_controller_assert_alive(struct srv *s)
{
        int status = 0;
        pid_t r;

        cr_assert(s->ctrl > 0, "controller not started");
        r = waitpid(s->ctrl, &status, WNOHANG);
        if (r == s->ctrl) {
                s->ctrl = 0;
                dump_log_tail(s->log_path);
                cr_assert_fail("controller exited (%s %d), log %s",
                               WIFSIGNALED(status) ? "signal" : "status",
                               WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
                               s->log_path);
        }
}

void srv_controller_stop(struct srv *s)
{
        int status = 0;
        pid_t pid = s->ctrl;

        if (pid <= 0)
                return;
        (void)kill(pid, SIGTERM);
        for (int i = 0; i < 200; i++) {
                if (waitpid(pid, &status, WNOHANG) == pid) {
                        s->ctrl = 0;
                        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                                dump_log_tail(s->log_path);
                        cr_assert(
                                WIFEXITED(status) && WEXITSTATUS(status) == 0,
                                "controller did not exit cleanly on SIGTERM (status 0x%x), log %s",
                                (unsigned)status, s->log_path);
                        return;
                }
                srv_sleep_ms(100);
        }
        (void)kill(pid, SIGKILL);
        (void)waitpid(pid, &status, 0);
        s->ctrl = 0;
        cr_assert_fail("controller did not stop within 20 s of SIGTERM, log %s", s->log_path);
}

void srv_controller_kill(struct srv *s)
{
        int status;

        if (s->ctrl <= 0)
                return;
        (void)kill(s->ctrl, SIGKILL);
        (void)waitpid(s->ctrl, &status, 0);
        s->ctrl = 0;
}

double srv_metric(struct srv *s, const char *prefix)
{
        struct body b = { 0 };
        double sum = -1;
        long code;

        if (!s->metrics_port)
                return -1;
        code = http_get(s->metrics_port, "/metrics", &b);
        if (code == 200 && b.data) {
                sum = 0;
                for (char *line = b.data; line && *line;) {
                        char *nl = strchr(line, '\n');
                        if (nl)
                                *nl = '\0';
                        if (strneq(line, prefix, strlen(prefix))) {
                                const char *sp = strrchr(line, ' ');
                                if (sp)
                                        sum += strtod(sp + 1, NULL);
                        }
                        line = nl ? nl + 1 : NULL;
                }
        }
        free(b.data);
        return sum;
}

size_t srv_log_count(struct srv *s, const char *needle)
{
        FILE *f = fopen(s->log_path, "re");
        char line[8192];
        size_t n = 0;

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                if (strstr(line, needle))
                        n++;
        (void)fclose(f);
        return n;
}
