/* SPDX-License-Identifier: Apache-2.0 */
#include "serving/spread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "serving/conditions.h"
#include "serving/report.h"
#include "util/buf.h"

/* Declared replicas beyond this are not planned for (virtual replicas of admission). */
#define SPREAD_DECLARED_MAX 1024U
/* "not-reporting-yet#<n>": '#' is in no pod name, so no virtual id is a real one. */
#define VIRTUAL_ID_FMT "not-reporting-yet#%u"
#define VIRTUAL_ID_MAX 32

/* ---- the annotations ---- */

int spread_copies_parse(const char *value, unsigned *ret)
{
        unsigned v = 0;

        if (!value || value[0] == '\0')
                return -EINVAL;
        if (streq(value, SPREAD_COPIES_ALL)) {
                *ret = PLACEMENT_COPIES_ALL;
                return 0;
        }
        if (value[0] == '0')
                return -EINVAL;
        for (const char *p = value; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned)(*p - '0');
                if (v > SPREAD_COPIES_MAX)
                        return -EINVAL;
        }
        *ret = v;
        return 0;
}

bool spread_enabled(const json_t *isvc)
{
        const char *v = json_get_string_path(isvc, "metadata", "annotations", SPREAD_ANNOTATION,
                                             NULL);

        return v && streq(v, SPREAD_ON);
}

unsigned spread_declared_replicas(const json_t *isvc)
{
        const json_t *v = json_get_path(isvc, "spec", "predictor", "minReplicas", NULL);
        json_int_t n = json_is_integer(v) ? json_integer_value(v) : 1;

        if (n < 1)
                return 1;
        return n > (json_int_t)SPREAD_DECLARED_MAX ? SPREAD_DECLARED_MAX : (unsigned)n;
}

int spread_assignment_name(const char *isvc, const char *pod, char *buf, size_t len)
{
        int n = snprintf(buf, len, "modelconfig-%s-%s", isvc, pod);

        if (n < 0 || (size_t)n >= len || n > SPREAD_NAME_MAX)
                return -ENAMETOOLONG;
        return 0;
}

/* ---- the result ---- */

void spread_tm_free(struct spread_tm *t)
{
        if (!t)
                return;
        for (size_t i = 0; i < t->n_pods; i++)
                free(t->pods[i]);
        free(t->pods);
        free(t->note);
        free(t->failed);
        free(t);
}

void spread_result_release(struct spread_result *r)
{
        for (size_t i = 0; r->models && i < r->n_models; i++) {
                free(r->models[i].refusal);
                spread_tm_free(r->models[i].tm);
        }
        free(r->models);
        for (size_t i = 0; r->replicas && i < r->n_replicas; i++)
                model_entries_release(&r->replicas[i].observed);
        free(r->replicas);
        replica_set_release(&r->set);
        *r = (struct spread_result){ 0 };
}

/* The index of the replica of @pod, or -1 (replicas are sorted by pod). */
static long replica_find(const struct spread_result *res, const char *pod)
{
        size_t lo = 0, hi = res->n_replicas;

        while (pod && lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int d = strcmp(pod, res->replicas[mid].pod);

                if (d == 0)
                        return (long)mid;
                if (d < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return -1;
}

static bool takes_models(const struct spread_replica *x)
{
        return !x->draining && x->writable;
}

/* The replicas: counted, non-stale reports, one per pod. */
static int read_replicas(const struct spread_input *in, struct spread_result *res)
{
        int k = replica_set_build((json_t *)in->configmaps, in->now, &res->set);
        const char *last = NULL;

        if (k < 0)
                return k;
        res->replicas = calloc(res->set.n + 1, sizeof(*res->replicas));
        if (!res->replicas)
                return -ENOMEM;
        for (size_t i = 0; i < res->set.n; i++) {
                const struct replica *rp = &res->set.items[i];
                struct spread_replica *x;

                /* the set is sorted by pod: a pod reported twice is taken once */
                if (rp->stale || !rp->pod || rp->pod[0] == '\0' || (last && streq(last, rp->pod)))
                        continue;
                last = rp->pod;
                x = &res->replicas[res->n_replicas++];
                x->pod = rp->pod;
                x->owner_name = rp->owner_name ? rp->owner_name : rp->pod;
                x->owner_uid = rp->owner_uid;
                x->draining = rp->report.draining;
                x->report = rp;
                x->capacity = in->capacity;
                x->writable = spread_assignment_name(in->isvc, rp->pod, x->name, sizeof(x->name)) >=
                              0;
                model_entries_init(&x->observed);
                res->n_live += takes_models(x);
        }
        return 0;
}

static bool is_our_assignment(const struct spread_input *in, const json_t *cm)
{
        const char *isvc = json_get_string_path(cm, "metadata", "labels", REPLICAS_ISVC_LABEL,
                                                NULL);

        return replicas_is_assignment(cm) && isvc && streq(isvc, in->isvc) &&
               json_get_string_path(cm, "metadata", "name", NULL);
}

/* Each replica's assignment as last written; models being deleted that one lists keep their
 * memory there. */
static void read_assignments(const struct spread_input *in, struct spread_result *res)
{
        size_t i;
        json_t *cm;

        json_array_foreach(in->configmaps, i, cm) {
                const char *name = json_get_string_path(cm, "metadata", "name", NULL);

                if (!is_our_assignment(in, cm))
                        continue;
                for (size_t r = 0; r < res->n_replicas; r++) {
                        struct spread_replica *x = &res->replicas[r];

                        if (!x->writable || !streq(x->name, name))
                                continue;
                        x->assignment = cm;
                        /* an unreadable one holds nothing: it is rewritten */
                        if (modelconfig_parse(json_get_string_path(cm, "data", MODELCONFIG_KEY,
                                                                   NULL),
                                              &x->observed, NULL, 0) < 0)
                                model_entries_init(&x->observed);
                        break;
                }
        }
        for (size_t h = 0; h < in->n_held; h++)
                for (size_t r = 0; r < res->n_replicas; r++) {
                        struct spread_replica *x = &res->replicas[r];

                        if (in->held[h].name &&
                            model_entries_find_sorted(&x->observed, in->held[h].name))
                                x->capacity -= MIN(x->capacity, in->held[h].memory);
                }
}

/* Marks failed[r] for the replicas where model @m failed to load at its storageUri: reported
 * so now, or recorded in its status earlier. */
static void mark_failed(const struct spread_result *res, const struct spread_model *m, bool *failed)
{
        const char *record = json_get_string_path(m->status, "annotations",
                                                  SPREAD_FAILED_ANNOTATION, NULL);
        json_auto_t *doc = NULL;
        const char *uri;
        size_t i;
        json_t *pod;

        for (size_t r = 0; r < res->n_replicas; r++) {
                const struct report_model *rm = report_find(&res->replicas[r].report->report,
                                                            m->name);

                failed[r] = rm && streq(rm->state, "FailedToLoad") &&
                            (!rm->storage_uri || !m->storage_uri ||
                             streq(rm->storage_uri, m->storage_uri));
        }
        doc = record ? json_loads(record, 0, NULL) : NULL;
        uri = json_get_string_path(doc, "storageUri", NULL);
        if (!uri || !m->storage_uri || !streq(uri, m->storage_uri))
                return;
        json_array_foreach(json_object_get(doc, "pods"), i, pod) {
                long r = replica_find(res, json_string_value(pod));

                if (r >= 0)
                        failed[r] = true;
        }
}

/* The modelplane.io/failed record of the marked replicas, NULL when none. */
static int failed_record(const struct spread_result *res, const struct spread_model *m,
                         const bool *failed, char **ret)
{
        json_auto_t *pods = json_array(), *doc = NULL;

        *ret = NULL;
        if (!pods)
                return -ENOMEM;
        for (size_t r = 0; r < res->n_replicas; r++)
                if (failed[r] && json_array_append_new(pods, json_string(res->replicas[r].pod)) < 0)
                        return -ENOMEM;
        if (json_array_size(pods) == 0)
                return 0;
        doc = json_pack("{s:s?, s:O}", "storageUri", m->storage_uri, "pods", pods);
        *ret = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
        return *ret ? 0 : -ENOMEM;
}

/* ---- the two planner runs ---- */

/* A growing array of borrowed strings; models keep offsets into it until it stops moving. */
struct idv {
        const char **v;
        size_t n, cap;
};

static int idv_push(struct idv *a, const char *s)
{
        if (a->n == a->cap) {
                size_t cap = a->cap ? a->cap * 2 : 64;
                const char **v = realloc(a->v, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                a->v = v;
                a->cap = cap;
        }
        a->v[a->n++] = s;
        return 0;
}

struct run {
        struct placement_replica *reps;
        struct placement_model *models;
        size_t *holders_at, *failed_at; /* offsets into holders/failed, parallel to models */
        struct idv holders, failed;
        bool *marks; /* scratch per replica */
        char (*virtual_ids)[VIRTUAL_ID_MAX];
};

static void run_release(struct run *u)
{
        free(u->reps);
        free(u->models);
        free(u->holders_at);
        free(u->failed_at);
        free(u->holders.v);
        free(u->failed.v);
        free(u->marks);
        free(u->virtual_ids);
}

/* Run A's model @mi: holders, failures (and the status record of them). */
static int run_a_model(const struct spread_input *in, struct spread_result *res, struct run *u,
                       size_t mi)
{
        const struct spread_model *m = &in->models[mi];
        struct spread_model_result *mr = &res->models[mi];
        bool everywhere = res->n_live > 0;
        int k;

        u->holders_at[mi] = u->holders.n;
        u->failed_at[mi] = u->failed.n;
        mark_failed(res, m, u->marks);
        for (size_t r = 0; r < res->n_replicas; r++) {
                const struct spread_replica *x = &res->replicas[r];

                if (model_entries_find_sorted(&x->observed, m->name) &&
                    idv_push(&u->holders, x->pod) < 0)
                        return -ENOMEM;
                if (u->marks[r] && idv_push(&u->failed, x->pod) < 0)
                        return -ENOMEM;
                if (takes_models(x) && !u->marks[r])
                        everywhere = false;
        }
        mr->tm = calloc(1, sizeof(*mr->tm));
        if (!mr->tm)
                return -ENOMEM;
        mr->tm->failed_everywhere = everywhere; /* until it turns out placed */
        k = failed_record(res, m, u->marks, &mr->tm->failed);
        if (k < 0)
                return k;
        u->models[mi] = (struct placement_model){
                .name = m->name,
                .memory = m->memory,
                .copies = m->copies,
                .n_holders = u->holders.n - u->holders_at[mi],
                .n_failed = u->failed.n - u->failed_at[mi],
        };
        return 0;
}

/* Run A: the real replicas; the result's models get their pods. */
static int run_a(const struct spread_input *in, struct spread_result *res, struct run *u,
                 struct placement_result *ret)
{
        int k;

        for (size_t r = 0; r < res->n_replicas; r++) {
                const struct spread_replica *x = &res->replicas[r];

                u->reps[r] = (struct placement_replica){
                        .id = x->pod,
                        .capacity = x->capacity,
                        .state = takes_models(x) ? PLACEMENT_LIVE : PLACEMENT_DRAINING,
                };
        }
        for (size_t mi = 0; mi < in->n_models; mi++) {
                k = run_a_model(in, res, u, mi);
                if (k < 0)
                        return k;
        }
        /* the arrays stopped growing: point the models into them */
        for (size_t mi = 0; mi < in->n_models; mi++) {
                u->models[mi].holders = u->holders.v + u->holders_at[mi];
                u->models[mi].failed = u->failed.v + u->failed_at[mi];
        }
        return placement_compute(&(struct placement_input){ .replicas = u->reps,
                                                            .n_replicas = res->n_replicas,
                                                            .models = u->models,
                                                            .n_models = in->n_models },
                                 ret);
}

/* Run B (admission of what A placed nowhere): one copy over what A left free on the live
 * replicas, failures ignored, and the declared replicas that do not report yet. */
static int run_b(const struct spread_input *in, const struct spread_result *res, struct run *u,
                 const struct placement_result *a, struct placement_result *ret, size_t **ret_idx)
{
        unsigned n_virtual = in->declared > res->n_live ? in->declared - (unsigned)res->n_live : 0;
        size_t nr = 0, nm = 0;

        u->virtual_ids = calloc(n_virtual + 1, sizeof(*u->virtual_ids));
        *ret_idx = calloc(in->n_models + 1, sizeof(**ret_idx));
        if (!u->virtual_ids || !*ret_idx)
                return -ENOMEM;
        for (size_t r = 0; r < res->n_replicas; r++)
                if (takes_models(&res->replicas[r]))
                        u->reps[nr++] = (struct placement_replica){
                                .id = res->replicas[r].pod,
                                .capacity = res->replicas[r].capacity - a->assigned[r],
                        };
        for (unsigned v = 0; v < n_virtual; v++) {
                (void)snprintf(u->virtual_ids[v], VIRTUAL_ID_MAX, VIRTUAL_ID_FMT, v + 1);
                u->reps[nr++] = (struct placement_replica){ .id = u->virtual_ids[v],
                                                            .capacity = in->capacity };
        }
        for (size_t mi = 0; mi < in->n_models; mi++) {
                if (a->models[mi].n > 0)
                        continue;
                (*ret_idx)[nm] = mi;
                u->models[nm++] = (struct placement_model){ .name = in->models[mi].name,
                                                            .memory = in->models[mi].memory,
                                                            .copies = 1 };
        }
        return placement_compute(&(struct placement_input){ .replicas = u->reps,
                                                            .n_replicas = nr,
                                                            .models = u->models,
                                                            .n_models = nm },
                                 ret);
}

/* Copies the pods and notes of run A into the model's result. */
static int take_a(const struct spread_result *res, const struct placement_assignment *pa,
                  struct spread_tm *tm)
{
        tm->pods = calloc(pa->n + 1, sizeof(*tm->pods));
        if (!tm->pods)
                return -ENOMEM;
        for (size_t j = 0; j < pa->n; j++) {
                tm->pods[j] = strdup(res->replicas[pa->replicas[j]].pod);
                if (!tm->pods[j])
                        return -ENOMEM;
                tm->n_pods++;
        }
        tm->wanted = pa->wanted ? pa->wanted : 1;
        if (pa->n > 0)
                tm->failed_everywhere = false;
        if (pa->n == 0 && res->n_live == 0)
                tm->note = strdup("no serving replica reports model status yet");
        else if (pa->shortfall)
                tm->note = strdup(pa->shortfall);
        else
                return 0;
        return tm->note ? 0 : -ENOMEM;
}

static int collect(const struct spread_input *in, struct spread_result *res,
                   const struct placement_result *a, const struct placement_result *b,
                   const size_t *b_idx)
{
        int k;

        for (size_t mi = 0; mi < in->n_models; mi++) {
                k = take_a(res, &a->models[mi], res->models[mi].tm);
                if (k < 0)
                        return k;
                res->models[mi].admitted = a->models[mi].n > 0;
        }
        for (size_t j = 0; j < b->n_models; j++) {
                struct spread_model_result *mr = &res->models[b_idx[j]];

                mr->admitted = b->models[j].n > 0;
                if (mr->admitted)
                        continue;
                mr->refusal = strdup(b->models[j].shortfall ? b->models[j].shortfall
                                                            : "no replica can hold it");
                if (!mr->refusal)
                        return -ENOMEM;
        }
        res->moved = a->moved;
        return 0;
}

static int compute(const struct spread_input *in, struct spread_result *res)
{
        CLEANUP(placement_result_release) struct placement_result a = { 0 }, b = { 0 };
        unsigned n_virtual = in->declared > res->n_live ? in->declared - (unsigned)res->n_live : 0;
        struct run u = { 0 };
        AUTOFREE size_t *b_idx = NULL;
        int k = -ENOMEM;

        u.reps = calloc(res->n_replicas + n_virtual + 1, sizeof(*u.reps));
        u.models = calloc(in->n_models + 1, sizeof(*u.models));
        u.holders_at = calloc(in->n_models + 1, sizeof(*u.holders_at));
        u.failed_at = calloc(in->n_models + 1, sizeof(*u.failed_at));
        u.marks = calloc(res->n_replicas + 1, sizeof(*u.marks));
        if (u.reps && u.models && u.holders_at && u.failed_at && u.marks)
                k = run_a(in, res, &u, &a);
        if (k >= 0)
                k = run_b(in, res, &u, &a, &b, &b_idx);
        if (k >= 0)
                k = collect(in, res, &a, &b, b_idx);
        run_release(&u);
        return k;
}

int spread_compute(const struct spread_input *in, struct spread_result *ret)
{
        struct spread_result res = { .n_models = in->n_models };
        int k;

        if (!in->isvc || !in->namespace_)
                return -EINVAL;
        res.models = calloc(in->n_models + 1, sizeof(*res.models));
        if (!res.models)
                return -ENOMEM;
        k = read_replicas(in, &res);
        if (k >= 0) {
                read_assignments(in, &res);
                k = compute(in, &res);
        }
        if (k < 0) {
                spread_result_release(&res);
                return k;
        }
        *ret = res;
        return 0;
}

/* ---- the writes ---- */

void spread_writes_free(struct spread_write *w, size_t n)
{
        for (size_t i = 0; w && i < n; i++) {
                free(w[i].name);
                json_decref(w[i].body);
        }
        free(w);
}

/* The metadata an assignment carries (labels, annotation, owner), as a new object. */
static json_t *assignment_meta(const struct spread_input *in, const struct spread_replica *x)
{
        json_auto_t *meta = json_pack("{s:{s:s, s:s}, s:{s:s}}", "labels", REPLICAS_ISVC_LABEL,
                                      in->isvc, REPLICAS_PLACEMENT_LABEL,
                                      REPLICAS_PLACEMENT_ASSIGNMENT, "annotations",
                                      SPREAD_POD_ANNOTATION, x->pod);

        if (meta && x->owner_uid &&
            json_object_set_new(meta, "ownerReferences",
                                json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "v1", "kind",
                                          "Pod", "name", x->owner_name, "uid", x->owner_uid)) < 0)
                return NULL;
        return TAKE_PTR(meta);
}

/* Does the observed metadata already say what @want does? */
static bool meta_same(const json_t *observed, const json_t *want)
{
        const char *key;
        json_t *v;

        json_object_foreach((json_t *)want, key, v) {
                const json_t *have = json_object_get(observed, key);
                const char *k2;
                json_t *v2;

                if (!have)
                        return false;
                if (!json_is_object(v)) {
                        if (!json_equal(v, (json_t *)have))
                                return false;
                        continue;
                }
                json_object_foreach(v, k2, v2)
                        if (!json_equal(v2, json_object_get(have, k2)))
                                return false;
        }
        return true;
}

static int write_push(struct spread_write **w, size_t *n, enum spread_op op, const char *name,
                      json_t *body /* steals */)
{
        struct spread_write *nw = realloc(*w, (*n + 1) * sizeof(**w));

        if (!nw) {
                json_decref(body);
                return -ENOMEM;
        }
        *w = nw;
        nw[*n] = (struct spread_write){ .op = op, .name = strdup(name), .body = body };
        if (!nw[*n].name) {
                json_decref(body);
                return -ENOMEM;
        }
        (*n)++;
        return 0;
}

/* The write of one replica's assignment, if it differs from what is observed. */
static int plan_replica(const struct spread_input *in, const struct spread_replica *x,
                        const char *models_json, struct spread_write **w, size_t *n)
{
        json_auto_t *meta = assignment_meta(in, x);
        const char *have = json_get_string_path(x->assignment, "data", MODELCONFIG_KEY, NULL);
        json_t *body;

        if (!meta)
                return -ENOMEM;
        if (x->assignment && have && streq(have, models_json) &&
            meta_same(json_object_get(x->assignment, "metadata"), meta))
                return 0;
        if (!x->assignment) {
                if (json_object_set_new(meta, "name", json_string(x->name)) < 0 ||
                    json_object_set_new(meta, "namespace", json_string(in->namespace_)) < 0)
                        return -ENOMEM;
                body = json_pack("{s:s, s:s, s:O, s:{s:s}}", "apiVersion", "v1", "kind",
                                 "ConfigMap", "metadata", meta, "data", MODELCONFIG_KEY,
                                 models_json);
                return body ? write_push(w, n, SPREAD_CREATE, x->name, body) : -ENOMEM;
        }
        body = json_pack("{s:O, s:{s:s}}", "metadata", meta, "data", MODELCONFIG_KEY, models_json);
        return body ? write_push(w, n, SPREAD_PATCH, x->name, body) : -ENOMEM;
}

/* Each replica's entries: the listed models assigned to it. */
static int entries_by_replica(const struct spread_input *in, struct spread_result *res,
                              struct model_entries *lists)
{
        int k;

        for (size_t mi = 0; mi < in->n_models; mi++) {
                const struct model_entry *e = in->models[mi].entry;
                const struct spread_tm *tm = res->models[mi].tm;

                for (size_t j = 0; e && tm && j < tm->n_pods; j++) {
                        long r = replica_find(res, tm->pods[j]);

                        if (r < 0)
                                continue;
                        k = model_entries_append(&lists[r], e->name, e->storage_uri, e->framework,
                                                 e->memory);
                        if (k < 0)
                                return k;
                        res->replicas[r].assigned += in->models[mi].memory;
                        res->replicas[r].n_models++;
                }
        }
        return 0;
}

/* Deletes of the assignments of pods that are no longer replicas. */
static int plan_deletes(const struct spread_input *in, const struct spread_result *res,
                        struct spread_write **w, size_t *n)
{
        size_t i;
        json_t *cm;
        int k;

        json_array_foreach(in->configmaps, i, cm) {
                const char *name = json_get_string_path(cm, "metadata", "name", NULL);
                bool current = false;

                if (!is_our_assignment(in, cm))
                        continue;
                for (size_t r = 0; r < res->n_replicas && !current; r++)
                        current = res->replicas[r].writable && streq(res->replicas[r].name, name);
                if (current)
                        continue;
                k = write_push(w, n, SPREAD_DELETE, name, NULL);
                if (k < 0)
                        return k;
        }
        return 0;
}

static int plan_all(const struct spread_input *in, struct spread_result *res,
                    struct model_entries *lists, struct spread_write **w, size_t *n)
{
        int k = entries_by_replica(in, res, lists);

        for (size_t r = 0; k >= 0 && r < res->n_replicas; r++) {
                AUTOFREE char *models_json = NULL;

                if (!takes_models(&res->replicas[r]))
                        continue; /* draining: keeps what it has until it stops */
                k = modelconfig_serialize(&lists[r], &models_json, NULL);
                if (k >= 0)
                        k = plan_replica(in, &res->replicas[r], models_json, w, n);
        }
        return k < 0 ? k : plan_deletes(in, res, w, n);
}

int spread_plan_writes(const struct spread_input *in, struct spread_result *res,
                       struct spread_write **ret, size_t *ret_n)
{
        struct model_entries *lists = calloc(res->n_replicas + 1, sizeof(*lists));
        struct spread_write *w = NULL;
        size_t n = 0;
        int k;

        if (!lists)
                return -ENOMEM;
        for (size_t r = 0; r < res->n_replicas; r++) {
                model_entries_init(&lists[r]);
                res->replicas[r].assigned = 0;
                res->replicas[r].n_models = 0;
        }
        k = plan_all(in, res, lists, &w, &n);
        for (size_t r = 0; r < res->n_replicas; r++)
                model_entries_release(&lists[r]);
        free(lists);
        if (k < 0) {
                spread_writes_free(w, n);
                return k;
        }
        *ret = w;
        *ret_n = n;
        return 0;
}

int spread_plan_cleanup(const char *isvc, const json_t *configmaps, struct spread_write **ret,
                        size_t *ret_n)
{
        const struct spread_input in = { .isvc = isvc, .configmaps = configmaps };
        const struct spread_result none = { 0 };
        struct spread_write *w = NULL;
        size_t n = 0;
        int k;

        k = plan_deletes(&in, &none, &w, &n);
        if (k < 0) {
                spread_writes_free(w, n);
                return k;
        }
        *ret = w;
        *ret_n = n;
        return 0;
}

/* ---- status ---- */

char *spread_status_summary(const struct spread_result *res)
{
        json_auto_t *arr = json_array();

        if (!arr)
                return NULL;
        for (size_t r = 0; r < res->n_replicas && r < SPREAD_STATUS_PODS_MAX; r++) {
                const struct spread_replica *x = &res->replicas[r];
                json_t *o = json_pack("{s:s, s:I, s:I, s:I}", "pod", x->pod, "models",
                                      (json_int_t)x->n_models, "assigned", (json_int_t)x->assigned,
                                      "capacity", (json_int_t)x->capacity);

                if (!o || (x->draining && json_object_set_new(o, "draining", json_true()) < 0) ||
                    json_array_append_new(arr, o) < 0)
                        return NULL;
        }
        return json_dumps(arr, JSON_COMPACT);
}

int spread_isvc_status_patch(const json_t *isvc, const char *value, json_t **ret)
{
        const json_t *have = json_get_path(isvc, "status", "annotations", SPREAD_ANNOTATION, NULL);

        *ret = NULL;
        if ((!value && !have) ||
            (value && json_is_string(have) && streq(json_string_value(have), value)))
                return 0;
        *ret = json_pack("{s:{s:{s:o}}}", "status", "annotations", SPREAD_ANNOTATION,
                         value ? json_string(value) : json_null());
        return *ret ? 0 : -ENOMEM;
}

/* ModelLoaded of a model placed nowhere: NotPlaced, or FailedToLoad when every replica failed. */
static int summarize_unplaced(const struct spread_tm *tm, struct model_loaded *m)
{
        *m = (struct model_loaded){ .force = true, .detail = json_array() };
        if (!m->detail)
                return -ENOMEM;
        if (tm->failed_everywhere) {
                m->status = CONDITION_STATUS_FALSE;
                m->reason = "FailedToLoad";
                m->message = strdup("0/0 copies loaded: it failed to load on every live replica");
        } else {
                m->status = CONDITION_STATUS_UNKNOWN;
                m->reason = SPREAD_REASON_NOT_PLACED;
                if (asprintf(&m->message, "0/0 copies loaded: %s",
                             tm->note ? tm->note : "not placed yet") < 0)
                        m->message = NULL;
        }
        return m->message ? 0 : -ENOMEM;
}

static int set_failed_annotation(json_t *status, const char *failed)
{
        json_t *ann = json_object_get(status, "annotations");

        if (!failed) {
                if (json_is_object(ann))
                        (void)json_object_del(ann, SPREAD_FAILED_ANNOTATION);
                return 0;
        }
        if (!json_is_object(ann)) {
                ann = json_object();
                if (!ann || json_object_set_new(status, "annotations", ann) < 0)
                        return -ENOMEM;
        }
        return json_object_set_new(ann, SPREAD_FAILED_ANNOTATION, json_string(failed)) < 0 ? -ENOMEM
                                                                                           : 0;
}

int spread_status_apply(json_t *status, const json_t *observed, const struct replica_set *set,
                        const char *model, const char *storage_uri, const struct spread_tm *tm,
                        bool ready_requires_loaded, usec_t now)
{
        CLEANUP(model_loaded_release) struct model_loaded m = { 0 };
        int k;

        if (!json_is_object(status) || !tm)
                return -EINVAL;
        if (tm->n_pods > 0)
                k = model_loaded_summarize_copies(set, model, storage_uri,
                                                  (const char *const *)tm->pods, tm->n_pods, &m);
        else
                k = summarize_unplaced(tm, &m);
        if (k < 0)
                return k;
        m.force = true;
        if (tm->n_pods > 0 && tm->note) {
                char *longer = NULL;

                if (asprintf(&longer, "%s; %s", m.message, tm->note) < 0)
                        return -ENOMEM;
                free(m.message);
                m.message = longer;
        }
        k = model_loaded_apply(status, observed, &m, ready_requires_loaded, now);
        return k < 0 ? k : set_failed_annotation(status, tm->failed);
}
