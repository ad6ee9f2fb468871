/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/client.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "json/json-util.h"
#include "kube/bucket.h"
#include "kube/watch.h"
#include "util/buf.h"
#include "util/parse-util.h"
#include "util/string-util.h"

/* Largest non-watch response body we accept (a big unpaged LIST). */
#define KUBE_RESPONSE_MAX ((size_t)256 * 1024 * 1024)
/* Largest error body kept from a failed watch request. */
#define KUBE_ERROR_BODY_MAX ((size_t)64 * 1024)
/* Longest request URL (path + query; selectors can be long). */
#define KUBE_URL_MAX ((size_t)64 * 1024)
/* Longest bearer token. */
#define KUBE_TOKEN_MAX          ((size_t)64 * 1024)
#define KUBE_CONNECT_TIMEOUT_MS 10000L
#define KUBE_DEFAULT_TIMEOUT    (30 * USEC_PER_SEC)

/*
 * State shared by a client and its clones: configuration copy, the CURLSH, the rate limiter and
 * the current bearer token. Refcounted; each part has its own lock.
 */
struct kube_shared {
        atomic_uint refs;

        char *server;          /* owned */
        char *ca_pem;          /* owned, may be NULL */
        char *client_cert_pem; /* owned, may be NULL */
        char *client_key_pem;  /* owned, may be NULL */
        char *token_file;      /* owned, may be NULL */
        char *namespace;       /* owned */
        char *user_agent;      /* owned */
        bool insecure;
        usec_t timeout;
        kube_request_observer_fn observer;
        void *observer_userdata;
        unsigned throttle_retries; /* retries of a 429 / 503 with Retry-After */
        usec_t throttle_wait_max;  /* cap of one wait */
        atomic_ulong throttled;    /* answers 429 / 503 with Retry-After */
        atomic_ulong throttle_exhausted;

        CURLSH *share;
        pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];

        pthread_mutex_t limiter_lock;
        struct token_bucket bucket; /* only when limited */
        bool limited;

        pthread_mutex_t token_lock;
        char *token; /* owned, may be NULL */
        struct stat token_stat;
        bool token_stat_valid;
};

struct kube_client {
        struct kube_shared *sh; /* reference */
        CURL *curl;             /* owned; used by one thread at a time */
        bool own_budget;        /* kube_client_dup_budget(): own bucket, not the shared one */
        bool own_limited;
        struct token_bucket own_bucket; /* one thread at a time: no lock */
        char errbuf[CURL_ERROR_SIZE];
        /* kube_client_set_identity(): this client only, never its clones */
        struct curl_slist *impersonate; /* owned; "Impersonate-User: ..." lines */
        char *bearer;                   /* owned; replaces the shared token when set */
};

static void wipe_free(char *s)
{
        if (s)
                explicit_bzero(s, strlen(s));
        free(s);
}

static void shared_unref(struct kube_shared *sh)
{
        if (!sh || atomic_fetch_sub(&sh->refs, 1) != 1)
                return;
        if (sh->share)
                (void)curl_share_cleanup(sh->share);
        for (size_t i = 0; i < ELEMENTSOF(sh->share_locks); i++)
                (void)pthread_mutex_destroy(&sh->share_locks[i]);
        (void)pthread_mutex_destroy(&sh->limiter_lock);
        (void)pthread_mutex_destroy(&sh->token_lock);
        free(sh->server);
        free(sh->ca_pem);
        free(sh->client_cert_pem);
        wipe_free(sh->client_key_pem);
        free(sh->token_file);
        free(sh->namespace);
        free(sh->user_agent);
        wipe_free(sh->token);
        free(sh);
}

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *userdata)
{
        struct kube_shared *sh = userdata;

        if (data >= 0 && data < CURL_LOCK_DATA_LAST)
                (void)pthread_mutex_lock(&sh->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *userdata)
{
        struct kube_shared *sh = userdata;

        if (data >= 0 && data < CURL_LOCK_DATA_LAST)
                (void)pthread_mutex_unlock(&sh->share_locks[data]);
}

static int shared_new(const struct kube_config *cfg, const struct kube_client_options *opts,
                      struct kube_shared **ret)
{
        struct kube_shared *sh;
        int r = 0;

        sh = calloc(1, sizeof(*sh));
        if (!sh)
                return -ENOMEM;
        atomic_init(&sh->refs, 1);
        for (size_t i = 0; i < ELEMENTSOF(sh->share_locks); i++)
                (void)pthread_mutex_init(&sh->share_locks[i], NULL);
        (void)pthread_mutex_init(&sh->limiter_lock, NULL);
        (void)pthread_mutex_init(&sh->token_lock, NULL);

        if (strdup_opt(cfg->server, &sh->server) < 0 || strdup_opt(cfg->ca_pem, &sh->ca_pem) < 0 ||
            strdup_opt(cfg->client_cert_pem, &sh->client_cert_pem) < 0 ||
            strdup_opt(cfg->client_key_pem, &sh->client_key_pem) < 0 ||
            strdup_opt(cfg->token_file, &sh->token_file) < 0 ||
            strdup_opt(cfg->token, &sh->token) < 0 ||
            strdup_opt(cfg->namespace ? cfg->namespace : "default", &sh->namespace) < 0)
                r = -ENOMEM;
        if (r >= 0) {
                if (opts && opts->user_agent)
                        r = strdup_opt(opts->user_agent, &sh->user_agent);
                else
                        r = strdup_opt(KUBE_USER_AGENT, &sh->user_agent);
        }
        if (r < 0) {
                shared_unref(sh);
                return r;
        }

        sh->insecure = cfg->insecure_skip_tls_verify;
        sh->timeout = opts && opts->request_timeout > 0 ? opts->request_timeout
                                                        : KUBE_DEFAULT_TIMEOUT;
        sh->observer = opts ? opts->observer : NULL;
        sh->observer_userdata = opts ? opts->observer_userdata : NULL;
        sh->throttle_retries = !opts || opts->throttle_retries == 0 ? KUBE_THROTTLE_RETRIES_DEFAULT
                               : opts->throttle_retries < 0         ? 0
                                                            : (unsigned)opts->throttle_retries;
        sh->throttle_wait_max = opts && opts->throttle_wait_max > 0
                                        ? opts->throttle_wait_max
                                        : KUBE_THROTTLE_WAIT_MAX_DEFAULT;
        sh->limited = opts && opts->qps > 0;
        if (sh->limited)
                token_bucket_init(&sh->bucket, opts->qps, opts->burst, now_monotonic());

        sh->share = curl_share_init();
        if (!sh->share) {
                shared_unref(sh);
                return -ENOMEM;
        }
        /*
         * Clones share DNS and TLS sessions (cheap resumed handshakes). Connections stay per
         * handle: each thread's handle keeps its own keep-alive connection, which avoids
         * cross-thread connection-cache sharing in libcurl.
         */
        if (curl_share_setopt(sh->share, CURLSHOPT_LOCKFUNC, share_lock) != CURLSHE_OK ||
            curl_share_setopt(sh->share, CURLSHOPT_UNLOCKFUNC, share_unlock) != CURLSHE_OK ||
            curl_share_setopt(sh->share, CURLSHOPT_USERDATA, sh) != CURLSHE_OK ||
            curl_share_setopt(sh->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK ||
            curl_share_setopt(sh->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) !=
                    CURLSHE_OK) {
                shared_unref(sh);
                return -ENOMEM;
        }

        *ret = sh;
        return 0;
}

static int client_new_shared(struct kube_shared *sh, struct kube_client **ret)
{
        struct kube_client *c;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->curl = curl_easy_init();
        if (!c->curl) {
                free(c);
                return -ENOMEM;
        }
        atomic_fetch_add(&sh->refs, 1);
        c->sh = sh;
        *ret = c;
        return 0;
}

int kube_client_new(const struct kube_config *cfg, const struct kube_client_options *opts,
                    struct kube_client **ret)
{
        struct kube_shared *sh = NULL;
        int r;

        if (!cfg || !cfg->server || !ret)
                return -EINVAL;
        if (opts && opts->qps < 0)
                return -EINVAL;

        r = shared_new(cfg, opts, &sh);
        if (r < 0)
                return r;
        r = client_new_shared(sh, ret);
        shared_unref(sh); /* the client holds its own reference now */
        return r;
}

int kube_client_dup(struct kube_client *c, struct kube_client **ret)
{
        if (!c || !ret)
                return -EINVAL;
        return client_new_shared(c->sh, ret);
}

int kube_client_dup_budget(struct kube_client *c, double qps, unsigned burst,
                           struct kube_client **ret)
{
        struct kube_client *n = NULL;
        int r;

        if (!c || !ret || qps < 0)
                return -EINVAL;
        r = client_new_shared(c->sh, &n);
        if (r < 0)
                return r;
        n->own_budget = true;
        n->own_limited = qps > 0;
        if (n->own_limited)
                token_bucket_init(&n->own_bucket, qps, burst > 0 ? burst : 1, now_monotonic());
        *ret = n;
        return 0;
}

struct kube_client *kube_client_free(struct kube_client *c)
{
        if (!c)
                return NULL;
        if (c->curl)
                curl_easy_cleanup(c->curl);
        curl_slist_free_all(c->impersonate);
        wipe_free(c->bearer);
        shared_unref(c->sh);
        free(c);
        return NULL;
}

static void curl_slist_free_allp(struct curl_slist **l);

static bool header_value_ok(const char *s, size_t max)
{
        size_t n = 0;

        for (; s[n]; n++)
                if ((unsigned char)s[n] < 0x20 || s[n] == 0x7f || n >= max)
                        return false;
        return n > 0;
}

int kube_client_set_identity(struct kube_client *c, const struct kube_identity *id)
{
        CLEANUP(curl_slist_free_allp) struct curl_slist *l = NULL;
        AUTOFREE char *bearer = NULL;

        if (!c)
                return -EINVAL;
        if (id && id->user) {
                AUTOFREE char *line = NULL;
                struct curl_slist *t;

                if (!header_value_ok(id->user, KUBE_IDENTITY_VALUE_MAX) ||
                    id->n_groups > KUBE_IDENTITY_GROUPS_MAX)
                        return -EINVAL;
                if (asprintf(&line, "Impersonate-User: %s", id->user) < 0) {
                        line = NULL;
                        return -ENOMEM;
                }
                t = curl_slist_append(l, line);
                if (!t)
                        return -ENOMEM;
                l = t;
                for (size_t i = 0; i < id->n_groups; i++) {
                        AUTOFREE char *g = NULL;

                        if (!header_value_ok(id->groups[i], KUBE_IDENTITY_VALUE_MAX))
                                return -EINVAL;
                        if (asprintf(&g, "Impersonate-Group: %s", id->groups[i]) < 0) {
                                g = NULL;
                                return -ENOMEM;
                        }
                        t = curl_slist_append(l, g);
                        if (!t)
                                return -ENOMEM;
                        l = t;
                }
        }
        if (id && id->bearer) {
                /* a client certificate would authenticate the connection as the server */
                if (c->sh->client_cert_pem)
                        return -EPERM;
                if (!header_value_ok(id->bearer, KUBE_IDENTITY_TOKEN_MAX))
                        return -EINVAL;
                bearer = strdup(id->bearer);
                if (!bearer)
                        return -ENOMEM;
        }
        curl_slist_free_all(c->impersonate);
        c->impersonate = TAKE_PTR(l);
        wipe_free(c->bearer);
        c->bearer = TAKE_PTR(bearer);
        return 0;
}

const char *kube_client_namespace(const struct kube_client *c)
{
        return c ? c->sh->namespace : NULL;
}

const char *kube_client_server(const struct kube_client *c)
{
        return c ? c->sh->server : NULL;
}

/* ---- rate limiter: a token bucket shared by clones (client-go's flowcontrol) ---- */

static void sleep_usec(usec_t u)
{
        struct timespec ts = { .tv_sec = (time_t)(u / USEC_PER_SEC),
                               .tv_nsec = (long)((u % USEC_PER_SEC) * NSEC_PER_USEC) };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static void limiter_wait(struct kube_client *c)
{
        struct kube_shared *sh = c->sh;
        usec_t delay;

        if (c->own_budget) {
                if (c->own_limited) {
                        delay = token_bucket_reserve(&c->own_bucket, now_monotonic());
                        if (delay > 0)
                                sleep_usec(delay);
                }
                return;
        }
        if (!sh->limited)
                return;
        (void)pthread_mutex_lock(&sh->limiter_lock);
        delay = token_bucket_reserve(&sh->bucket, now_monotonic());
        (void)pthread_mutex_unlock(&sh->limiter_lock);
        if (delay > 0)
                sleep_usec(delay);
}

/* ---- bearer token, re-read from token_file when it changes (rotation) ---- */

static void strip_ws(char *s)
{
        size_t n = strlen(s);

        while (n > 0 &&
               (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
                s[--n] = '\0';
}

static int read_token_file(const char *path, char **ret)
{
        AUTOCLOSE int fd = -EBADF;
        char *t;
        ssize_t n;
        size_t len = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        t = malloc(KUBE_TOKEN_MAX + 1);
        if (!t)
                return -ENOMEM;
        while (len < KUBE_TOKEN_MAX) {
                n = read(fd, t + len, KUBE_TOKEN_MAX - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = negative_errno();

                        free(t);
                        return r;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        t[len] = '\0';
        strip_ws(t);
        *ret = t;
        return 0;
}

/* Returns an owned copy of the current token (NULL when there is none). When force is set (after
 * a 401) the file is re-read even if it looks unchanged. */
static int current_token(struct kube_shared *sh, bool force, char **ret)
{
        struct stat st;
        char *copy = NULL;
        int r = 0;

        (void)pthread_mutex_lock(&sh->token_lock);
        if (sh->token_file && stat(sh->token_file, &st) >= 0 &&
            (force || !sh->token_stat_valid || st.st_ino != sh->token_stat.st_ino ||
             st.st_size != sh->token_stat.st_size ||
             st.st_mtim.tv_sec != sh->token_stat.st_mtim.tv_sec ||
             st.st_mtim.tv_nsec != sh->token_stat.st_mtim.tv_nsec)) {
                char *t = NULL;

                /* A failed re-read keeps the old token: the next request tries again. */
                if (read_token_file(sh->token_file, &t) >= 0) {
                        wipe_free(sh->token);
                        sh->token = t;
                        sh->token_stat = st;
                        sh->token_stat_valid = true;
                }
        }
        if (sh->token) {
                copy = strdup(sh->token);
                if (!copy)
                        r = -ENOMEM;
        }
        (void)pthread_mutex_unlock(&sh->token_lock);

        if (r < 0)
                return r;
        *ret = copy;
        return 0;
}

/* The token of this request: the identity's bearer token, else the shared one. */
static int client_token(struct kube_client *c, bool force, char **ret)
{
        if (c->bearer) {
                *ret = strdup(c->bearer);
                return *ret ? 0 : -ENOMEM;
        }
        return current_token(c->sh, force, ret);
}

/* ---- paths and queries ---- */

static bool segment_ok(const char *s)
{
        if (!s || !*s || streq(s, ".") || streq(s, ".."))
                return false;
        for (const char *p = s; *p; p++) {
                unsigned char ch = (unsigned char)*p;

                if (ch <= 0x20 || ch >= 0x7f || ch == '/' || ch == '?' || ch == '#' || ch == '%' ||
                    ch == '\\')
                        return false;
        }
        return true;
}

int kube_resource_path(const struct gvr *r, const char *ns, const char *name,
                       const char *subresource, char *buf, size_t len)
{
        bool core;
        int n;

        if (!r || !buf || len == 0 || !segment_ok(r->version) || !segment_ok(r->resource))
                return -EINVAL;
        core = !r->group || r->group[0] == '\0';
        if (!core && !segment_ok(r->group))
                return -EINVAL;
        if (ns && *ns && !segment_ok(ns))
                return -EINVAL;
        if (name && !segment_ok(name))
                return -EINVAL;
        if (subresource && (!name || !segment_ok(subresource)))
                return -EINVAL;

        /* /api/v1 or /apis/<group>/<version>, [/namespaces/<ns>], /<resource>, [/<name>] */
        n = snprintf(buf, len, "%s%s/%s%s%s/%s%s%s", core ? "/api" : "/apis/", core ? "" : r->group,
                     r->version, ns && *ns ? "/namespaces/" : "", ns && *ns ? ns : "", r->resource,
                     name ? "/" : "", name ? name : "");
        if (n < 0 || (size_t)n >= len)
                return -ENOBUFS;
        if (subresource) {
                int m = snprintf(buf + n, len - (size_t)n, "/%s", subresource);

                if (m < 0 || (size_t)m >= len - (size_t)n)
                        return -ENOBUFS;
        }
        return 0;
}

/* Appends "?key=value" or "&key=value" (value URL-escaped). NULL value: nothing. */
static int query_add(struct kube_client *c, struct buf *url, const char *key, const char *value)
{
        char *esc;
        int r;

        if (!value)
                return 0;
        esc = curl_easy_escape(c->curl, value, 0);
        if (!esc)
                return -ENOMEM;
        r = buf_printf(url, "%s%s=%s", strchr(buf_str(url), '?') ? "&" : "?", key, esc);
        curl_free(esc);
        return r;
}

static int query_add_uint(struct kube_client *c, struct buf *url, const char *key, unsigned v)
{
        char s[16];

        if (v == 0)
                return 0;
        (void)snprintf(s, sizeof(s), "%u", v);
        return query_add(c, url, key, s);
}

/* Builds server + resource path into url. */
static int build_url(struct kube_client *c, struct buf *url, const struct gvr *r, const char *ns,
                     const char *name, const char *subresource)
{
        char path[2048];
        int k;

        k = kube_resource_path(r, ns, name, subresource, path, sizeof(path));
        if (k < 0)
                return k;
        return buf_printf(url, "%s%s", c->sh->server, path);
}

/* ---- the request engine ---- */

bool kube_throttle_is_retryable(int http_code, unsigned retry_after)
{
        /* API Priority and Fairness rejects with 429 and Retry-After; an overloaded or starting
         * server may answer 503 with Retry-After. Neither processed the request: safe to resend
         * whatever the method (client-go's checkWait does the same). */
        return http_code == 429 || (http_code == 503 && retry_after > 0);
}

usec_t kube_throttle_delay(unsigned retry_after, unsigned attempt, usec_t cap)
{
        usec_t backoff = KUBE_THROTTLE_BACKOFF_BASE << MIN(attempt, 16U);
        usec_t d = (usec_t)retry_after * USEC_PER_SEC;

        if (backoff > d)
                d = backoff;
        return MIN(d, cap);
}

void kube_client_throttle_stats(const struct kube_client *c, unsigned long *ret_throttled,
                                unsigned long *ret_exhausted)
{
        if (ret_throttled)
                *ret_throttled = atomic_load(&c->sh->throttled);
        if (ret_exhausted)
                *ret_exhausted = atomic_load(&c->sh->throttle_exhausted);
}

struct response {
        struct buf body;
        unsigned retry_after;
        int cb_error; /* set by callbacks; wins over the CURLcode */
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
        struct response *resp = userdata;
        size_t n = size * nmemb;
        int r;

        r = buf_append(&resp->body, data, n);
        if (r < 0) {
                resp->cb_error = r == -E2BIG ? -EFBIG : r;
                return 0;
        }
        return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userdata)
{
        struct response *resp = userdata;
        size_t n = size * nmemb;
        static const char name[] = "retry-after:";
        char value[32];
        size_t i, j = 0;
        uint32_t secs;

        if (n > sizeof(name) - 1 && strncasecmp(data, name, sizeof(name) - 1) == 0) {
                for (i = sizeof(name) - 1; i < n && (data[i] == ' ' || data[i] == '\t'); i++)
                        ;
                for (; i < n && j + 1 < sizeof(value) && data[i] != '\r' && data[i] != '\n'; i++)
                        value[j++] = data[i];
                value[j] = '\0';
                /* delta-seconds; an HTTP-date (never sent by the apiserver) counts as 1 s */
                if (safe_atou32(value, &secs) >= 0)
                        resp->retry_after = secs > 86400 ? 86400 : secs;
                else if (j > 0)
                        resp->retry_after = 1;
        }
        return n;
}

static int curl_to_errno(CURLcode cc)
{
        switch (cc) {
        case CURLE_OK:
                return 0;
        case CURLE_OUT_OF_MEMORY:
                return -ENOMEM;
        case CURLE_OPERATION_TIMEDOUT:
                return -ETIMEDOUT;
        case CURLE_COULDNT_CONNECT:
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
                return -ECONNREFUSED;
        case CURLE_ABORTED_BY_CALLBACK:
                return -ECANCELED;
        default:
                return -EIO;
        }
}

static void status_transport(struct kube_status *reterr, struct kube_client *c, CURLcode cc)
{
        if (!reterr)
                return;
        *reterr = (struct kube_status){ 0 };
        (void)snprintf(reterr->message, sizeof(reterr->message), "%s: %s", c->sh->server,
                       c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc));
}

static void status_local(struct kube_status *reterr, const char *msg)
{
        if (!reterr)
                return;
        *reterr = (struct kube_status){ 0 };
        (void)snprintf(reterr->message, sizeof(reterr->message), "%s", msg);
}

#define SETOPT(h, opt, val)                                       \
        do {                                                      \
                if (cc == CURLE_OK)                               \
                        cc = curl_easy_setopt((h), (opt), (val)); \
        } while (0)

static void curl_slist_free_allp(struct curl_slist **l)
{
        if (*l)
                curl_slist_free_all(*l);
}

/* Resets the handle and applies everything common to all requests. */
static CURLcode setup_handle(struct kube_client *c, const char *url, const char *method,
                             const struct curl_slist *headers)
{
        struct kube_shared *sh = c->sh;
        CURL *h = c->curl;
        CURLcode cc = CURLE_OK;

        curl_easy_reset(h);
        c->errbuf[0] = '\0';
        SETOPT(h, CURLOPT_URL, url);
        SETOPT(h, CURLOPT_SHARE, sh->share);
        SETOPT(h, CURLOPT_NOSIGNAL, 1L);
        SETOPT(h, CURLOPT_ERRORBUFFER, c->errbuf);
        SETOPT(h, CURLOPT_USERAGENT, sh->user_agent);
        SETOPT(h, CURLOPT_PROTOCOLS_STR, "http,https");
        SETOPT(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        SETOPT(h, CURLOPT_CONNECTTIMEOUT_MS, KUBE_CONNECT_TIMEOUT_MS);
        SETOPT(h, CURLOPT_TCP_KEEPALIVE, 1L);
        SETOPT(h, CURLOPT_TCP_KEEPIDLE, 30L);
        SETOPT(h, CURLOPT_TCP_KEEPINTVL, 10L);
        SETOPT(h, CURLOPT_HTTPHEADER, headers);
        if (streq(method, "GET"))
                SETOPT(h, CURLOPT_HTTPGET, 1L);
        else
                SETOPT(h, CURLOPT_CUSTOMREQUEST, method);

        if (sh->ca_pem) {
                struct curl_blob blob = { .data = sh->ca_pem,
                                          .len = strlen(sh->ca_pem),
                                          .flags = CURL_BLOB_COPY };

                SETOPT(h, CURLOPT_CAINFO_BLOB, &blob);
        }
        if (sh->client_cert_pem && sh->client_key_pem) {
                struct curl_blob cert = { .data = sh->client_cert_pem,
                                          .len = strlen(sh->client_cert_pem),
                                          .flags = CURL_BLOB_COPY };
                struct curl_blob key = { .data = sh->client_key_pem,
                                         .len = strlen(sh->client_key_pem),
                                         .flags = CURL_BLOB_COPY };

                SETOPT(h, CURLOPT_SSLCERTTYPE, "PEM");
                SETOPT(h, CURLOPT_SSLCERT_BLOB, &cert);
                SETOPT(h, CURLOPT_SSLKEYTYPE, "PEM");
                SETOPT(h, CURLOPT_SSLKEY_BLOB, &key);
        }
        if (sh->insecure) {
                SETOPT(h, CURLOPT_SSL_VERIFYPEER, 0L);
                SETOPT(h, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        return cc;
}

static int make_headers(const char *content_type, const char *token, bool json_accept,
                        const struct curl_slist *extra, struct curl_slist **ret)
{
        CLEANUP(curl_slist_free_allp) struct curl_slist *l = NULL;
        struct curl_slist *t;
        char line[256];

        t = curl_slist_append(l, json_accept ? "Accept: application/json" : "Accept: */*");
        if (!t)
                return -ENOMEM;
        l = t;
        /* No "Expect: 100-continue" round trip for larger bodies. */
        t = curl_slist_append(l, "Expect:");
        if (!t)
                return -ENOMEM;
        l = t;
        if (content_type) {
                if ((size_t)snprintf(line, sizeof(line), "Content-Type: %s", content_type) >=
                    sizeof(line))
                        return -EINVAL;
                t = curl_slist_append(l, line);
                if (!t)
                        return -ENOMEM;
                l = t;
        }
        if (token) {
                AUTOFREE char *auth = NULL;

                /* a token is one header value: no CR/LF or other control characters */
                for (const char *p = token; *p; p++)
                        if ((unsigned char)*p < 0x20 || *p == 0x7f)
                                return -EINVAL;
                if (asprintf(&auth, "Authorization: Bearer %s", token) < 0) {
                        auth = NULL;
                        return -ENOMEM;
                }
                t = curl_slist_append(l, auth);
                explicit_bzero(auth, strlen(auth));
                if (!t)
                        return -ENOMEM;
                l = t;
        }
        for (; extra; extra = extra->next) {
                t = curl_slist_append(l, extra->data);
                if (!t)
                        return -ENOMEM;
                l = t;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/*
 * One non-watch request: rate limit, send, collect the body, map the outcome. Retries once with
 * a freshly read token after a 401 when the token comes from a file (rotation).
 */
static int perform(struct kube_client *c, const char *method, const char *url,
                   const char *content_type, const char *body, json_t **ret_obj,
                   struct kube_status *reterr)
{
        unsigned throttled = 0;

        for (unsigned attempt = 0;; attempt++) {
                CLEANUP(curl_slist_free_allp) struct curl_slist *headers = NULL;
                struct response resp = { .body = BUF_INIT(KUBE_RESPONSE_MAX) };
                AUTOFREE char *token = NULL;
                CURLcode cc;
                long code = 0;
                int r;

                r = client_token(c, attempt > throttled, &token);
                if (r < 0)
                        return r;
                r = make_headers(body ? content_type : NULL, token, true, c->impersonate, &headers);
                if (token)
                        explicit_bzero(token, strlen(token));
                if (r < 0)
                        return r;

                cc = setup_handle(c, url, method, headers);
                SETOPT(c->curl, CURLOPT_WRITEFUNCTION, on_body);
                SETOPT(c->curl, CURLOPT_WRITEDATA, &resp);
                SETOPT(c->curl, CURLOPT_HEADERFUNCTION, on_header);
                SETOPT(c->curl, CURLOPT_HEADERDATA, &resp);
                SETOPT(c->curl, CURLOPT_TIMEOUT_MS, (long)(c->sh->timeout / USEC_PER_MSEC));
                /* the apiserver gzips large responses (LISTs) when asked */
                SETOPT(c->curl, CURLOPT_ACCEPT_ENCODING, "gzip");
                if (body) {
                        SETOPT(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
                        SETOPT(c->curl, CURLOPT_POSTFIELDS, body);
                }
                if (cc != CURLE_OK) {
                        buf_release(&resp.body);
                        status_transport(reterr, c, cc);
                        return curl_to_errno(cc) == -EIO ? -EINVAL : curl_to_errno(cc);
                }

                limiter_wait(c);
                cc = curl_easy_perform(c->curl);
                if (c->sh->observer) {
                        long obs_code = 0;
                        if (cc == CURLE_OK)
                                (void)curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &obs_code);
                        c->sh->observer(c->sh->observer_userdata, method, (int)obs_code);
                }
                if (resp.cb_error < 0) {
                        buf_release(&resp.body);
                        status_local(reterr, resp.cb_error == -EFBIG ? "response body too large"
                                                                     : "out of memory");
                        return resp.cb_error;
                }
                if (cc != CURLE_OK) {
                        buf_release(&resp.body);
                        status_transport(reterr, c, cc);
                        return curl_to_errno(cc);
                }
                (void)curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);

                if (code == 401 && attempt == throttled && c->sh->token_file && !c->bearer) {
                        buf_release(&resp.body);
                        continue;
                }

                if (kube_throttle_is_retryable((int)code, resp.retry_after)) {
                        atomic_fetch_add(&c->sh->throttled, 1);
                        if (throttled < c->sh->throttle_retries) {
                                buf_release(&resp.body);
                                sleep_usec(kube_throttle_delay(resp.retry_after, throttled,
                                                               c->sh->throttle_wait_max));
                                throttled++;
                                continue;
                        }
                        atomic_fetch_add(&c->sh->throttle_exhausted, 1);
                }

                if (code < 200 || code >= 300) {
                        struct kube_status st;

                        r = kube_status_from_response((int)code, resp.body.p, resp.body.len, &st);
                        if (st.retry_after == 0 || resp.retry_after > 0)
                                st.retry_after = resp.retry_after;
                        buf_release(&resp.body);
                        if (reterr)
                                *reterr = st;
                        return r < 0 ? r : -EIO;
                }

                if (ret_obj) {
                        json_t *obj = NULL;
                        char msg[256];

                        if (resp.body.len == 0)
                                obj = json_object();
                        else {
                                r = json_parse_bounded_flags(resp.body.p, resp.body.len,
                                                             JSON_PARSE_ALLOW_NUL, &obj, msg,
                                                             sizeof(msg));
                                if (r < 0) {
                                        buf_release(&resp.body);
                                        if (reterr) {
                                                *reterr = (struct kube_status){
                                                        .http_code = (int)code
                                                };
                                                (void)snprintf(reterr->message,
                                                               sizeof(reterr->message),
                                                               "invalid JSON in response: %s", msg);
                                        }
                                        return -EBADMSG;
                                }
                        }
                        buf_release(&resp.body);
                        if (!obj)
                                return -ENOMEM;
                        *ret_obj = obj;
                } else
                        buf_release(&resp.body);
                if (reterr)
                        *reterr = (struct kube_status){ .http_code = (int)code };
                return 0;
        }
}

static int dump_body(const json_t *obj, char **ret)
{
        char *s;

        s = json_dumps(obj, JSON_COMPACT);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int kube_get(struct kube_client *c, const struct gvr *r, const char *ns, const char *name,
             json_t **ret_obj, struct kube_status *reterr)
{
        struct buf url CLEANUP(buf_releasep) = BUF_INIT(KUBE_URL_MAX);
        int k;

        if (!c || !name)
                return -EINVAL;
        k = build_url(c, &url, r, ns, name, NULL);
        if (k < 0)
                return k;
        return perform(c, "GET", buf_str(&url), NULL, NULL, ret_obj, reterr);
}

int kube_list(struct kube_client *c, const struct gvr *r, const char *ns,
              const struct kube_list_options *opts, json_t **ret_list, struct kube_status *reterr)
{
        struct buf url CLEANUP(buf_releasep) = BUF_INIT(KUBE_URL_MAX);
        static const struct kube_list_options none = { 0 };
        int k;

        if (!c)
                return -EINVAL;
        if (!opts)
                opts = &none;
        k = build_url(c, &url, r, ns, NULL, NULL);
        if (k >= 0)
                k = query_add(c, &url, "labelSelector", opts->label_selector);
        if (k >= 0)
                k = query_add(c, &url, "fieldSelector", opts->field_selector);
        if (k >= 0)
                k = query_add_uint(c, &url, "limit", opts->limit);
        if (k >= 0 && opts->continue_token && *opts->continue_token)
                k = query_add(c, &url, "continue", opts->continue_token);
        if (k >= 0)
                k = query_add(c, &url, "resourceVersion", opts->resource_version);
        if (k >= 0)
                k = query_add(c, &url, "resourceVersionMatch", opts->resource_version_match);
        if (k < 0)
                return k;
        return perform(c, "GET", buf_str(&url), NULL, NULL, ret_list, reterr);
}

static int add_write_query(struct kube_client *c, struct buf *url,
                           const struct kube_write_options *opts)
{
        int k = 0;

        if (!opts)
                return 0;
        k = query_add(c, url, "fieldManager", opts->field_manager);
        if (k >= 0 && opts->force)
                k = query_add(c, url, "force", "true");
        if (k >= 0 && opts->dry_run)
                k = query_add(c, url, "dryRun", "All");
        return k;
}

/* POST/PUT/PATCH of body to the resource URL with the write options' query. */
static int write_request(struct kube_client *c, const char *method, const struct gvr *r,
                         const char *ns, const char *name, const struct kube_write_options *opts,
                         const char *content_type, const json_t *obj, json_t **ret_obj,
                         struct kube_status *reterr)
{
        struct buf url CLEANUP(buf_releasep) = BUF_INIT(KUBE_URL_MAX);
        AUTOFREE char *body = NULL;
        int k;

        k = build_url(c, &url, r, ns, name, opts ? opts->subresource : NULL);
        if (k >= 0)
                k = add_write_query(c, &url, opts);
        if (k >= 0)
                k = dump_body(obj, &body);
        if (k < 0)
                return k;
        return perform(c, method, buf_str(&url), content_type, body, ret_obj, reterr);
}

int kube_create(struct kube_client *c, const struct gvr *r, const char *ns, const json_t *obj,
                const struct kube_write_options *opts, json_t **ret_obj, struct kube_status *reterr)
{
        if (!c || !json_is_object(obj) || (opts && opts->subresource))
                return -EINVAL;
        return write_request(c, "POST", r, ns, NULL, opts, "application/json", obj, ret_obj,
                             reterr);
}

int kube_update(struct kube_client *c, const struct gvr *r, const char *ns, const char *name,
                const json_t *obj, const struct kube_write_options *opts, json_t **ret_obj,
                struct kube_status *reterr)
{
        if (!c || !name || !json_is_object(obj))
                return -EINVAL;
        return write_request(c, "PUT", r, ns, name, opts, "application/json", obj, ret_obj, reterr);
}

static const char *patch_content_type(enum kube_patch_type type)
{
        switch (type) {
        case KUBE_PATCH_MERGE:
                return "application/merge-patch+json";
        case KUBE_PATCH_JSON:
                return "application/json-patch+json";
        case KUBE_PATCH_APPLY:
                return "application/apply-patch+yaml";
        case KUBE_PATCH_STRATEGIC:
                return "application/strategic-merge-patch+json";
        }
        return NULL;
}

int kube_patch(struct kube_client *c, const struct gvr *r, const char *ns, const char *name,
               enum kube_patch_type type, const json_t *patch,
               const struct kube_write_options *opts, json_t **ret_obj, struct kube_status *reterr)
{
        const char *ctype = patch_content_type(type);

        if (!c || !name || !patch || !ctype)
                return -EINVAL;
        if (type == KUBE_PATCH_JSON ? !json_is_array(patch) : !json_is_object(patch))
                return -EINVAL;
        if (type == KUBE_PATCH_APPLY && (!opts || !opts->field_manager))
                return -EINVAL;
        return write_request(c, "PATCH", r, ns, name, opts, ctype, patch, ret_obj, reterr);
}

int kube_delete(struct kube_client *c, const struct gvr *r, const char *ns, const char *name,
                const struct kube_delete_options *opts, json_t **ret_obj,
                struct kube_status *reterr)
{
        struct buf url CLEANUP(buf_releasep) = BUF_INIT(KUBE_URL_MAX);
        AUTOFREE char *body = NULL;
        int k;

        if (!c || !name)
                return -EINVAL;
        k = build_url(c, &url, r, ns, name, NULL);
        if (k < 0)
                return k;

        if (opts && (opts->propagation_policy || opts->precondition_uid || opts->precondition_rv)) {
                json_auto_t *o = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion",
                                           "v1");
                json_t *pre;

                if (!o)
                        return -ENOMEM;
                if (opts->propagation_policy &&
                    json_object_set_new(o, "propagationPolicy",
                                        json_string(opts->propagation_policy)) < 0)
                        return -ENOMEM;
                if (opts->precondition_uid || opts->precondition_rv) {
                        pre = json_object();
                        if (!pre || json_object_set_new(o, "preconditions", pre) < 0)
                                return -ENOMEM;
                        if (opts->precondition_uid &&
                            json_object_set_new(pre, "uid", json_string(opts->precondition_uid)) <
                                    0)
                                return -ENOMEM;
                        if (opts->precondition_rv &&
                            json_object_set_new(pre, "resourceVersion",
                                                json_string(opts->precondition_rv)) < 0)
                                return -ENOMEM;
                }
                k = dump_body(o, &body);
                if (k < 0)
                        return k;
        }
        return perform(c, "DELETE", buf_str(&url), "application/json", body, ret_obj, reterr);
}

int kube_request(struct kube_client *c, const char *method, const char *path,
                 const char *content_type, const json_t *body, json_t **ret_obj,
                 struct kube_status *reterr)
{
        struct buf url CLEANUP(buf_releasep) = BUF_INIT(KUBE_URL_MAX);
        AUTOFREE char *data = NULL;
        int k;

        if (!c || !method || !path || path[0] != '/')
                return -EINVAL;
        k = buf_printf(&url, "%s%s", c->sh->server, path);
        if (k >= 0 && body)
                k = dump_body(body, &data);
        if (k < 0)
                return k;
        return perform(c, method, buf_str(&url), content_type ? content_type : "application/json",
                       data, ret_obj, reterr);
}

/* ---- watch ---- */

struct watch_state {
        struct kube_client *c;
        struct watch_splitter splitter;
        struct buf error_body; /* body of a non-2xx answer */
        kube_watch_fn fn;
        void *userdata;
        const atomic_bool *cancel;
        struct kube_status *reterr;
        long code; /* 0 until the first body byte */
        int error; /* first error that stopped the stream */
};

static int on_watch_line(void *userdata, const char *line, size_t len)
{
        struct watch_state *w = userdata;
        json_auto_t *obj = NULL;
        enum watch_event_type type;
        int r;

        r = watch_event_decode(line, len, &type, &obj);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (w->reterr) {
                        *w->reterr = (struct kube_status){ .http_code = (int)w->code };
                        (void)snprintf(w->reterr->message, sizeof(w->reterr->message),
                                       "malformed watch event: %.*s", (int)MIN(len, (size_t)200),
                                       line);
                }
                return -EBADMSG;
        }

        if (type == WATCH_EVENT_ERROR) {
                struct kube_status st;
                int e = kube_status_from_json(obj, &st);

                r = w->fn(w->userdata, watch_event_type_to_string(type), obj);
                if (r < 0)
                        return r;
                if (w->reterr)
                        *w->reterr = st;
                return e; /* the server ends the stream after an ERROR event anyway */
        }
        return w->fn(w->userdata, watch_event_type_to_string(type), obj);
}

static size_t on_watch_data(char *data, size_t size, size_t nmemb, void *userdata)
{
        struct watch_state *w = userdata;
        size_t n = size * nmemb;
        int r;

        if (w->code == 0)
                (void)curl_easy_getinfo(w->c->curl, CURLINFO_RESPONSE_CODE, &w->code);

        if (w->code < 200 || w->code >= 300) {
                /* keep the Status body; a truncated error body is still fine for messages */
                r = buf_append(&w->error_body, data,
                               MIN(n, w->error_body.max - 1 - w->error_body.len));
                return r == -ENOMEM ? 0 : n;
        }

        if (w->cancel && atomic_load(w->cancel)) {
                w->error = -ECANCELED;
                return 0;
        }
        r = watch_splitter_feed(&w->splitter, data, n, on_watch_line, w);
        if (r < 0) {
                if (r == -EBADMSG && w->reterr && w->reterr->message[0] == '\0') {
                        *w->reterr = (struct kube_status){ .http_code = (int)w->code };
                        (void)snprintf(w->reterr->message, sizeof(w->reterr->message),
                                       "watch line too long or contains a NUL byte");
                }
                w->error = r;
                return 0;
        }
        return n;
}

static int on_watch_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                             curl_off_t ultotal, curl_off_t ulnow)
{
        struct watch_state *w = userdata;

        if (w->cancel && atomic_load(w->cancel)) {
                w->error = -ECANCELED;
                return 1;
        }
        return 0;
}

int kube_watch(struct kube_client *c, const struct gvr *r, const char *ns,
               const struct kube_watch_options *opts, kube_watch_fn fn, void *userdata,
               struct kube_status *reterr)
{
        static const struct kube_watch_options none = { 0 };
        struct buf url CLEANUP(buf_releasep) = BUF_INIT(KUBE_URL_MAX);
        CLEANUP(curl_slist_free_allp) struct curl_slist *headers = NULL;
        AUTOFREE char *token = NULL;
        struct watch_state w = {
                .c = c,
                .error_body = BUF_INIT(KUBE_ERROR_BODY_MAX),
                .fn = fn,
                .userdata = userdata,
                .reterr = reterr,
        };
        struct response hdr = { .body = BUF_INIT(1) }; /* headers only: Retry-After */
        CURLcode cc;
        int k;

        if (!c || !fn)
                return -EINVAL;
        if (!opts)
                opts = &none;
        w.cancel = opts->cancel;
        if (reterr)
                *reterr = (struct kube_status){ 0 };

        k = build_url(c, &url, r, ns, NULL, NULL);
        if (k >= 0)
                k = query_add(c, &url, "watch", "1");
        if (k >= 0)
                k = query_add(c, &url, "labelSelector", opts->label_selector);
        if (k >= 0)
                k = query_add(c, &url, "fieldSelector", opts->field_selector);
        if (k >= 0)
                k = query_add(c, &url, "resourceVersion", opts->resource_version);
        if (k >= 0 && opts->allow_bookmarks)
                k = query_add(c, &url, "allowWatchBookmarks", "true");
        if (k >= 0)
                k = query_add_uint(c, &url, "timeoutSeconds", opts->timeout_seconds);
        if (k >= 0)
                k = client_token(c, false, &token);
        if (k >= 0)
                k = make_headers(NULL, token, true, c->impersonate, &headers);
        if (k < 0)
                return k;
        if (opts->cancel && atomic_load(opts->cancel))
                return -ECANCELED;

        watch_splitter_init(&w.splitter, WATCH_LINE_MAX);
        cc = setup_handle(c, buf_str(&url), "GET", headers);
        SETOPT(c->curl, CURLOPT_WRITEFUNCTION, on_watch_data);
        SETOPT(c->curl, CURLOPT_WRITEDATA, &w);
        SETOPT(c->curl, CURLOPT_NOPROGRESS, 0L);
        SETOPT(c->curl, CURLOPT_XFERINFOFUNCTION, on_watch_progress);
        SETOPT(c->curl, CURLOPT_XFERINFODATA, &w);
        SETOPT(c->curl, CURLOPT_HEADERFUNCTION, on_header);
        SETOPT(c->curl, CURLOPT_HEADERDATA, &hdr);
        if (opts->timeout_seconds > 0)
                /* the server ends the stream; this only catches a server that does not */
                SETOPT(c->curl, CURLOPT_TIMEOUT_MS, ((long)opts->timeout_seconds + 60L) * 1000L);
        if (cc != CURLE_OK) {
                watch_splitter_release(&w.splitter);
                buf_release(&w.error_body);
                status_transport(reterr, c, cc);
                return curl_to_errno(cc);
        }

        limiter_wait(c);
        cc = curl_easy_perform(c->curl);
        if (c->sh->observer) {
                long obs_code = w.code;
                if (obs_code == 0 && cc == CURLE_OK)
                        (void)curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &obs_code);
                c->sh->observer(c->sh->observer_userdata, "WATCH", (int)obs_code);
        }

        if (w.error < 0)
                k = w.error;
        else if (cc != CURLE_OK) {
                status_transport(reterr, c, cc);
                k = curl_to_errno(cc);
        } else {
                if (w.code == 0)
                        (void)curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &w.code);
                if (w.code < 200 || w.code >= 300) {
                        struct kube_status st;

                        k = kube_status_from_response((int)w.code, w.error_body.p, w.error_body.len,
                                                      &st);
                        if (hdr.retry_after > 0)
                                st.retry_after = hdr.retry_after;
                        if (reterr)
                                *reterr = st;
                        if (k >= 0)
                                k = -EIO;
                } else {
                        k = watch_splitter_finish(&w.splitter);
                        if (k < 0 && reterr) {
                                *reterr = (struct kube_status){ .http_code = (int)w.code };
                                (void)snprintf(reterr->message, sizeof(reterr->message),
                                               "watch stream ended inside an event line");
                        }
                }
        }
        if (k == -ECANCELED && reterr)
                status_local(reterr, "watch cancelled");

        watch_splitter_release(&w.splitter);
        buf_release(&w.error_body);
        return k;
}

/* The port (api.h): thin adapters from void *userdata to the client. */
static int api_get(void *userdata, const struct gvr *r, const char *ns, const char *name,
                   json_t **ret_obj, struct kube_status *reterr)
{
        return kube_get(userdata, r, ns, name, ret_obj, reterr);
}

static int api_list(void *userdata, const struct gvr *r, const char *ns,
                    const struct kube_list_options *opts, json_t **ret_list,
                    struct kube_status *reterr)
{
        return kube_list(userdata, r, ns, opts, ret_list, reterr);
}

static int api_create(void *userdata, const struct gvr *r, const char *ns, const json_t *obj,
                      const struct kube_write_options *opts, json_t **ret_obj,
                      struct kube_status *reterr)
{
        return kube_create(userdata, r, ns, obj, opts, ret_obj, reterr);
}

static int api_update(void *userdata, const struct gvr *r, const char *ns, const char *name,
                      const json_t *obj, const struct kube_write_options *opts, json_t **ret_obj,
                      struct kube_status *reterr)
{
        return kube_update(userdata, r, ns, name, obj, opts, ret_obj, reterr);
}

static int api_patch(void *userdata, const struct gvr *r, const char *ns, const char *name,
                     enum kube_patch_type type, const json_t *patch,
                     const struct kube_write_options *opts, json_t **ret_obj,
                     struct kube_status *reterr)
{
        return kube_patch(userdata, r, ns, name, type, patch, opts, ret_obj, reterr);
}

static int api_delete(void *userdata, const struct gvr *r, const char *ns, const char *name,
                      const struct kube_delete_options *opts, json_t **ret_obj,
                      struct kube_status *reterr)
{
        return kube_delete(userdata, r, ns, name, opts, ret_obj, reterr);
}

static const struct kube_api_ops kube_client_api_ops = {
        .get = api_get,
        .list = api_list,
        .create = api_create,
        .update = api_update,
        .patch = api_patch,
        .remove = api_delete,
};

struct kube_api kube_client_api(struct kube_client *c)
{
        return (struct kube_api){ .ops = &kube_client_api_ops, .userdata = c };
}
