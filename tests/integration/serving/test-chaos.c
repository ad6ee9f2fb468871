/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Chaos: 500 TrainedModels created, updated, moved and deleted across 10 InferenceServices while
 * kube-apiserver is restarted 3 times (scripts/testenv restart-apiserver: kill -9, same port) and
 * the controller is SIGKILLed and restarted 3 times. At the end every models.json holds exactly
 * the admitted, undeleted TrainedModels of its InferenceService (with their latest storageUri),
 * admission is exact (min(capacity, models)), nothing is stuck Terminating, and deleting
 * everything leaves no TrainedModel and empty models.json behind. The controller runs with its
 * default --trainedmodel-finalizer (false: each entry leaves in the pass after its object is
 * gone, docs/serving.md); MODELPLANE_CHAOS_FINALIZER=true runs it with KServe's finalizer.
 *
 * Runs in its own control plane (run-suite.sh), never in a shared one: it kills the apiserver.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "json/json-util.h"
#include "util/macro.h"

enum {
        N_ISVC = 10,
        N_TM = 500,    /* 50 per InferenceService at first */
        CAPACITY = 30, /* 3000Mi limit / 100Mi models */
        N_UPDATE = 100,
        N_MOVE = 20,
        N_DELETE = 100,
};

static struct srv S;

static void setup(void)
{
        srv_setup(&S, "chaos");
        /* SIGKILL leaves the Lease held until it expires; leader election is covered elsewhere */
        S.leader_elect = false;
        S.finalizer = getenv("MODELPLANE_CHAOS_FINALIZER"); /* NULL: the default */
}

static void teardown(void)
{
        srv_teardown(&S);
}

/* Whether an API error is the API server being away (it is restarted under our feet): retry. */
static bool transient(int k)
{
        return k < 0 && k != -ENOENT && k != -EEXIST && k != -EINVAL && k != -EACCES && k != -EPERM;
}

#define RETRY_MAX 120 /* x 250 ms */

static void tm_name(int i, char *buf, size_t len)
{
        (void)snprintf(buf, len, "tm-%03d", i);
}

static void isvc_name(int i, char *buf, size_t len)
{
        (void)snprintf(buf, len, "isvc-%d", i);
}

static int parent_of[N_TM];
static int version_of[N_TM];
static bool deleted[N_TM];

static void create_tm(int i)
{
        char name[32], isvc[32], uri[64];
        json_t *obj;
        int k;

        tm_name(i, name, sizeof(name));
        isvc_name(parent_of[i], isvc, sizeof(isvc));
        (void)snprintf(uri, sizeof(uri), "s3://bucket/%s/v%d", name, version_of[i]);
        obj = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{s:s, s:s, s:s}}}", "apiVersion",
                        "serving.kserve.io/v1alpha1", "kind", "TrainedModel", "metadata", "name",
                        name, "spec", "inferenceService", isvc, "model", "storageUri", uri,
                        "framework", "sklearn", "memory", "100Mi");
        for (int a = 0; a < RETRY_MAX; a++) {
                k = kube_create(S.c, &srv_gvr_tm, S.ns, obj, NULL, NULL, NULL);
                if (!transient(k))
                        break;
                srv_sleep_ms(250);
        }
        json_decref(obj);
        cr_assert(k == 0 || k == -EEXIST, "create %s: %d", name, k);
}

static void patch_tm(int i)
{
        char name[32], isvc[32], uri[64];
        json_t *p;
        int k;

        tm_name(i, name, sizeof(name));
        isvc_name(parent_of[i], isvc, sizeof(isvc));
        (void)snprintf(uri, sizeof(uri), "s3://bucket/%s/v%d", name, version_of[i]);
        p = json_pack("{s:{s:s, s:{s:s}}}", "spec", "inferenceService", isvc, "model", "storageUri",
                      uri);
        for (int a = 0; a < RETRY_MAX; a++) {
                k = kube_patch(S.c, &srv_gvr_tm, S.ns, name, KUBE_PATCH_MERGE, p, NULL, NULL, NULL);
                if (!transient(k))
                        break;
                srv_sleep_ms(250);
        }
        json_decref(p);
        cr_assert_eq(k, 0, "patch %s: %d", name, k);
}

static void delete_tm(int i)
{
        char name[32];
        int k;

        tm_name(i, name, sizeof(name));
        for (int a = 0; a < RETRY_MAX; a++) {
                k = kube_delete(S.c, &srv_gvr_tm, S.ns, name, NULL, NULL, NULL);
                if (!transient(k))
                        break;
                srv_sleep_ms(250);
        }
        cr_assert(k == 0 || k == -ENOENT, "delete %s: %d", name, k);
        deleted[i] = true;
}

static void restart_apiserver(void)
{
        srv_sh("'%s/scripts/testenv' restart-apiserver '%s' >/dev/null 2>&1",
               getenv("MODELPLANE_SOURCE_ROOT"), getenv("MODELPLANE_TESTENV_DIR"));
}

static void restart_controller(void)
{
        srv_controller_kill(&S);
        srv_controller_start(&S);
}

static char why[1024];

/* Whether every models.json is empty; on false, why[] names the first that is not. */
static bool all_models_json_empty(void)
{
        for (int j = 0; j < N_ISVC; j++) {
                char isvc[32];
                char *mj;
                bool empty;

                isvc_name(j, isvc, sizeof(isvc));
                mj = srv_models_json(&S, isvc, NULL);
                empty = mj && streq(mj, "[]");
                if (!empty)
                        (void)snprintf(why, sizeof(why), "%s: models.json %.900s", isvc,
                                       mj ? mj : "(none)");
                free(mj);
                if (!empty)
                        return false;
        }
        return true;
}

/* Whether the world has converged; on false, why[] says what is off. */
static bool converged(void)
{
        json_t *list = NULL, *item;
        struct kube_status st = { 0 };
        size_t n_live = 0;
        bool ok = true;
        size_t i;
        int k;

        why[0] = '\0';
        k = kube_list(S.c, &srv_gvr_tm, S.ns, NULL, &list, &st);
        if (k < 0) {
                (void)snprintf(why, sizeof(why), "list: %d %s", k, st.message);
                return false;
        }
        for (int j = 0; j < N_ISVC && ok; j++) {
                char isvc[32];
                json_t *models;
                size_t on_isvc = 0, admitted = 0;

                isvc_name(j, isvc, sizeof(isvc));
                models = srv_models(&S, isvc);
                json_array_foreach(json_object_get(list, "items"), i, item) {
                        const char *name = json_get_string_path(item, "metadata", "name", NULL);
                        const char *parent = json_get_string_path(item, "spec", "inferenceService",
                                                                  NULL);
                        const char *uri = json_get_string_path(item, "spec", "model", "storageUri",
                                                               NULL);
                        const char *mem = srv_cond_status(item, "MemoryResourceAvailable");
                        const char *ready = srv_cond_status(item, "Ready");
                        bool adm = mem && streq(mem, "True");
                        const json_t *entry = NULL;
                        json_t *e;
                        size_t x;

                        if (!parent || !streq(parent, isvc))
                                continue;
                        if (json_get_path(item, "metadata", "deletionTimestamp", NULL)) {
                                (void)snprintf(why, sizeof(why), "%s Terminating", name);
                                ok = false;
                                break;
                        }
                        on_isvc++;
                        json_array_foreach(models, x, e)
                                if (streq(json_string_value(json_object_get(e, "modelName")), name))
                                        entry = e;
                        if (adm != (entry != NULL) || (adm && !(ready && streq(ready, "True")))) {
                                (void)snprintf(why, sizeof(why),
                                               "%s on %s: admitted %d, listed %d, Ready %s", name,
                                               isvc, adm, entry != NULL, ready ? ready : "-");
                                ok = false;
                                break;
                        }
                        if (entry &&
                            !streq(json_get_string_path(entry, "modelSpec", "storageUri", NULL),
                                   uri)) {
                                (void)snprintf(why, sizeof(why), "%s: stale storageUri in %s", name,
                                               isvc);
                                ok = false;
                                break;
                        }
                        admitted += adm;
                }
                if (ok && json_array_size(models) != admitted) {
                        (void)snprintf(why, sizeof(why),
                                       "%s: models.json has %zu entries, %zu admitted", isvc,
                                       json_array_size(models), admitted);
                        ok = false;
                }
                if (ok && admitted != (on_isvc < CAPACITY ? on_isvc : CAPACITY)) {
                        (void)snprintf(why, sizeof(why), "%s: %zu admitted of %zu (capacity %d)",
                                       isvc, admitted, on_isvc, CAPACITY);
                        ok = false;
                }
                n_live += on_isvc;
                json_decref(models);
        }
        if (ok && n_live != json_array_size(json_object_get(list, "items"))) {
                (void)snprintf(why, sizeof(why), "%zu TrainedModels, %zu on known parents",
                               json_array_size(json_object_get(list, "items")), n_live);
                ok = false;
        }
        json_decref(list);
        return ok;
}

Test(chaos, churn_with_apiserver_and_controller_restarts, .init = setup, .fini = teardown,
     .timeout = 900)
{
        int n_live = 0;

        cr_assert(getenv("MODELPLANE_TESTENV_DIR"), "needs MODELPLANE_TESTENV_DIR");
        for (int j = 0; j < N_ISVC; j++) {
                char isvc[32];
                isvc_name(j, isvc, sizeof(isvc));
                srv_isvc_create(&S, isvc, srv_predictor_tf("3000Mi"), NULL);
                srv_isvc_set_ready(&S, isvc, true);
        }
        for (int i = 0; i < N_TM; i++)
                parent_of[i] = i % N_ISVC;
        srv_controller_start(&S);

        /* phase 1: half of the creates, then the API server goes away under a busy controller */
        for (int i = 0; i < N_TM / 2; i++)
                create_tm(i);
        restart_apiserver(); /* 1 */
        /* phase 2: the other half, the controller killed in the middle */
        for (int i = N_TM / 2; i < N_TM; i++) {
                create_tm(i);
                if (i == N_TM / 2 + 120)
                        restart_controller(); /* 1 */
        }
        /* phase 3: updates (new storageUri) and moves to the next InferenceService */
        for (int u = 0; u < N_UPDATE; u++) {
                int i = (u * 7) % N_TM;
                version_of[i]++;
                if (u < N_MOVE)
                        parent_of[i] = (parent_of[i] + 1) % N_ISVC;
                patch_tm(i);
                if (u == N_UPDATE / 2)
                        restart_apiserver(); /* 2 */
        }
        restart_controller(); /* 2 */
        /* phase 4: deletes, with the API server restarted in the middle */
        for (int d = 0; d < N_DELETE; d++) {
                delete_tm((d * 5 + 3) % N_TM);
                if (d == N_DELETE / 2)
                        restart_apiserver(); /* 3 */
        }
        restart_controller(); /* 3 */

        for (int i = 0; i < N_TM; i++)
                n_live += !deleted[i];
        cr_assert_eq(n_live, N_TM - N_DELETE);

        SRV_WAIT(8 * SRV_TIMEOUT, converged(), "never converged: %s", why);
        srv_controller_assert_alive(&S);
        for (int i = 0; i < N_TM; i++) {
                char name[32];
                tm_name(i, name, sizeof(name));
                if (deleted[i])
                        cr_assert(srv_gone(&S, &srv_gvr_tm, name), "%s not gone", name);
        }
        cr_assert_eq(srv_count(&S, &srv_gvr_tm), (size_t)n_live);

        /* everything goes: no finalizer left behind, every models.json empty (with the
         * finalizer before the objects go, without it in the passes after) */
        for (int i = 0; i < N_TM; i++)
                if (!deleted[i])
                        delete_tm(i);
        SRV_WAIT(8 * SRV_TIMEOUT, srv_count(&S, &srv_gvr_tm) == 0,
                 "TrainedModels left behind (finalizers not removed)");
        if (S.finalizer && streq(S.finalizer, "true"))
                cr_assert(all_models_json_empty(), "%s after deleting everything", why);
        SRV_WAIT(8 * SRV_TIMEOUT, all_models_json_empty(), "%s after deleting everything", why);
        srv_controller_assert_alive(&S);
}
