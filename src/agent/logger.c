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
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/cloudevent.h"
#include "agent/fetch.h"
#include "util/buf.h"
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
/* A --log-marshaller-url call: KServe's client timeout, and the most a marshalled batch may be */
#define MARSHAL_TIMEOUT_SEC 30
#define MARSHAL_MAX         ((size_t)256 * 1024 * 1024)
#define MARSHAL_EXT_MAX     16

struct item {
        bool response;
        char *id, *content_type, *metadata;
        void *body;
        size_t body_len;
        uint64_t time_usec;
        uint64_t
                queued_usec; /* CLOCK_MONOTONIC: when a batch with it is due (--log-batch-interval) */
};

/* A marshalled batch: the bytes stored, their key's extension and their Content-Type. */
struct blob {
        char *data;
        size_t len;
        char ext[MARSHAL_EXT_MAX + 1];
        char *type;
};

static void blob_release(struct blob *b)
{
        free(b->data);
        free(b->type);
}

struct logger {
        struct logger_config c;
        char *url, *source, *isvc, *ns, *component, *endpoint, *annotations, *store_path;
        char *format, *ca_file, *cert_name;
        char **allow;
        size_t n_allow;
        char *dir;                 /* file:// blob store root, or NULL */
        char *marshaller;          /* --log-marshaller-url, NULL: marshalled in process */
        unsigned batch;            /* records per blob (1 for an http(s) sink) */
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
                it->queued_usec = now_monotonic();
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

static const char *blob_type(const struct logger *l)
{
        /* GCS: what KServe's Go client sends for these records (it sniffs the text); the GCS
         * emulator also takes an application/json media upload for the object's metadata */
        if (l->store.bucket && l->store.store == CE_STORE_GCS)
                return "text/plain; charset=utf-8";
        return streq(l->format, "csv") ? "text/csv" : "application/json";
}

/* The batch's events (borrowing from @b). Owned array, NULL on OOM. */
static struct ce_event *events_of(const struct logger *l, struct item *const *b, size_t n)
{
        struct ce_event *evs = calloc(n, sizeof(*evs));

        for (size_t i = 0; evs && i < n; i++)
                event_of(l, b[i], &evs[i]);
        return evs;
}

/* The X-Log-Marshal-Extension header of the marshaller's answer, into ext ("" when absent). */
static size_t header_line(char *p, size_t size, size_t n, void *userdata)
{
        static const char name[] = "x-log-marshal-extension:";
        char *ext = userdata;
        size_t len = size * n, k = sizeof(name) - 1, v;

        if (len > k && strncasecmp(p, name, k) == 0) {
                p += k;
                len -= k;
                while (len > 0 && (*p == ' ' || *p == '\t'))
                        p++, len--;
                while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == '\n' || p[len - 1] == ' '))
                        len--;
                v = MIN(len, (size_t)MARSHAL_EXT_MAX + 1); /* one more: too long is refused */
                memcpy(ext, p, v);
                ext[v] = '\0';
        }
        return size * n;
}

/* An extension that makes a key's last segment and nothing else: 1-16 letters and digits. */
static bool ext_valid(const char *ext)
{
        size_t n = strlen(ext);

        return n > 0 && n <= MARSHAL_EXT_MAX &&
               strspn(ext, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == n;
}

/* POSTs the batch to --log-marshaller-url as KServe's HTTPMarshaller does (the JSON array of its
 * LogRequests) and takes the answer's body as the blob, its extension from
 * X-Log-Marshal-Extension (json without one). A non-2xx answer, an extension that is no file
 * name suffix or an answer over MARSHAL_MAX fail the batch, named in @why. */
static int marshal_remote(struct logger *l, CURL *curl, const struct ce_event *evs, size_t n,
                          struct blob *ret, char *why, size_t len)
{
        AUTOFREE char *body = ce_marshal_request(evs, n);
        struct buf out = BUF_INIT(MARSHAL_MAX);
        struct curl_slist *h = NULL;
        char ext[MARSHAL_EXT_MAX + 2] = "";
        const char *ctype = NULL;
        long code = 0;
        CURLcode cr;

        if (!body || !curl)
                return -ENOMEM;
        h = curl_slist_append(NULL, "Content-Type: application/json");
        if (!h)
                return -ENOMEM;
        curl_easy_reset(curl);
        curl_easy_setopt(curl, CURLOPT_URL, l->marshaller);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, buf_write_cb);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out);
        curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, header_line);
        curl_easy_setopt(curl, CURLOPT_HEADERDATA, (void *)ext);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, progress);
        curl_easy_setopt(curl, CURLOPT_XFERINFODATA, l);
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, (long)STORE_CONNECT_SEC);
        curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)MARSHAL_TIMEOUT_SEC);
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
        cr = curl_easy_perform(curl);
        curl_slist_free_all(h);
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
        if (cr != CURLE_OK || code < 200 || code > 299) {
                if (cr == CURLE_WRITE_ERROR) /* buf_write_cb() refused: over the cap (or OOM) */
                        (void)snprintf(why, len, "marshaller %s: answer over %zu bytes",
                                       l->marshaller, MARSHAL_MAX);
                else if (cr != CURLE_OK)
                        (void)snprintf(why, len, "marshaller %s: %s", l->marshaller,
                                       curl_easy_strerror(cr));
                else
                        (void)snprintf(why, len, "marshaller %s answered %ld: %.*s", l->marshaller,
                                       code, (int)MIN(out.len, (size_t)200), out.p ? out.p : "");
                buf_release(&out);
                return cr == CURLE_OK ? -EPROTO : -EIO;
        }
        if (!*ext)
                (void)snprintf(ext, sizeof(ext), "json");
        if (!ext_valid(ext)) {
                (void)snprintf(why, len,
                               "marshaller %s: X-Log-Marshal-Extension '%.*s' is not 1-%d letters "
                               "and digits",
                               l->marshaller, MARSHAL_EXT_MAX, ext, MARSHAL_EXT_MAX);
                buf_release(&out);
                return -EBADMSG;
        }
        curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ctype);
        ret->type = strdup(ctype && *ctype ? ctype : "application/octet-stream");
        if (!ret->type || buf_append(&out, "", 0) < 0) {
                buf_release(&out);
                return -ENOMEM;
        }
        ret->data = out.p;
        ret->len = out.len;
        (void)snprintf(ret->ext, sizeof(ret->ext), "%s", ext);
        return 0;
}

/* The batch as one blob: marshalled in process in the store's format (KServe's embedded
 * marshaller), or by --log-marshaller-url. */
static int marshal(struct logger *l, CURL *curl, struct item *const *b, size_t n, struct blob *ret,
                   char *why, size_t len)
{
        AUTOFREE struct ce_event *evs = events_of(l, b, n);

        *ret = (struct blob){ 0 };
        if (!evs)
                return -ENOMEM;
        if (l->marshaller)
                return marshal_remote(l, curl, evs, n, ret, why, len);
        ret->data = ce_records_text(evs, n, streq(l->format, "csv"));
        ret->type = strdup(blob_type(l));
        if (!ret->data || !ret->type)
                return -ENOMEM;
        ret->len = strlen(ret->data);
        (void)snprintf(ret->ext, sizeof(ret->ext), "%s", l->format);
        return 0;
}

/* KServe's object key: [prefix/][ns/][isvc/][component/][store-path/]ID-TYPE.EXT of the batch's
 * first record; -EINVAL for an id that is no file name. */
static int record_key(const struct logger *l, const char *prefix, const struct item *first,
                      const char *ext, char **ret)
{
        const char *const parts[5] = { prefix, l->ns, l->isvc, l->component, l->store_path };

        return ce_record_key(parts, first->id, first->response, ext, ret);
}

/* The blob under the store root at its key, written to a temporary name and renamed, so a
 * reader never sees half a batch. */
static int store_blob(struct logger *l, const struct item *first, const struct blob *blob)
{
        AUTOFREE char *path = NULL, *tmp = NULL;
        int fd, r;

        r = record_key(l, l->dir, first, blob->ext, &path);
        if (r < 0)
                return r;
        if (asprintf(&tmp, "%s.tmp", path) < 0) {
                tmp = NULL;
                return -ENOMEM;
        }
        r = mkdir_parents(path);
        if (r < 0)
                return r;
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return negative_errno();
        r = write_all_fd(fd, blob->data, blob->len);
        if (close(fd) < 0 && r >= 0)
                r = negative_errno();
        if (r >= 0 && rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

/* The blob uploaded to the blob store under its key (fetch_put_object(): the downloads'
 * credentials, STORE_ATTEMPTS attempts). */
static int upload_blob(struct logger *l, const struct item *first, const struct blob *blob,
                       char *why, size_t len)
{
        static const enum fetch_store stores[CE_STORE__MAX] = {
                [CE_STORE_S3] = FETCH_STORE_S3,
                [CE_STORE_GCS] = FETCH_STORE_GCS,
                [CE_STORE_AZURE] = FETCH_STORE_AZURE,
        };
        AUTOFREE char *key = NULL;
        int r;

        r = record_key(l, l->store.prefix, first, blob->ext, &key);
        if (r < 0)
                return r;
        return fetch_put_object(&l->fc,
                                &(struct fetch_object){ .store = stores[l->store.store],
                                                        .bucket = l->store.bucket,
                                                        .account = l->store.account,
                                                        .key = key },
                                blob->data, blob->len, blob->type, why, len);
}

/* One batch to its destination: an http(s) sink gets each record as a CloudEvent (a batch is
 * one record there), a store one blob. */
static int deliver(struct logger *l, CURL *curl, struct item *const *b, size_t n, char *why,
                   size_t len)
{
        CLEANUP(blob_release) struct blob blob = { 0 };
        int r;

        if (!l->dir && !l->store.bucket)
                return curl ? send_event(l, curl, b[0]) : -ENOMEM;
        r = marshal(l, curl, b, n, &blob, why, len);
        if (r < 0)
                return r;
        return l->dir ? store_blob(l, b[0], &blob) : upload_blob(l, b[0], &blob, why, len);
}

/* One warning when deliveries start failing, one note when they work again; the rest is counted
 * (modelplane_agent_log_failed_total), not logged per event. Called with the lock held. */
static void outage_note(struct logger *l, int r, const struct item *it, size_t n, const char *why)
{
        char more[48] = "";

        if (n > 1)
                (void)snprintf(more, sizeof(more), " (and %zu more records of its batch)", n - 1);
        if (r < 0 && !l->failing)
                log_warn_errno(r,
                               "logger: %s %s%s not delivered to %s%s%s; further failures are "
                               "counted in modelplane_agent_log_failed_total",
                               it->response ? "response" : "request", it->id, more, l->url,
                               *why ? ": " : "", why);
        else if (r >= 0 && l->failing)
                log_info("logger: events are delivered to %s again", l->url);
        else if (r < 0)
                log_debug("logger: %s %s%s not delivered to %s",
                          it->response ? "response" : "request", it->id, more, l->url);
        l->failing = r < 0;
}

/* Whether the queue holds a batch to take: l->batch records, or an older one than
 * --log-batch-interval (KServe's TimedBatch; without an interval a partial batch waits, as its
 * SizeBatch). Called with the lock held. */
static bool batch_due(const struct logger *l, usec_t now)
{
        return l->n >= l->batch || (l->n > 0 && l->c.batch_interval_usec &&
                                    now >= l->q[l->head]->queued_usec + l->c.batch_interval_usec);
}

/* Waits for a due batch and takes it off the queue into @b; returns its size, 0 at stop (what
 * is still queued is dropped at stop, as KServe's). Called with the lock held. */
static size_t take_batch(struct logger *l, struct item **b)
{
        size_t k;

        while (!l->stopping && !batch_due(l, now_monotonic())) {
                if (l->n > 0 && l->c.batch_interval_usec) {
                        struct timespec ts = usec_to_timespec(l->q[l->head]->queued_usec +
                                                              l->c.batch_interval_usec);
                        (void)pthread_cond_timedwait(&l->more, &l->lock, &ts);
                } else {
                        pthread_cond_wait(&l->more, &l->lock);
                }
        }
        if (l->stopping)
                return 0;
        k = MIN(l->n, (size_t)l->batch);
        for (size_t i = 0; i < k; i++) {
                b[i] = l->q[l->head];
                l->head = (l->head + 1) % l->c.queue_size;
                l->n--;
        }
        if (l->n > 0) /* another batch may be due already: another worker takes it */
                pthread_cond_signal(&l->more);
        return k;
}

static void *worker(void *userdata)
{
        struct logger *l = userdata;
        /* libcurl for an http(s) sink or a marshaller; a store uploads through fetch.c */
        CURL *curl = l->marshaller || (!l->dir && !l->store.bucket) ? curl_easy_init() : NULL;
        struct item **b = calloc(l->batch, sizeof(struct item *));

        if (!b) /* the others go on; what none of them takes is dropped and counted */
                log_error("logger: out of memory: a worker of %u stops", l->c.workers);
        for (size_t k; b;) {
                char why[WHY_MAX] = "";
                int r;

                pthread_mutex_lock(&l->lock);
                k = take_batch(l, b);
                pthread_mutex_unlock(&l->lock);
                if (k == 0)
                        break;
                r = deliver(l, curl, b, k, why, sizeof(why));
                pthread_mutex_lock(&l->lock);
                if (r < 0)
                        l->st.failed += k;
                else
                        l->st.sent += k;
                if (r >= 0 && (l->dir || l->store.bucket))
                        l->st.blobs++;
                outage_note(l, r, b[0], k, why);
                pthread_mutex_unlock(&l->lock);
                for (size_t i = 0; i < k; i++)
                        item_free(b[i]);
        }
        free(b);
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
        free(l->marshaller);
        ce_store_url_release(&l->store);
        fetch_config_release(&l->fc);
        free(l->q);
        pthread_mutex_destroy(&l->lock);
        pthread_cond_destroy(&l->more);
        free(l);
}

bool logger_marshaller_remote(const char *url)
{
        return url && *url && !streq(url, LOGGER_MARSHAL_DEFAULT_URL);
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
        /* the store format and path matter for the blob store only, as in KServe; a marshaller
         * of one's own (--log-marshaller-url) picks its format itself */
        if (store && c->store_format && streq(c->store_format, "parquet") &&
            !logger_marshaller_remote(c->marshaller_url))
                return snprintf(err, err_size,
                                "--log-store-format parquet needs a marshaller: this agent has no "
                                "Parquet library (none in Debian 12) to marshal in process; give "
                                "--log-marshaller-url of one that writes Parquet, such as "
                                "KServe's agent's embedded marshaller (docs/agent.md)"),
                       -EOPNOTSUPP;
        if (store && logger_marshaller_remote(c->marshaller_url) &&
            strncmp(c->marshaller_url, "http://", 7) != 0 &&
            strncmp(c->marshaller_url, "https://", 8) != 0)
                return snprintf(err, err_size, "--log-marshaller-url %s: expected an http(s) URL",
                                c->marshaller_url),
                       -EINVAL;
        if (c->batch_size > LOGGER_BATCH_MAX)
                return snprintf(err, err_size, "--log-batch-size %u: at most %u records",
                                c->batch_size, LOGGER_BATCH_MAX),
                       -EINVAL;
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

/* The configuration's strings, owned by @l, and the queue. -ENOMEM. */
static int logger_copy(struct logger *l, const struct logger_config *cfg)
{
        int r;

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
        if (r >= 0 && logger_marshaller_remote(cfg->marshaller_url) &&
            !(l->marshaller = strdup(cfg->marshaller_url)))
                r = -ENOMEM;
        return r;
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
        /* batches apply to a store only, as KServe's dispatcher; the queue holds two */
        l->batch = strncmp(cfg->url, "http", 4) != 0 && cfg->batch_size > 1 ? cfg->batch_size : 1;
        l->c.queue_size = MAX(l->c.queue_size, 2 * l->batch);
        pthread_mutex_init(&l->lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* batch deadlines are monotonic */
        pthread_cond_init(&l->more, &ca);
        pthread_condattr_destroy(&ca);
        r = logger_copy(l, cfg);
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
