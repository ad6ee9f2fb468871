/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Helpers for the TrainedModel controller's integration tests: a real kube-apiserver
 * (scripts/testenv, started per test binary by run-suite.sh with the CRD variant under test) and
 * the real `modelplane controller` binary as a subprocess, authenticated with a token of the
 * ServiceAccount bound to the shipped ClusterRole and Role (deploy/controller/).
 *
 * Every helper asserts (Criterion) instead of returning errors: a failure here is a failed test.
 * Criterion forks one process per test, so struct srv lives in the test's own process.
 *
 * Environment:
 *   MODELPLANE_KUBECONFIG      admin kubeconfig (unset: the tests skip)
 *   MODELPLANE_TESTENV_DIR     the testenv directory (RBAC, ServiceAccount kubeconfig, restarts)
 *   MODELPLANE_SOURCE_ROOT     the repository (deploy/controller/ and scripts/testenv)
 *   MODELPLANE_BIN             the modelplane executable (else $MODELPLANE_BUILD_ROOT/src/cmd/modelplane)
 *   MODELPLANE_SERVING_VARIANT deploy | kserve | kserve-minimal: which CRDs the testenv has
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "kube/client.h"

extern const struct gvr srv_gvr_tm;
extern const struct gvr srv_gvr_isvc;
extern const struct gvr srv_gvr_cm;

/* One test's world. */
struct srv {
        struct kube_config *cfg; /* owned; admin */
        struct kube_client *c;   /* owned; admin client */
        char ns[64];             /* the test's own namespace */
        pid_t ctrl;              /* the controller process, 0 when not running */
        char log_path[512];      /* the controller's stdout+stderr (appended across restarts) */
        unsigned probe_port;
        unsigned metrics_port;
        bool leader_elect;     /* run the controller with --leader-elect (default true) */
        const char *finalizer; /* --trainedmodel-finalizer=<this>; NULL: the default */
};

/* Skips unless MODELPLANE_KUBECONFIG is set; admin client; creates the namespace
 * "<prefix>-<pid>"; applies the controller's RBAC once per testenv. */
void srv_setup(struct srv *s, const char *prefix);
/* Stops the controller (if running), drops leftover finalizers, deletes the namespace. */
void srv_teardown(struct srv *s);

/* "deploy" (default), "kserve" or "kserve-minimal". */
const char *srv_variant(void);
/* Whether the CRDs under test validate TrainedModel specs (all but kserve-minimal). */
bool srv_crd_validates(void);

/* Parses printf(fmt, ...) as JSON after turning every ' into ". Returns: owned. */
json_t *srv_json(const char *fmt, ...) _printf_(1, 2);

/* Creates obj (stolen) in the test namespace. */
void srv_create(struct srv *s, const struct gvr *r, json_t *obj);
/* Same, returns 0 or the client's negative errno (st filled) instead of asserting. */
int srv_try_create(struct srv *s, const struct gvr *r, json_t *obj, struct kube_status *st);
/* GET; NULL when it does not exist. Returns: owned. */
json_t *srv_get(struct srv *s, const struct gvr *r, const char *name);
/* Merge patch (stolen) of the object or its subresource ("status" or NULL). */
void srv_patch(struct srv *s, const struct gvr *r, const char *name, const char *subresource,
               json_t *patch);
/* DELETE; propagation NULL for the server default. 404 is fine. */
void srv_delete(struct srv *s, const struct gvr *r, const char *name, const char *propagation);
/* Number of objects of r in the namespace. */
size_t srv_count(struct srv *s, const struct gvr *r);

/* InferenceService name with spec.predictor = predictor (stolen), labels (stolen, may be NULL). */
void srv_isvc_create(struct srv *s, const char *name, json_t *predictor, json_t *labels);
/* The standard predictor of §9: tensorflow, kserve-container, cpu 1, memory limit. Returns: owned. */
json_t *srv_predictor_tf(const char *memory_limit);
/* Sets the status: ready (Ready/PredictorReady/IngressReady True, url, address.url) or not. */
void srv_isvc_set_ready(struct srv *s, const char *name, bool ready);
/* The URL srv_isvc_set_ready writes: http://<name>-predictor.<ns>.example.com; address:
 * http://<name>-predictor.<ns>.svc.cluster.local. Written into buf. */
void srv_isvc_url(struct srv *s, const char *name, bool address, char *buf, size_t len);
/* TrainedModel with spec.model = {storageUri, framework, memory}. */
void srv_tm_create(struct srv *s, const char *name, const char *isvc, const char *uri,
                   const char *framework, const char *memory);
/* ConfigMap modelconfig-<isvc>-0 with data models.json (NULL: no data). */
void srv_cm_create(struct srv *s, const char *isvc, const char *models_json);

/* data["models.json"] of modelconfig-<isvc>-0; NULL when the ConfigMap does not exist, "" when
 * the key is missing. If ret_rv, stores the ConfigMap's resourceVersion (owned). Returns: owned. */
char *srv_models_json(struct srv *s, const char *isvc, char **ret_rv);
/* Entries of models.json as a JSON array; empty array when absent. Returns: owned. */
json_t *srv_models(struct srv *s, const char *isvc);
/* Whether models.json lists modelName tm. */
bool srv_models_has(struct srv *s, const char *isvc, const char *tm);

/* status of condition type of an object (borrowed strings, NULL if absent). */
const char *srv_cond_status(const json_t *obj, const char *type);
const char *srv_cond_reason(const json_t *obj, const char *type);
const char *srv_cond_message(const json_t *obj, const char *type);
/* Whether TrainedModel tm has condition type with status (and reason, unless NULL). */
bool srv_tm_cond(struct srv *s, const char *tm, const char *type, const char *status,
                 const char *reason);
/* Whether the object is gone (404). */
bool srv_gone(struct srv *s, const struct gvr *r, const char *name);
/* labels[key] of the object (owned copy, NULL when absent). */
char *srv_label(struct srv *s, const struct gvr *r, const char *name, const char *key);

/* Starts `modelplane controller` for the test namespace with the ServiceAccount's kubeconfig,
 * probes and metrics on 127.0.0.1:0; waits until /readyz answers 200 (up to 30 s). */
void srv_controller_start(struct srv *s);
/* SIGTERM, wait up to 20 s (then SIGKILL); asserts it exited 0 when it stopped in time. */
void srv_controller_stop(struct srv *s);
/* SIGKILL and reap. */
void srv_controller_kill(struct srv *s);
/* Asserts that the controller process has not exited. */
void srv_controller_assert_alive(struct srv *s);
/* Sum of the samples of a metric family from the controller's /metrics whose line starts
 * with prefix (e.g. "controller_runtime_reconcile_total{"); -1 when unreachable. */
double srv_metric(struct srv *s, const char *prefix);
/* Number of controller log lines containing needle. */
size_t srv_log_count(struct srv *s, const char *needle);

void srv_sleep_ms(long ms);

/* Runs a shell command (sh -c) and asserts it exits 0. */
void srv_sh(const char *fmt, ...) _printf_(1, 2);

/* Polls cond every 200 ms for up to timeout_s seconds, then asserts it once more. */
#define SRV_WAIT(timeout_s, cond, ...)                                      \
        do {                                                                \
                bool ok_ = false;                                           \
                for (unsigned i_ = 0; i_ < (unsigned)(timeout_s)*5; i_++) { \
                        if ((cond)) {                                       \
                                ok_ = true;                                 \
                                break;                                      \
                        }                                                   \
                        srv_sleep_ms(200);                                  \
                }                                                           \
                if (!ok_)                                                   \
                        ok_ = (cond);                                       \
                cr_assert(ok_, __VA_ARGS__);                                \
        } while (0)

/* The default bound of a wait: generous for a loaded 2-core machine. */
#define SRV_TIMEOUT 30
