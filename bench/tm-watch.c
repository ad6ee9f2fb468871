/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tm-watch: the convergence clock of bench/convergence (issue 27: one watcher, in C, that costs
 * the same whatever the controller writes).
 *
 *   tm-watch KUBECONFIG NAMESPACE READYFILE [--ready N] [--listed N] [--tms N]
 *            [--uri-contains S] [--settled N] [--timeout SEC]
 *
 * Lists, then watches, the TrainedModels and the ConfigMaps of NAMESPACE (two threads, each with
 * its own client from src/kube; the watch resumes from the last resourceVersion when the server
 * ends it and lists again after a 410), and prints the Unix time at which every given condition
 * holds:
 *
 *   --ready N         exactly N TrainedModels have condition Ready=True
 *   --listed N        the modelconfig-* ConfigMaps' models.json hold N entries in all
 *   --tms N           N TrainedModels exist (0 after a delete)
 *   --uri-contains S  every models.json entry's storageUri contains S
 *   --settled N       N TrainedModels have a decided Ready (True or False), and the ConfigMaps
 *                     list exactly as many entries as there are Ready=True (the 1 MiB guard)
 *
 * The cost does not grow with a tree per event: the ConfigMap events (KServe rewrites the whole
 * models.json per TrainedModel, about 1.5 GB of events at N = 3,000) come as raw lines
 * (kube_watch_lines) and are scanned for the few bytes needed: the name, the resourceVersion and,
 * inside the models.json string, the "modelName" keys and "storageUri" values. TrainedModel
 * events (1-2 KB) are decoded with jansson, as is any line whose shape the scan does not
 * recognise. It touches READYFILE once both lists are in (the watches resume from them, so no
 * event after that point is missed) and prints
 *   converged=<unix time> events=<n> true=<n> false=<n> bytes=<n> cpu=<s>
 * (cpu: the watcher's own utime+stime until then) or "timeout ..." (exit 3). Failures: a message
 * on stderr, exit 1; bad arguments: usage, exit 2. Times are reported by the caller, never
 * asserted.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <curl/curl.h>

#include "kube-connect.h"
#include "kube/watch.h"
#include "util/hashmap.h"
#include "util/parse-util.h"
#include "util/time-util.h"

/* Longest object name (DNS subdomain) and resourceVersion kept. */
#define NAME_MAX_LEN 253
#define RV_MAX_LEN   64

static const struct gvr gvr_tm = { "serving.kserve.io", "v1alpha1", "trainedmodels" };
static const struct gvr gvr_cm = { "", "v1", "configmaps" };

enum want {
        WANT_READY,
        WANT_LISTED,
        WANT_TMS,
        WANT_SETTLED,
        WANT__MAX,
};

enum ready {
        READY_NONE,
        READY_TRUE,
        READY_FALSE,
        READY_OTHER,
};

struct tm_entry {
        enum ready ready;
};

struct cm_entry {
        unsigned long entries;
        bool uris_ok;
};

struct state {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        struct hashmap *tms; /* name -> struct tm_entry */
        struct hashmap *cms; /* modelconfig-* name -> struct cm_entry */
        unsigned long n_true, n_false, listed, cms_bad_uri;
        unsigned long events;
        unsigned long long bytes;
        unsigned lists_done;
        int failure;
        char failmsg[300];
        /* the conditions */
        bool want[WANT__MAX];
        unsigned long want_n[WANT__MAX];
        const char *uri_contains;
        const char *ns;
        atomic_bool cancel;
};

struct watch_thread {
        struct state *s;
        struct kube_client *client;
        bool is_tm;
        bool listed_once;
        char rv[RV_MAX_LEN + 1];
};

/* ---- the state (under s->lock) ---- */

static void tm_set(struct state *s, const char *name, enum ready ready, bool deleted)
{
        struct tm_entry *e = hashmap_get(s->tms, name);

        if (e) {
                s->n_true -= e->ready == READY_TRUE;
                s->n_false -= e->ready == READY_FALSE;
        }
        if (deleted) {
                (void)hashmap_remove(s->tms, name);
                return;
        }
        if (!e) {
                e = calloc(1, sizeof(*e));
                if (!e || hashmap_put(s->tms, name, e) < 0) {
                        s->failure = -ENOMEM;
                        return;
                }
        }
        e->ready = ready;
        s->n_true += ready == READY_TRUE;
        s->n_false += ready == READY_FALSE;
}

static void cm_set(struct state *s, const char *name, unsigned long entries, bool uris_ok,
                   bool deleted)
{
        struct cm_entry *e;

        if (strncmp(name, "modelconfig-", strlen("modelconfig-")) != 0)
                return;
        e = hashmap_get(s->cms, name);
        if (e) {
                s->listed -= e->entries;
                s->cms_bad_uri -= !e->uris_ok;
        }
        if (deleted) {
                (void)hashmap_remove(s->cms, name);
                return;
        }
        if (!e) {
                e = calloc(1, sizeof(*e));
                if (!e || hashmap_put(s->cms, name, e) < 0) {
                        s->failure = -ENOMEM;
                        return;
                }
        }
        e->entries = entries;
        e->uris_ok = uris_ok;
        s->listed += entries;
        s->cms_bad_uri += !uris_ok;
}

static bool converged(const struct state *s)
{
        if (s->want[WANT_READY] && s->n_true != s->want_n[WANT_READY])
                return false;
        if (s->want[WANT_TMS] && hashmap_size(s->tms) != s->want_n[WANT_TMS])
                return false;
        if (s->want[WANT_LISTED] && s->listed != s->want_n[WANT_LISTED])
                return false;
        if (s->uri_contains && s->cms_bad_uri > 0)
                return false;
        if (s->want[WANT_SETTLED] &&
            (s->n_true + s->n_false != s->want_n[WANT_SETTLED] || s->listed != s->n_true))
                return false;
        return true;
}

static void fail(struct state *s, int r, const char *what, const char *detail)
{
        (void)pthread_mutex_lock(&s->lock);
        if (s->failure == 0) {
                s->failure = r;
                if (detail && detail[0])
                        (void)snprintf(s->failmsg, sizeof(s->failmsg), "%s: %.250s", what, detail);
                else
                        (void)snprintf(s->failmsg, sizeof(s->failmsg), "%s: error %d", what, -r);
        }
        (void)pthread_cond_broadcast(&s->cond);
        (void)pthread_mutex_unlock(&s->lock);
}

/* ---- reading objects ---- */

static enum ready tm_ready(const json_t *tm)
{
        const json_t *conds = json_object_get(json_object_get(tm, "status"), "conditions");
        size_t i;
        json_t *c;

        json_array_foreach(conds, i, c) {
                const char *st;

                if (!json_is_string(json_object_get(c, "type")) ||
                    !streq(json_string_value(json_object_get(c, "type")), "Ready"))
                        continue;
                st = json_string_value(json_object_get(c, "status"));
                if (!st)
                        return READY_OTHER;
                return streq(st, "True")    ? READY_TRUE
                       : streq(st, "False") ? READY_FALSE
                                            : READY_OTHER;
        }
        return READY_NONE;
}

/*
 * The models.json entries of text[0..len): the number of name_key occurrences, and whether every
 * entry has a storageUri (uri_key, up to end_quote) containing want (NULL: no check). The same
 * scan reads the escaped text inside a ConfigMap event (\"modelName\") and a decoded string.
 */
static void scan_entries(const char *text, size_t len, bool escaped, const char *want,
                         unsigned long *ret_entries, bool *ret_uris_ok)
{
        const char *name_key = escaped ? "\\\"modelName\\\"" : "\"modelName\"";
        const char *uri_key = escaped ? "\\\"storageUri\\\":\\\"" : "\"storageUri\":\"";
        const char *end_quote = escaped ? "\\\"" : "\"";
        const char *p = text, *end = text + len;
        unsigned long entries = 0, uris = 0;
        bool ok = true;

        while ((p = memmem(p, (size_t)(end - p), name_key, strlen(name_key)))) {
                entries++;
                p += strlen(name_key);
        }
        if (want) {
                for (p = text; (p = memmem(p, (size_t)(end - p), uri_key, strlen(uri_key)));) {
                        const char *v = p + strlen(uri_key);
                        const char *q = memmem(v, (size_t)(end - v), end_quote, strlen(end_quote));

                        if (!q)
                                break;
                        uris++;
                        if (!memmem(v, (size_t)(q - v), want, strlen(want)))
                                ok = false;
                        p = q;
                }
                if (uris < entries)
                        ok = false;
        }
        *ret_entries = entries;
        *ret_uris_ok = ok;
}

/* Copies the string value after the first key (a literal with its quotes and colon) into buf;
 * only values without escapes (names, resourceVersions). Returns the value's end, NULL if the key
 * is missing or the value too long. */
static const char *scan_value(const char *line, size_t len, const char *key, char *buf, size_t size)
{
        const char *p = memmem(line, len, key, strlen(key)), *q;

        if (!p)
                return NULL;
        p += strlen(key);
        q = memchr(p, '"', len - (size_t)(p - line));
        if (!q || (size_t)(q - p) >= size || memchr(p, '\\', (size_t)(q - p)))
                return NULL;
        memcpy(buf, p, (size_t)(q - p));
        buf[q - p] = '\0';
        return q;
}

/* The end of the JSON string that starts at p (just after its opening quote), or NULL. */
static const char *string_end(const char *p, const char *end)
{
        for (const char *q = p; (q = memchr(q, '"', (size_t)(end - q))); q++) {
                size_t bs = 0;

                while (q - bs > p && q[-1 - (ptrdiff_t)bs] == '\\')
                        bs++;
                if (bs % 2 == 0)
                        return q;
        }
        return NULL;
}

/* A ConfigMap event's line, scanned. Returns false when its shape is not the expected one (the
 * caller then decodes it). */
static bool cm_scan(struct watch_thread *w, const char *obj, size_t len, bool deleted)
{
        static const char mj_key[] = "\"models.json\":\"";
        char name[NAME_MAX_LEN + 1], rv[RV_MAX_LEN + 1];
        const char *meta = memmem(obj, len, "\"metadata\":{", strlen("\"metadata\":{"));
        const char *mj, *mj_end, *end = obj + len;
        unsigned long entries = 0;
        bool ok = true;

        if (!meta ||
            !scan_value(meta, (size_t)(end - meta), "\"metadata\":{\"name\":\"", name,
                        sizeof(name)) ||
            !scan_value(meta, (size_t)(end - meta), "\"resourceVersion\":\"", rv, sizeof(rv)))
                return false;
        mj = memmem(obj, len, mj_key, strlen(mj_key));
        if (mj) {
                mj += strlen(mj_key);
                mj_end = string_end(mj, end);
                if (!mj_end)
                        return false;
                scan_entries(mj, (size_t)(mj_end - mj), true, w->s->uri_contains, &entries, &ok);
        }
        (void)pthread_mutex_lock(&w->s->lock);
        cm_set(w->s, name, entries, ok, deleted);
        (void)pthread_cond_broadcast(&w->s->cond);
        (void)pthread_mutex_unlock(&w->s->lock);
        (void)snprintf(w->rv, sizeof(w->rv), "%s", rv);
        return true;
}

/* One object (from a list or a decoded event) into the state; the caller holds the lock. */
static void apply_object(struct watch_thread *w, const json_t *obj, bool deleted)
{
        const json_t *meta = json_object_get(obj, "metadata");
        const char *name = json_string_value(json_object_get(meta, "name"));

        if (!name)
                return;
        if (w->is_tm) {
                tm_set(w->s, name, tm_ready(obj), deleted);
        } else {
                const char *mj = json_string_value(
                        json_object_get(json_object_get(obj, "data"), "models.json"));
                unsigned long entries = 0;
                bool ok = true;

                if (mj)
                        scan_entries(mj, strlen(mj), false, w->s->uri_contains, &entries, &ok);
                cm_set(w->s, name, entries, ok, deleted);
        }
}

/* ---- the watch ---- */

static int on_line(void *userdata, const char *line, size_t len)
{
        static const char head[] = "{\"type\":\"";
        struct watch_thread *w = userdata;
        enum watch_event_type type = WATCH_EVENT__INVALID;
        const char *obj = NULL;
        json_auto_t *o = NULL;
        int r;

        /* the API server writes {"type":"T","object":{...}}: the type without a tree */
        if (len > strlen(head) && memcmp(line, head, strlen(head)) == 0) {
                const char *t = line + strlen(head), *q = memchr(t, '"', len - strlen(head));
                char tbuf[16];

                if (q && (size_t)(q - t) < sizeof(tbuf) &&
                    strncmp(q, "\",\"object\":", strlen("\",\"object\":")) == 0) {
                        memcpy(tbuf, t, (size_t)(q - t));
                        tbuf[q - t] = '\0';
                        type = watch_event_type_from_string(tbuf);
                        obj = q + strlen("\",\"object\":");
                }
        }
        (void)pthread_mutex_lock(&w->s->lock);
        w->s->bytes += len;
        if (type != WATCH_EVENT_BOOKMARK)
                w->s->events++;
        (void)pthread_mutex_unlock(&w->s->lock);

        if (!w->is_tm && obj &&
            (type == WATCH_EVENT_ADDED || type == WATCH_EVENT_MODIFIED ||
             type == WATCH_EVENT_DELETED) &&
            cm_scan(w, obj, len - (size_t)(obj - line), type == WATCH_EVENT_DELETED))
                return 0;

        r = watch_event_decode(line, len, &type, &o);
        if (r < 0) {
                fail(w->s, r, "malformed watch event", NULL);
                return r;
        }
        if (type == WATCH_EVENT_ERROR) {
                json_int_t code = json_integer_value(json_object_get(o, "code"));

                if (code == 410)
                        return -ESTALE; /* list again */
                fail(w->s, -EIO, w->is_tm ? "watch of TrainedModels" : "watch of ConfigMaps",
                     json_string_value(json_object_get(o, "message")));
                return -EIO;
        }
        {
                const char *rv = json_string_value(
                        json_object_get(json_object_get(o, "metadata"), "resourceVersion"));

                if (rv)
                        (void)snprintf(w->rv, sizeof(w->rv), "%s", rv);
        }
        if (type == WATCH_EVENT_BOOKMARK)
                return 0;
        (void)pthread_mutex_lock(&w->s->lock);
        apply_object(w, o, type == WATCH_EVENT_DELETED);
        (void)pthread_cond_broadcast(&w->s->cond);
        (void)pthread_mutex_unlock(&w->s->lock);
        return 0;
}

/* Lists the kind into the state (replacing what this thread had) and keeps its resourceVersion. */
static int list_all(struct watch_thread *w, struct kube_status *st)
{
        const struct gvr *g = w->is_tm ? &gvr_tm : &gvr_cm;
        const char *ns = w->s->ns;
        json_auto_t *list = NULL;
        const char *rv;
        size_t i;
        json_t *o;
        int r;

        r = kube_list(w->client, g, ns, NULL, &list, st);
        if (r < 0)
                return r;
        (void)pthread_mutex_lock(&w->s->lock);
        {
                struct hashmap *m = w->is_tm ? w->s->tms : w->s->cms;
                const char *k;
                void *v;

                /* forget what this kind held: the list is the whole truth */
                HASHMAP_FOREACH(m, it, k, v) {
                        if (w->is_tm)
                                tm_set(w->s, k, READY_NONE, true);
                        else
                                cm_set(w->s, k, 0, true, true);
                }
        }
        json_array_foreach(json_object_get(list, "items"), i, o)
                apply_object(w, o, false);
        if (!w->listed_once) {
                w->listed_once = true;
                w->s->lists_done++;
        }
        (void)pthread_cond_broadcast(&w->s->cond);
        (void)pthread_mutex_unlock(&w->s->lock);
        rv = json_string_value(
                json_object_get(json_object_get(list, "metadata"), "resourceVersion"));
        if (!rv)
                return -EBADMSG;
        (void)snprintf(w->rv, sizeof(w->rv), "%s", rv);
        return 0;
}

static void sleep_seconds(unsigned s)
{
        struct timespec ts = { .tv_sec = s ? s : 1 };

        (void)nanosleep(&ts, NULL);
}

/* A 429 ("storage is (re)initializing" right after a CRD is made) is retried this many times. */
#define THROTTLE_RETRIES 60

static void *watch_run(void *arg)
{
        struct watch_thread *w = arg;
        const struct gvr *g = w->is_tm ? &gvr_tm : &gvr_cm;
        const char *what = w->is_tm ? "TrainedModels" : "ConfigMaps";
        unsigned throttled = 0;

        while (!atomic_load(&w->s->cancel)) {
                struct kube_watch_options wo = { .resource_version = w->rv,
                                                 .allow_bookmarks = true,
                                                 .cancel = &w->s->cancel };
                struct kube_status st = { 0 };
                int r = 0;

                if (w->rv[0] == '\0')
                        r = list_all(w, &st);
                if (r == 0)
                        r = kube_watch_lines(w->client, g, w->s->ns, &wo, on_line, w, &st);
                if (r == 0)
                        continue; /* the server ended the watch: resume from w->rv */
                if (r == -ESTALE) {
                        w->rv[0] = '\0';
                        continue;
                }
                if (r == -EAGAIN && ++throttled < THROTTLE_RETRIES) {
                        sleep_seconds(st.retry_after);
                        continue;
                }
                if (r != -ECANCELED)
                        fail(w->s, r, what, st.message);
                break;
        }
        return NULL;
}

/* ---- main ---- */

static double cpu_seconds(void)
{
        struct rusage ru;

        if (getrusage(RUSAGE_SELF, &ru) < 0)
                return -1;
        return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int usage(const char *why)
{
        if (why)
                fprintf(stderr, "tm-watch: %s\n", why);
        fprintf(stderr, "usage: tm-watch KUBECONFIG NAMESPACE READYFILE [--ready N] [--listed N] "
                        "[--tms N] [--uri-contains S] [--settled N] [--timeout SEC]\n");
        return 2;
}

/* One count option (--ready, --listed, --tms, --settled) into s; false when opt is none of them. */
static bool set_want(struct state *s, const char *opt, unsigned v)
{
        static const char *const names[WANT__MAX] = {
                [WANT_READY] = "--ready",
                [WANT_LISTED] = "--listed",
                [WANT_TMS] = "--tms",
                [WANT_SETTLED] = "--settled",
        };

        for (enum want k = 0; k < WANT__MAX; k++)
                if (streq(opt, names[k])) {
                        s->want[k] = true;
                        s->want_n[k] = v;
                        return true;
                }
        return false;
}

static int parse_args(int argc, char **argv, struct state *s, unsigned *ret_timeout)
{
        for (int i = 4; i < argc; i += 2) {
                const char *opt = argv[i];
                unsigned v;

                if (i + 1 >= argc)
                        return usage("an option without its value");
                if (streq(opt, "--uri-contains")) {
                        if (!argv[i + 1][0])
                                return usage("--uri-contains needs a non-empty string");
                        s->uri_contains = argv[i + 1];
                        continue;
                }
                if (safe_atou32(argv[i + 1], &v) < 0)
                        return usage("a count or a timeout must be a non-negative integer");
                if (streq(opt, "--timeout")) {
                        if (v == 0)
                                return usage("--timeout must be at least 1");
                        *ret_timeout = v;
                        continue;
                }
                if (!set_want(s, opt, v))
                        return usage("unknown option");
        }
        for (enum want k = 0; k < WANT__MAX; k++)
                if (s->want[k])
                        return 0;
        if (s->uri_contains)
                return 0;
        return usage("no condition given");
}

static int watch_until(struct state *s, unsigned timeout, const char *readyfile)
{
        usec_t deadline = now_realtime() + (usec_t)timeout * USEC_PER_SEC;
        bool touched = false;
        int r = 3;

        (void)pthread_mutex_lock(&s->lock);
        for (;;) {
                struct timespec ts;

                if (s->failure < 0) {
                        fprintf(stderr, "tm-watch: watch failed: %s\n", s->failmsg);
                        r = 1;
                        break;
                }
                if (!touched && s->lists_done == 2) {
                        FILE *f = fopen(readyfile, "we");

                        if (!f || fclose(f) != 0) {
                                fprintf(stderr, "tm-watch: cannot write %s (errno %d)\n", readyfile,
                                        errno);
                                r = 1;
                                break;
                        }
                        touched = true;
                }
                if (touched && converged(s)) {
                        printf("converged=%.6f events=%lu true=%lu false=%lu bytes=%llu "
                               "cpu=%.2f\n",
                               (double)now_realtime() / 1e6, s->events, s->n_true, s->n_false,
                               s->bytes, cpu_seconds());
                        r = 0;
                        break;
                }
                if (now_realtime() >= deadline) {
                        printf("timeout events=%lu true=%lu false=%lu tms=%zu listed=%lu "
                               "cpu=%.2f\n",
                               s->events, s->n_true, s->n_false, hashmap_size(s->tms), s->listed,
                               cpu_seconds());
                        break;
                }
                /* a wake-up at least every 100 ms also catches the deadline */
                (void)clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += 100L * 1000L * 1000L;
                if (ts.tv_nsec >= 1000L * 1000L * 1000L) {
                        ts.tv_sec++;
                        ts.tv_nsec -= 1000L * 1000L * 1000L;
                }
                (void)pthread_cond_timedwait(&s->cond, &s->lock, &ts);
        }
        (void)pthread_mutex_unlock(&s->lock);
        (void)fflush(stdout);
        return r;
}

int main(int argc, char **argv)
{
        struct state s = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
        struct watch_thread ws[2] = { { .s = &s, .is_tm = true }, { .s = &s } };
        struct kube_config *cfg = NULL;
        struct kube_client *base = NULL;
        pthread_t tids[2];
        unsigned timeout = 600, started = 0;
        int r;

        if (argc < 4)
                return usage("KUBECONFIG, NAMESPACE and READYFILE are needed");
        r = parse_args(argc, argv, &s, &timeout);
        if (r != 0)
                return r;
        s.ns = argv[2];
        s.tms = hashmap_new(free);
        s.cms = hashmap_new(free);
        if (!s.tms || !s.cms)
                return 1;
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return 1;
        if (kube_connect(argv[1], &cfg, &base) < 0)
                return 1;
        r = 1;
        for (; started < 2; started++) {
                if (kube_client_dup(base, &ws[started].client) < 0 ||
                    pthread_create(&tids[started], NULL, watch_run, &ws[started]) != 0)
                        break;
        }
        if (started == 2)
                r = watch_until(&s, timeout, argv[3]);
        atomic_store(&s.cancel, true);
        for (unsigned t = 0; t < started; t++)
                (void)pthread_join(tids[t], NULL);
        for (unsigned t = 0; t < 2; t++)
                kube_client_free(ws[t].client);
        kube_client_free(base);
        kube_config_free(cfg);
        hashmap_free(s.tms);
        hashmap_free(s.cms);
        curl_global_cleanup();
        return r;
}
