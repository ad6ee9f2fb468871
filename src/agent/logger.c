/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/logger.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cloudevent.h"
#include "agent/fetch.h"
#include "util/log.h"
#include "util/time-util.h"

#define LOGGER_CA_DIR "/etc/tls/logger"
#define WORKERS_MAX   64
#define WHY_MAX       512 /* one delivery failure's reason (the store's answer, cut) */
/* A blob-store upload: attempts (retries of 5xx, 429, transport errors) and their first
 * backoff (doubled, jittered), the connect and stall timeouts (less than 1 byte/s) */
#define STORE_ATTEMPTS    3
#define STORE_RETRY_BASE  (200 * USEC_PER_MSEC)
#define STORE_CONNECT_SEC 5
#define STORE_STALL_SEC   10

struct item {
        bool response;
        char *id, *content_type, *metadata;
        void *body;
        size_t body_len;
        uint64_t time_usec;
};

struct logger {
        struct logger_config c;
        char *url, *source, *isvc, *ns, *component, *endpoint, *annotations, *store_path;
        char *format, *ca_file, *cert_name;
        char **allow;
        size_t n_allow;
        char *dir;                 /* file:// blob store root, or NULL */
        struct ce_store_url store; /* s3://, gs://, abfs:// (store.bucket set), else unset */
        struct fetch_config fc;    /* the blob store's credentials and endpoints (the downloads') */
        atomic_bool cancel;        /* set at stop: an upload in flight ends */
        pthread_mutex_t lock;
        pthread_cond_t more;
        struct item **q;
        size_t head, n;
        bool stopping;
        bool failing; /* the last delivery failed: one warning per outage, not per event */
        pthread_t threads[WORKERS_MAX];
        unsigned n_threads;
        struct logger_stats st;
};

enum logger_mode logger_mode_from_string(const char *s)
{
        if (streq(s, "all"))
                return LOGGER_MODE_ALL;
        if (streq(s, "request"))
                return LOGGER_MODE_REQUEST;
        if (streq(s, "response"))
                return LOGGER_MODE_RESPONSE;
        return LOGGER_MODE__INVALID;
}

static void item_free(struct item *it)
{
        if (!it)
                return;
        free(it->id);
        free(it->content_type);
        free(it->metadata);
        free(it->body);
        free(it);
}

bool logger_wants(const struct logger *l, bool response)
{
        return l->c.mode == LOGGER_MODE_ALL ||
               l->c.mode == (response ? LOGGER_MODE_RESPONSE : LOGGER_MODE_REQUEST);
}

void logger_submit(struct logger *l, const struct logger_msg *m)
{
        struct item *it = NULL;
        bool queued = false, full;

        /* a full queue drops at once, without copying the body first */
        pthread_mutex_lock(&l->lock);
        full = l->n >= l->c.queue_size || l->stopping;
        if (full)
                l->st.dropped++;
        pthread_mutex_unlock(&l->lock);
        if (full)
                return;
        it = calloc(1, sizeof(*it));
        if (it) {
                it->response = m->response;
                it->time_usec = m->time_usec;
                it->id = strdup(m->id);
                it->content_type = strdup(m->content_type ? m->content_type : "");
                it->metadata = ce_metadata_json((const char *const *)l->allow, l->n_allow, m->names,
                                                m->values, m->n_headers);
                it->body = malloc(m->body_len + 1);
                if (it->body)
                        memcpy(it->body, m->body ? m->body : "", m->body_len);
                it->body_len = m->body_len;
        }
        pthread_mutex_lock(&l->lock);
        if (it && it->id && it->content_type && it->metadata && it->body && !l->stopping &&
            l->n < l->c.queue_size) {
                l->q[(l->head + l->n++) % l->c.queue_size] = it;
                l->st.queued++;
                queued = true;
                pthread_cond_signal(&l->more);
        } else {
                l->st.dropped++;
        }
        pthread_mutex_unlock(&l->lock);
        if (!queued)
                item_free(it);
}

void logger_get_stats(struct logger *l, struct logger_stats *ret)
{
        pthread_mutex_lock(&l->lock);
        *ret = l->st;
        pthread_mutex_unlock(&l->lock);
}

static void event_of(const struct logger *l, const struct item *it, struct ce_event *ev)
{
        *ev = (struct ce_event){
                .id = it->id,
                .type = it->response ? CE_TYPE_RESPONSE : CE_TYPE_REQUEST,
                .source = l->source,
                .time_usec = it->time_usec,
                .recorded_usec = now_realtime(),
                .content_type = it->content_type,
                .inference_service = l->isvc,
                .namespace_ = l->ns,
                .component = l->component,
                .endpoint = l->endpoint,
                .metadata_json = it->metadata,
                .annotations_json = l->annotations,
                .log_url = l->url,
                .cert_name = l->cert_name,
                .tls_skip_verify = l->c.tls_skip_verify,
                .body = it->body,
                .body_len = it->body_len,
        };
}

/* Aborts a transfer in flight when the logger stops. */
static int progress(void *userdata, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
        struct logger *l = userdata;

        (void)dt, (void)dn, (void)ut, (void)un;
        return __atomic_load_n(&l->stopping, __ATOMIC_RELAXED) ? 1 : 0;
}

static size_t discard(char *p, size_t size, size_t n, void *userdata)
{
        (void)p;
        (void)userdata;
        return size * n;
}

/* POSTs one CloudEvent. Returns 0 for a 2xx answer. */
static int send_event(struct logger *l, CURL *curl, const struct item *it)
{
        CLEANUP(ce_strv_freep) char **hv = NULL;
        struct curl_slist *h = NULL, *t;
        struct ce_event ev;
        long code = 0;
        CURLcode cr;
        int r;

        event_of(l, it, &ev);
        r = ce_http_headers(&ev, &hv);
        if (r < 0)
                return r;
        for (size_t i = 0; hv[i]; i++) {
                t = curl_slist_append(h, hv[i]);
                if (!t) {
                        curl_slist_free_all(h);
                        return -ENOMEM;
                }
                h = t;
        }
        t = curl_slist_append(h, "Expect:"); /* no 100-continue round trip */
        h = t ? t : h;
        curl_easy_reset(curl);
        curl_easy_setopt(curl, CURLOPT_URL, l->url);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)it->body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)it->body_len);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, progress);
        curl_easy_setopt(curl, CURLOPT_XFERINFODATA, l);
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 5L);
        curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
        if (l->ca_file && access(l->ca_file, R_OK) == 0)
                curl_easy_setopt(curl, CURLOPT_CAINFO, l->ca_file);
        if (l->c.tls_skip_verify) {
                curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
                curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        cr = curl_easy_perform(curl);
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
        curl_slist_free_all(h);
        if (cr != CURLE_OK) {
                log_debug("logger: POST %s: %s", l->url, curl_easy_strerror(cr));
                return -EIO;
        }
        if (code < 200 || code > 299) {
                log_debug("logger: POST %s: HTTP %ld", l->url, code);
                return -EPROTO;
        }
        return 0;
}

/* mkdir -p of every parent of @path. */
static int mkdir_parents(char *path)
{
        for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
                *s = 0;
                int r = mkdir(path, 0755) < 0 && errno != EEXIST ? negative_errno() : 0;
                *s = '/';
                if (r < 0)
                        return r;
        }
        return 0;
}

static int write_all_fd(int fd, const char *s, size_t len)
{
        while (len > 0) {
                ssize_t n = write(fd, s, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -EIO;
                s += n;
                len -= (size_t)n;
        }
        return 0;
}

/* KServe's object key: [prefix/][ns/][isvc/][component/][store-path/]ID-TYPE.EXT; -EINVAL for
 * an id that is no file name. */
static int record_key(const struct logger *l, const char *prefix, const struct item *it, char **ret)
{
        const char *const parts[5] = { prefix, l->ns, l->isvc, l->component, l->store_path };

        return ce_record_key(parts, it->id, it->response, l->format, ret);
}

/* The record in the store's format (csv: header line and one row). Owned, NULL on OOM. */
static char *record_text(const struct logger *l, const struct item *it)
{
        AUTOFREE char *row = NULL;
        struct ce_event ev;
        char *text = NULL;

        event_of(l, it, &ev);
        if (!streq(l->format, "csv"))
                return ce_record_json(&ev);
        row = ce_record_csv(&ev);
        if (row && asprintf(&text, "%s%s", ce_record_csv_header(), row) < 0)
                text = NULL;
        return text;
}

/* KServe's object key under the store root: [ns/][isvc/][component/][store-path/]ID-TYPE.EXT,
 * written to a temporary name and renamed, so a reader never sees half a record. */
static int store_record(struct logger *l, const struct item *it)
{
        AUTOFREE char *path = NULL, *tmp = NULL, *text = NULL;
        int fd, r;

        r = record_key(l, l->dir, it, &path);
        if (r < 0)
                return r;
        if (asprintf(&tmp, "%s.tmp", path) < 0) {
                tmp = NULL;
                return -ENOMEM;
        }
        text = record_text(l, it);
        if (!text)
                return -ENOMEM;
        r = mkdir_parents(path);
        if (r < 0)
                return r;
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return negative_errno();
        r = write_all_fd(fd, text, strlen(text));
        if (close(fd) < 0 && r >= 0)
                r = negative_errno();
        if (r >= 0 && rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

/* The record uploaded to the blob store under KServe's key (fetch_put_object(): the downloads'
 * credentials, STORE_ATTEMPTS attempts). */
static int upload_record(struct logger *l, const struct item *it, char *why, size_t len)
{
        static const enum fetch_store stores[CE_STORE__MAX] = {
                [CE_STORE_S3] = FETCH_STORE_S3,
                [CE_STORE_GCS] = FETCH_STORE_GCS,
                [CE_STORE_AZURE] = FETCH_STORE_AZURE,
        };
        AUTOFREE char *key = NULL, *text = NULL;
        const char *type = streq(l->format, "csv") ? "text/csv" : "application/json";
        int r;

        /* GCS: what KServe's Go client sends for these records (it sniffs the text); the GCS
         * emulator also takes an application/json media upload for the object's metadata */
        if (l->store.store == CE_STORE_GCS)
                type = "text/plain; charset=utf-8";
        r = record_key(l, l->store.prefix, it, &key);
        if (r < 0)
                return r;
        text = record_text(l, it);
        if (!text)
                return -ENOMEM;
        return fetch_put_object(&l->fc,
                                &(struct fetch_object){ .store = stores[l->store.store],
                                                        .bucket = l->store.bucket,
                                                        .account = l->store.account,
                                                        .key = key },
                                text, strlen(text), type, why, len);
}

/* One warning when deliveries start failing, one note when they work again; the rest is counted
 * (modelplane_agent_log_failed_total), not logged per event. Called with the lock held. */
static void outage_note(struct logger *l, int r, const struct item *it, const char *why)
{
        if (r < 0 && !l->failing)
                log_warn_errno(r,
                               "logger: %s %s not delivered to %s%s%s; further failures are "
                               "counted in modelplane_agent_log_failed_total",
                               it->response ? "response" : "request", it->id, l->url,
                               *why ? ": " : "", why);
        else if (r >= 0 && l->failing)
                log_info("logger: events are delivered to %s again", l->url);
        else if (r < 0)
                log_debug("logger: %s %s not delivered to %s",
                          it->response ? "response" : "request", it->id, l->url);
        l->failing = r < 0;
}

static void *worker(void *userdata)
{
        struct logger *l = userdata;
        CURL *curl = l->dir || l->store.bucket ? NULL : curl_easy_init();

        for (;;) {
                struct item *it;
                int r;

                pthread_mutex_lock(&l->lock);
                while (l->n == 0 && !l->stopping)
                        pthread_cond_wait(&l->more, &l->lock);
                if (l->stopping) { /* what is still queued is dropped at stop, as KServe's */
                        pthread_mutex_unlock(&l->lock);
                        break;
                }
                it = l->q[l->head];
                l->head = (l->head + 1) % l->c.queue_size;
                l->n--;
                pthread_mutex_unlock(&l->lock);

                char why[WHY_MAX] = "";
                r = l->dir            ? store_record(l, it)
                    : l->store.bucket ? upload_record(l, it, why, sizeof(why))
                    : curl            ? send_event(l, curl, it)
                                      : -ENOMEM;
                pthread_mutex_lock(&l->lock);
                if (r < 0)
                        l->st.failed++;
                else
                        l->st.sent++;
                outage_note(l, r, it, why);
                pthread_mutex_unlock(&l->lock);
                item_free(it);
        }
        if (curl)
                curl_easy_cleanup(curl);
        return NULL;
}

static char *dup_opt(const char *s)
{
        return s && *s ? strdup(s) : NULL;
}

static void logger_free_fields(struct logger *l)
{
        for (size_t i = 0; i < l->n_allow; i++)
                free(l->allow[i]);
        free(l->allow);
        free(l->url);
        free(l->source);
        free(l->isvc);
        free(l->ns);
        free(l->component);
        free(l->endpoint);
        free(l->annotations);
        free(l->store_path);
        free(l->format);
        free(l->ca_file);
        free(l->cert_name);
        free(l->dir);
        ce_store_url_release(&l->store);
        fetch_config_release(&l->fc);
        free(l->q);
        pthread_mutex_destroy(&l->lock);
        pthread_cond_destroy(&l->more);
        free(l);
}

/* Checks the configuration. Returns 0, -EINVAL (malformed) or -EOPNOTSUPP (a destination
 * KServe has and this agent has not) with @err set. */
static int check_config(const struct logger_config *c, char *err, size_t err_size)
{
        struct ce_store_url u = { 0 };
        bool store;
        int r;

        if (!c->url || !*c->url)
                return snprintf(err, err_size, "no --log-url"), -EINVAL;
        if (c->mode < 0 || c->mode >= LOGGER_MODE__MAX)
                return snprintf(err, err_size, "invalid --log-mode"), -EINVAL;
        r = ce_store_url_parse(c->url, &u);
        ce_store_url_release(&u);
        store = r >= 0;
        if (r == -EPROTONOSUPPORT && strncmp(c->url, "http://", 7) != 0 &&
            strncmp(c->url, "https://", 8) != 0)
                return snprintf(err, err_size,
                                "--log-url %s: this agent sends to http(s):// sinks and writes to "
                                "s3://, gs://, abfs:// blob stores and file:///DIR",
                                c->url),
                       -EOPNOTSUPP;
        if (r == -EINVAL)
                return snprintf(
                               err, err_size,
                               "--log-url %s: expected s3://BUCKET[/PREFIX], gs://BUCKET[/PREFIX], "
                               "abfs://CONTAINER@ACCOUNT[/PREFIX] or file:///DIR",
                               c->url),
                       -EINVAL;
        if (r == -ENOMEM)
                return r;
        /* the store format and path matter for the blob store only, as in KServe */
        if (store && c->store_format && streq(c->store_format, "parquet"))
                return snprintf(err, err_size,
                                "--log-store-format parquet is not supported: no Parquet C "
                                "library (Apache Arrow/Parquet GLib) is available to this build"),
                       -EOPNOTSUPP;
        if (store && c->store_path && (strstr(c->store_path, "..") || c->store_path[0] == '/'))
                return snprintf(err, err_size, "--log-store-path %s: a relative path without ..",
                                c->store_path),
                       -EINVAL;
        return 0;
}

/* The blob store of @l->url (s3://, gs://, abfs://): its bucket and prefix, and the downloads'
 * credentials and endpoints with the logger's own attempts and timeouts. */
static int store_open(struct logger *l)
{
        int r;

        r = ce_store_url_parse(l->url, &l->store);
        if (r < 0)
                return r;
        if (l->store.store == CE_STORE_FILE) {
                l->dir = TAKE_PTR(l->store.prefix);
                ce_store_url_release(&l->store);
                return 0;
        }
        r = fetch_config_from_env(&l->fc);
        if (r < 0)
                return r;
        l->fc.attempts = STORE_ATTEMPTS;
        l->fc.retry_base = STORE_RETRY_BASE;
        l->fc.connect_timeout_sec = STORE_CONNECT_SEC;
        l->fc.stall_timeout_sec = STORE_STALL_SEC;
        l->fc.quiet_retries = true;
        l->fc.cancel = &l->cancel;
        return 0;
}

static int ca_path(const char *f, char **ret)
{
        if (!f || !*f) {
                *ret = NULL;
                return 0;
        }
        if (f[0] == '/')
                *ret = strdup(f);
        else if (asprintf(ret, "%s/%s", LOGGER_CA_DIR, f) < 0)
                *ret = NULL;
        return *ret ? 0 : -ENOMEM;
}

int logger_start(const struct logger_config *cfg, struct logger **ret, char *err, size_t err_size)
{
        struct logger *l;
        int r;

        r = check_config(cfg, err, err_size);
        if (r < 0)
                return r;
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->c = *cfg;
        if (!l->c.workers)
                l->c.workers = 5;
        l->c.workers = MIN(l->c.workers, WORKERS_MAX);
        if (!l->c.queue_size)
                l->c.queue_size = 100;
        pthread_mutex_init(&l->lock, NULL);
        pthread_cond_init(&l->more, NULL);
        l->url = strdup(cfg->url);
        l->source = strdup(cfg->source_uri && *cfg->source_uri ? cfg->source_uri
                                                               : "http://localhost:9081/");
        l->isvc = dup_opt(cfg->inference_service);
        l->ns = dup_opt(cfg->namespace_);
        l->component = dup_opt(cfg->component);
        l->endpoint = dup_opt(cfg->endpoint);
        l->annotations = dup_opt(cfg->annotations_json);
        l->store_path = dup_opt(cfg->store_path);
        /* KServe's agent takes any other format as json */
        l->format = strdup(cfg->store_format && streq(cfg->store_format, "csv") ? "csv" : "json");
        l->q = calloc(l->c.queue_size, sizeof(struct item *));
        l->allow = calloc(cfg->n_metadata_headers + 1, sizeof(char *));
        r = l->url && l->source && l->format && l->q && l->allow ? 0 : -ENOMEM;
        for (size_t i = 0; i < cfg->n_metadata_headers && r >= 0; i++) {
                l->allow[i] = strdup(cfg->metadata_headers[i]);
                r = l->allow[i] ? 0 : -ENOMEM;
                l->n_allow = i + 1;
        }
        if (r >= 0)
                r = ca_path(cfg->ca_cert_file, &l->ca_file);
        if (r >= 0 && cfg->ca_cert_file && *cfg->ca_cert_file &&
            !(l->cert_name = strdup(cfg->ca_cert_file)))
                r = -ENOMEM;
        l->store.store = CE_STORE__INVALID;
        if (r >= 0 && strncmp(cfg->url, "http", 4) != 0)
                r = store_open(l);
        for (unsigned i = 0; i < l->c.workers && r >= 0; i++) {
                r = -pthread_create(&l->threads[i], NULL, worker, l);
                if (r >= 0)
                        l->n_threads++;
        }
        if (r < 0) {
                (void)logger_stop(l);
                return r;
        }
        *ret = l;
        return 0;
}

struct logger *logger_stop(struct logger *l)
{
        if (!l)
                return NULL;
        pthread_mutex_lock(&l->lock);
        __atomic_store_n(&l->stopping, true, __ATOMIC_RELAXED);
        atomic_store(&l->cancel, true);
        pthread_cond_broadcast(&l->more);
        pthread_mutex_unlock(&l->lock);
        for (unsigned i = 0; i < l->n_threads; i++)
                pthread_join(l->threads[i], NULL);
        while (l->n > 0) {
                item_free(l->q[l->head]);
                l->head = (l->head + 1) % l->c.queue_size;
                l->n--;
        }
        logger_free_fields(l);
        return NULL;
}
