/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/fetch.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "agent/extract.h"
#include "agent/plan.h"
#include "agent/gcs-json.h"
#include "agent/s3-xml.h"
#include "agent/uri.h"
#include "util/buf.h"
#include "util/log.h"

#define ERROR_BODY_MAX ((size_t)16 * 1024)
#define LIST_PAGE_MAX  ((size_t)16 * 1024 * 1024)
#define EMPTY_SHA256   "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* The agent's configuration is read at start-up; getenv() races only with setenv(), and nothing
 * in this process changes its environment. */
static const char *env_get(const char *name)
{
        return getenv(name); /* NOLINT(concurrency-mt-unsafe) */
}

static char *env_dup(const char *name)
{
        const char *v = env_get(name);
        return v && *v ? strdup(v) : NULL;
}

static bool env_bool(const char *name, bool def)
{
        const char *v = env_get(name);

        if (!v || !*v)
                return def;
        return streq(v, "1") || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0;
}

/* The first line of file @dir/@name, or NULL. */
static char *read_secret(const char *dir, const char *name)
{
        AUTOFREE char *path = NULL;
        char line[4096];
        FILE *f;

        if (!dir || asprintf(&path, "%s/%s", dir, name) < 0)
                return NULL;
        f = fopen(path, "re");
        if (!f)
                return NULL;
        if (!fgets(line, sizeof(line), f)) {
                (void)fclose(f);
                return NULL;
        }
        (void)fclose(f); /* read-only: nothing to lose */
        line[strcspn(line, "\r\n")] = 0;
        return *line ? strdup(line) : NULL;
}

static void strip_slashes(char *url)
{
        if (url)
                for (size_t n = strlen(url); n > 0 && url[n - 1] == '/'; n--)
                        url[n - 1] = 0;
}

void fetch_config_release(struct fetch_config *c)
{
        free(c->pvc_root);
        free(c->s3_endpoint);
        free(c->s3_region);
        free(c->ca_bundle);
        free(c->access_key);
        free(c->secret_key);
        free(c->session_token);
        free(c->gcs_endpoint);
        free(c->gcs_token);
        mr_resolve_config_release(&c->registry);
        *c = (struct fetch_config){ 0 };
}

/* $AWS_ENDPOINT_URL or $S3_ENDPOINT (a scheme added from $S3_USE_HTTPS), else AWS's regional
 * endpoint. NULL on OOM. */
static char *s3_endpoint_from_env(const char *region)
{
        const char *ep = env_get("AWS_ENDPOINT_URL");
        char *url = NULL;

        if (!ep || !*ep)
                ep = env_get("S3_ENDPOINT");
        if (ep && *ep) {
                if (strstr(ep, "://"))
                        url = strdup(ep);
                else if (asprintf(&url, "%s://%s",
                                  env_bool("S3_USE_HTTPS", true) ? "https" : "http", ep) < 0)
                        url = NULL;
        } else if (region && asprintf(&url, "https://s3.%s.amazonaws.com", region) < 0) {
                url = NULL;
        }
        strip_slashes(url);
        return url;
}

/* $STORAGE_EMULATOR_HOST (host:port means http://host:port), else Google's endpoint. */
static char *gcs_endpoint_from_env(void)
{
        const char *ep = env_get("STORAGE_EMULATOR_HOST");
        char *url = NULL;

        if (!ep || !*ep)
                url = strdup("https://storage.googleapis.com");
        else if (strstr(ep, "://"))
                url = strdup(ep);
        else if (asprintf(&url, "http://%s", ep) < 0)
                url = NULL;
        strip_slashes(url);
        return url;
}

/* The AWS key pair (+ session token) from the environment or the files of $AWS_CREDENTIALS_DIR;
 * none at all when either half is missing or AWS_ANONYMOUS_CREDENTIAL is set. */
static void s3_credentials_from_env(struct fetch_config *c)
{
        const char *creds = env_get("AWS_CREDENTIALS_DIR");

        if (env_bool("AWS_ANONYMOUS_CREDENTIAL", false))
                return;
        c->access_key = env_dup("AWS_ACCESS_KEY_ID");
        c->secret_key = env_dup("AWS_SECRET_ACCESS_KEY");
        c->session_token = env_dup("AWS_SESSION_TOKEN");
        if (!c->access_key && creds) {
                c->access_key = read_secret(creds, "AWS_ACCESS_KEY_ID");
                c->secret_key = read_secret(creds, "AWS_SECRET_ACCESS_KEY");
                c->session_token = read_secret(creds, "AWS_SESSION_TOKEN");
        }
        if (!c->access_key || !c->secret_key) {
                free(c->access_key);
                free(c->secret_key);
                c->access_key = c->secret_key = NULL;
        }
}

int fetch_config_from_env(struct fetch_config *c)
{
        *c = (struct fetch_config){
                .connect_timeout_sec = 10,
                .stall_timeout_sec = 30,
                .size_max = 64ULL << 30,
                .attempts = 4,
                .retry_base = 500 * USEC_PER_MSEC,
                .s3_verify = env_bool("S3_VERIFY_SSL", true),
                .s3_virtual_host = env_bool("S3_USER_VIRTUAL_BUCKET", false) ||
                                   env_bool("S3_USE_VIRTUAL_BUCKET", false),
        };
        c->s3_region = env_dup("AWS_REGION");
        if (!c->s3_region)
                c->s3_region = env_dup("AWS_DEFAULT_REGION");
        if (!c->s3_region)
                c->s3_region = strdup("us-east-1");
        c->s3_endpoint = s3_endpoint_from_env(c->s3_region);
        c->gcs_endpoint = gcs_endpoint_from_env();
        c->gcs_token = env_dup("GOOGLE_OAUTH_ACCESS_TOKEN");
        c->ca_bundle = env_dup("AWS_CA_BUNDLE");
        s3_credentials_from_env(c);
        c->pvc_root = env_dup("MODELPLANE_PVC_ROOT");
        if (!c->pvc_root)
                c->pvc_root = strdup("/mnt/pvc");
        if (!c->s3_region || !c->s3_endpoint || !c->pvc_root || !c->gcs_endpoint ||
            mr_resolve_config_from_env(&c->registry) < 0) {
                fetch_config_release(c);
                return -ENOMEM;
        }
        return 0;
}

/* One transfer's sink: a file, or a capped buffer; error bodies always go to err. */
struct sink {
        CURL *curl;
        FILE *file;
        struct buf *body;
        struct buf err;
        uint64_t n, max;
        bool too_big;
};

static void sink_release(struct sink *s)
{
        buf_release(&s->err);
}

static size_t sink_write(char *p, size_t size, size_t nmemb, void *userdata)
{
        struct sink *s = userdata;
        size_t len = size * nmemb;
        long code = 0;

        curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code);
        if (code >= 300) {
                /* a long error body is truncated, never an abort */
                size_t room = s->err.max - 1 - s->err.len;
                if (buf_append(&s->err, p, MIN(len, room)) < 0)
                        return 0;
                return len;
        }
        s->n += len;
        if (s->n > s->max) {
                s->too_big = true;
                return 0;
        }
        if (s->file)
                return fwrite(p, 1, len, s->file);
        return buf_append(s->body, p, len) < 0 ? 0 : len;
}

double fetch_jitter01(void)
{
        uint32_t v = 0;

        if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
                v = (uint32_t)now_monotonic();
        return (double)v / 4294967296.0;
}

/* The URL-encoding S3 signs: unreserved characters kept, '/' kept when @keep_slash. */
static int s3_escape(struct buf *b, const char *s, bool keep_slash)
{
        static const char hex[] = "0123456789ABCDEF";
        int r = 0;

        for (const unsigned char *p = (const unsigned char *)s; *p && r >= 0; p++) {
                if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' || *p == '~' ||
                    (keep_slash && *p == '/'))
                        r = buf_putc(b, (char)*p);
                else
                        r = buf_printf(b, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
        }
        return r;
}

struct request {
        const char *url;    /* borrowed */
        bool s3;            /* sign with the S3 configuration */
        const char *bearer; /* borrowed; Authorization: Bearer, may be NULL */
        FILE *file;         /* sink: file (rewound per attempt) ... */
        struct buf *body;   /* ... or buffer (reset per attempt) */
        uint64_t max;
};

static bool retryable(CURLcode cc, long code)
{
        if (cc == CURLE_OK)
                return code >= 500 || code == 429 || code == 408;
        return cc != CURLE_WRITE_ERROR && cc != CURLE_URL_MALFORMAT &&
               cc != CURLE_UNSUPPORTED_PROTOCOL && cc != CURLE_FILESIZE_EXCEEDED;
}

/* What a transfer's options point to: alive until the transfer is done. */
struct transfer_opts {
        CURL *curl;
        struct curl_slist *hdrs;
        char *sigv4, *userpwd, *tok, *auth;
        char curlerr[CURL_ERROR_SIZE];
};

static void transfer_opts_release(struct transfer_opts *t)
{
        curl_easy_cleanup(t->curl);
        curl_slist_free_all(t->hdrs);
        free(t->sigv4);
        free(t->userpwd);
        free(t->tok);
        free(t->auth);
}

static void setopt_common(struct transfer_opts *t, const struct fetch_config *c,
                          const struct request *q, struct sink *s)
{
        CURL *curl = t->curl;

        curl_easy_setopt(curl, CURLOPT_URL, q->url);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, c->connect_timeout_sec);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, c->stall_timeout_sec);
        curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)q->max);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, sink_write);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, s);
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, t->curlerr);
        curl_easy_setopt(curl, CURLOPT_USERAGENT, "modelplane-agent/" MODELPLANE_VERSION);
}

/* http(s):// and gs://: redirects followed, an optional bearer token. */
static int setopt_plain(struct transfer_opts *t, const struct request *q)
{
        curl_easy_setopt(t->curl, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(t->curl, CURLOPT_MAXREDIRS, 5L);
        curl_easy_setopt(t->curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        if (!q->bearer)
                return 0;
        if (asprintf(&t->auth, "Authorization: Bearer %s", q->bearer) < 0) {
                t->auth = NULL;
                return -ENOMEM;
        }
        t->hdrs = curl_slist_append(t->hdrs, t->auth);
        curl_easy_setopt(t->curl, CURLOPT_HTTPHEADER, t->hdrs);
        return 0;
}

/* s3://: the endpoint's TLS settings and, with credentials, libcurl's SigV4. */
static int setopt_s3(struct transfer_opts *t, const struct fetch_config *c)
{
        if (!c->s3_verify) {
                curl_easy_setopt(t->curl, CURLOPT_SSL_VERIFYPEER, 0L);
                curl_easy_setopt(t->curl, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        if (c->ca_bundle)
                curl_easy_setopt(t->curl, CURLOPT_CAINFO, c->ca_bundle);
        if (!c->access_key)
                return 0;
        if (asprintf(&t->sigv4, "aws:amz:%s:s3", c->s3_region) < 0) {
                t->sigv4 = NULL;
                return -ENOMEM;
        }
        if (asprintf(&t->userpwd, "%s:%s", c->access_key, c->secret_key) < 0) {
                t->userpwd = NULL;
                return -ENOMEM;
        }
        t->hdrs = curl_slist_append(t->hdrs, "x-amz-content-sha256: " EMPTY_SHA256);
        if (c->session_token &&
            asprintf(&t->tok, "x-amz-security-token: %s", c->session_token) >= 0)
                t->hdrs = curl_slist_append(t->hdrs, t->tok);
        else
                t->tok = NULL;
        curl_easy_setopt(t->curl, CURLOPT_AWS_SIGV4, t->sigv4);
        curl_easy_setopt(t->curl, CURLOPT_USERPWD, t->userpwd);
        curl_easy_setopt(t->curl, CURLOPT_HTTPHEADER, t->hdrs);
        return 0;
}

/* Maps a finished transfer to 0 or an errno with the reason in @reterr. */
static int transfer_outcome(const struct request *q, const struct sink *s, CURLcode cc, long code,
                            const char *curlerr, char *reterr, size_t len)
{
        char reason[512];
        int r;

        if (s->too_big || cc == CURLE_FILESIZE_EXCEEDED) {
                (void)snprintf(reterr, len, "GET %s: larger than the size limit of %llu bytes",
                               q->url, (unsigned long long)q->max);
                return -EFBIG;
        }
        if (cc != CURLE_OK) {
                (void)snprintf(reterr, len, "GET %s: %s", q->url,
                               *curlerr ? curlerr : curl_easy_strerror(cc));
                return cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
        }
        if (code >= 300) {
                if (!s3_error_parse(buf_str(&s->err), s->err.len, reason, sizeof(reason)) &&
                    !gcs_error_parse(buf_str(&s->err), s->err.len, reason, sizeof(reason)))
                        (void)snprintf(reason, sizeof(reason), "%.200s", buf_str(&s->err));
                (void)snprintf(reterr, len, "GET %s: HTTP %ld%s%s", q->url, code,
                               *reason ? " " : "", reason);
                return code == 403 || code == 401 ? -EACCES : code == 404 ? -ENOENT : -EIO;
        }
        if (q->file && fflush(q->file) != 0) {
                r = negative_errno();
                (void)snprintf(reterr, len, "GET %s: writing: %s", q->url, errno_to_string(-r));
                return r;
        }
        return 0;
}

static int transfer_once(const struct fetch_config *c, const struct request *q, long *ret_code,
                         CURLcode *ret_cc, char *reterr, size_t len)
{
        CLEANUP(transfer_opts_release) struct transfer_opts t = { .curl = curl_easy_init() };
        CLEANUP(sink_release)
        struct sink s = { .curl = t.curl,
                          .file = q->file,
                          .body = q->body,
                          .err = BUF_INIT(ERROR_BODY_MAX),
                          .max = q->max };
        CURLcode cc;
        long code = 0;
        int r;

        if (!t.curl)
                return -ENOMEM;
        setopt_common(&t, c, q, &s);
        r = q->s3 ? setopt_s3(&t, c) : setopt_plain(&t, q);
        if (r < 0)
                return r;
        cc = curl_easy_perform(t.curl);
        curl_easy_getinfo(t.curl, CURLINFO_RESPONSE_CODE, &code);
        *ret_code = code;
        *ret_cc = cc;
        return transfer_outcome(q, &s, cc, code, t.curlerr, reterr, len);
}

static int transfer(const struct fetch_config *c, const struct request *q, char *reterr, size_t len)
{
        int r = -EIO;

        for (unsigned attempt = 1; attempt <= MAX(c->attempts, 1U); attempt++) {
                long code = 0;
                CURLcode cc = CURLE_OK;

                if (q->file) {
                        rewind(q->file);
                        if (ftruncate(fileno(q->file), 0) < 0)
                                return negative_errno();
                }
                if (q->body)
                        buf_reset(q->body);
                r = transfer_once(c, q, &code, &cc, reterr, len);
                if (r == 0 || r == -ENOMEM || r == -EFBIG || !retryable(cc, code))
                        return r;
                if (attempt < c->attempts) {
                        usec_t d = backoff_delay(attempt, c->retry_base, 30 * USEC_PER_SEC,
                                                 fetch_jitter01());
                        log_warn("%s (attempt %u of %u, retrying in %llu ms)", reterr, attempt,
                                 c->attempts, (unsigned long long)(d / USEC_PER_MSEC));
                        struct timespec ts = usec_to_timespec(d);
                        nanosleep(&ts, NULL);
                }
        }
        return r;
}

static int mkdir_parents(const char *dir, const char *rel)
{
        AUTOFREE char *p = NULL;

        if (asprintf(&p, "%s/%s", dir, rel) < 0)
                return -ENOMEM;
        for (char *s = p + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
                *s = 0;
                if (mkdir(p, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
                *s = '/';
        }
        return 0;
}

/* How an object is fetched: plain (http), S3-signed, or GCS (alt=media, bearer token). */
struct object_store {
        const char *scheme; /* "s3", "gs": for messages */
        bool s3;
        const char *bearer; /* borrowed, may be NULL */
};

static int get_to_file(const struct fetch_config *c, const char *url, const struct object_store *os,
                       const char *path, uint64_t max, char *reterr, size_t len)
{
        FILE *f = fopen(path, "wxe");
        struct request q = { .url = url, .s3 = os->s3, .bearer = os->bearer, .max = max };
        int r;

        if (!f) {
                r = negative_errno();
                snprintf(reterr, len, "cannot create %s: %s", path, errno_to_string(-r));
                return r;
        }
        q.file = f;
        r = transfer(c, &q, reterr, len);
        if (fclose(f) != 0 && r == 0)
                r = negative_errno();
        return r;
}

static int s3_base(const struct fetch_config *c, const char *bucket, struct buf *b)
{
        const char *sep = strstr(c->s3_endpoint, "://");

        if (c->s3_virtual_host && sep)
                return buf_printf(b, "%.*s%s.%s/", (int)(sep + 3 - c->s3_endpoint), c->s3_endpoint,
                                  bucket, sep + 3);
        return buf_printf(b, "%s/%s/", c->s3_endpoint, bucket);
}

/* GCS JSON API: <endpoint>/storage/v1/b/<bucket>/o (names fully escaped, '/' included). */
static int gcs_base(const struct fetch_config *c, const char *bucket, struct buf *b)
{
        int r = buf_printf(b, "%s/storage/v1/b/", c->gcs_endpoint);

        if (r >= 0)
                r = s3_escape(b, bucket, false);
        return r >= 0 ? buf_puts(b, "/o") : r;
}

static int object_url(const struct fetch_config *c, const struct object_store *os,
                      const char *bucket, const char *key, struct buf *b)
{
        int r;

        if (os->s3) {
                r = s3_base(c, bucket, b);
                return r >= 0 ? s3_escape(b, key, true) : r;
        }
        r = gcs_base(c, bucket, b);
        if (r >= 0)
                r = buf_putc(b, '/');
        if (r >= 0)
                r = s3_escape(b, key, false);
        return r >= 0 ? buf_puts(b, "?alt=media") : r;
}

static uint64_t dir_budget(uint64_t max, uint64_t used)
{
        return used >= max ? 0 : max - used;
}

/* Not a folder: the one object @u->key, into @dir under its base name. */
static int fetch_single_object(const struct fetch_config *c, const struct object_store *os,
                               const struct storage_uri *u, const char *dir, char *reterr,
                               size_t len)
{
        CLEANUP(buf_release) struct buf url = BUF_INIT(8192);
        AUTOFREE char *name = NULL, *path = NULL;
        const char *slash = strrchr(u->key, '/');
        int r;

        name = strdup(slash ? slash + 1 : u->key);
        if (!name || asprintf(&path, "%s/%s", dir, name) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        if (!model_name_is_safe(name)) {
                (void)snprintf(reterr, len, "%s object name '%s' is not a file name", os->scheme,
                               name);
                return -EPERM;
        }
        r = object_url(c, os, u->bucket, u->key, &url);
        if (r >= 0)
                r = get_to_file(c, buf_str(&url), os, path, c->size_max, reterr, len);
        if (r == -ENOENT)
                (void)snprintf(reterr, len, "%s://%s/%s: no such object or prefix", os->scheme,
                               u->bucket, u->key);
        return r;
}

/* One listed object, @rel below the prefix, into @dir/@rel; *used counts the bytes on disk. */
static int fetch_listed_key(const struct fetch_config *c, const struct object_store *os,
                            const struct storage_uri *u, const char *key, const char *rel,
                            const char *dir, uint64_t *used, char *reterr, size_t len)
{
        CLEANUP(buf_release) struct buf url = BUF_INIT(8192);
        AUTOFREE char *path = NULL;
        struct stat st;
        int r;

        if (!relative_path_is_safe(rel)) {
                (void)snprintf(reterr, len, "%s key '%s' leaves the model directory", os->scheme,
                               key);
                return -EPERM;
        }
        r = mkdir_parents(dir, rel);
        if (r >= 0 && asprintf(&path, "%s/%s", dir, rel) < 0) {
                path = NULL;
                r = -ENOMEM;
        }
        if (r >= 0)
                r = object_url(c, os, u->bucket, key, &url);
        if (r >= 0)
                r = get_to_file(c, buf_str(&url), os, path, dir_budget(c->size_max, *used), reterr,
                                len);
        if (r >= 0 && stat(path, &st) == 0)
                *used += (uint64_t)st.st_size;
        return r;
}

/* Downloads what a prefix listing found (@list, consumed), or the single object @u->key when
 * nothing is under "<key>/". */
static int fetch_listed(const struct fetch_config *c, const struct object_store *os,
                        const struct storage_uri *u, struct s3_list *list, const char *prefix,
                        const char *dir, char *reterr, size_t len)
{
        size_t plen = strlen(prefix);
        uint64_t used = 0;
        int r = 0;

        if (list->n_keys == 0) {
                s3_list_release(list);
                if (*u->key)
                        return fetch_single_object(c, os, u, dir, reterr, len);
                (void)snprintf(reterr, len, "%s://%s/: the bucket is empty", os->scheme, u->bucket);
                return -ENOENT;
        }
        for (size_t i = 0; i < list->n_keys && r >= 0; i++) {
                const char *key = list->keys[i], *rel = key + plen;

                if (strncmp(key, prefix, plen) != 0 || *rel == 0 || key[strlen(key) - 1] == '/')
                        continue; /* folder markers, foreign keys */
                r = fetch_listed_key(c, os, u, key, rel, dir, &used, reterr, len);
        }
        s3_list_release(list);
        return r;
}

/* One page of the listing of @prefix: S3 ListObjectsV2 (query parameters in the sorted order
 * SigV4's canonical request needs) or the GCS objects list. */
static int list_page_url(const struct fetch_config *c, const struct object_store *os,
                         const char *bucket, const char *prefix, const char *token, struct buf *url)
{
        int r;

        if (os->s3) {
                r = s3_base(c, bucket, url);
                if (r >= 0 && token) {
                        r = buf_puts(url, "?continuation-token=");
                        if (r >= 0)
                                r = s3_escape(url, token, false);
                        if (r >= 0)
                                r = buf_puts(url, "&list-type=2&prefix=");
                } else if (r >= 0) {
                        r = buf_puts(url, "?list-type=2&prefix=");
                }
                return r >= 0 ? s3_escape(url, prefix, false) : r;
        }
        r = gcs_base(c, bucket, url);
        if (r >= 0)
                r = buf_puts(url, "?fields=items(name),nextPageToken&prefix=");
        if (r >= 0)
                r = s3_escape(url, prefix, false);
        if (r >= 0 && token) {
                r = buf_puts(url, "&pageToken=");
                if (r >= 0)
                        r = s3_escape(url, token, false);
        }
        return r;
}

/* s3://bucket/prefix and gs://bucket/prefix: the listing (paged), then fetch_listed(). */
static int fetch_bucket(const struct fetch_config *c, const struct object_store *os,
                        const struct storage_uri *u, const char *dir, char *reterr, size_t len)
{
        struct s3_list list = { 0 };
        AUTOFREE char *prefix = NULL;
        int r;

        if (asprintf(&prefix, "%s%s", u->key, *u->key ? "/" : "") < 0)
                return -ENOMEM;
        do {
                struct buf url = BUF_INIT(8192), page = BUF_INIT(LIST_PAGE_MAX);

                r = list_page_url(c, os, u->bucket, prefix, list.next_token, &url);
                if (r >= 0) {
                        struct request q = { .url = buf_str(&url),
                                             .s3 = os->s3,
                                             .bearer = os->bearer,
                                             .body = &page,
                                             .max = LIST_PAGE_MAX - 1 };
                        r = transfer(c, &q, reterr, len);
                }
                if (r >= 0) {
                        r = os->s3 ? s3_list_parse(buf_str(&page), page.len, &list)
                                   : gcs_list_parse(buf_str(&page), page.len, &list);
                        if (r < 0)
                                snprintf(reterr, len, "listing %s://%s/%s: %s", os->scheme,
                                         u->bucket, prefix,
                                         r == -E2BIG ? "too many objects"
                                                     : "malformed listing answer");
                }
                buf_release(&url);
                buf_release(&page);
                if (r < 0) {
                        s3_list_release(&list);
                        return r;
                }
        } while (list.truncated);
        return fetch_listed(c, os, u, &list, prefix, dir, reterr, len);
}

static int fetch_http(const struct fetch_config *c, const struct storage_uri *u, const char *dir,
                      char *reterr, size_t len)
{
        enum archive_kind ak = archive_kind_from_url(u->url);
        AUTOFREE char *name = url_file_name(u->url), *path = NULL, *tmp = NULL;
        char why[512] = "";
        int r;

        if (!name || asprintf(&path, "%s/%s", dir, name) < 0 ||
            asprintf(&tmp, "%s/.download", dir) < 0)
                return -ENOMEM;
        static const struct object_store os = { .scheme = "http" };
        r = get_to_file(c, u->url, &os, ak == ARCHIVE_NONE ? path : tmp, c->size_max, reterr, len);
        if (r < 0 || ak == ARCHIVE_NONE)
                return r;
        r = archive_extract_safe(tmp, dir, c->size_max, why, sizeof(why));
        (void)unlink(tmp);
        if (r < 0)
                snprintf(reterr, len, "%s: %s", u->url, why);
        return r;
}

static int copy_file(const char *from, const char *to, uint64_t *used, uint64_t max)
{
        AUTOCLOSE int in = open(from, O_RDONLY | O_CLOEXEC);
        AUTOCLOSE int out = -EBADF;
        char buf[65536];
        ssize_t n;

        if (in < 0)
                return negative_errno();
        out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (out < 0)
                return negative_errno();
        while ((n = read(in, buf, sizeof(buf))) > 0) {
                *used += (uint64_t)n;
                if (*used > max)
                        return -EFBIG;
                for (ssize_t off = 0; off < n;) {
                        ssize_t w = write(out, buf + off, (size_t)(n - off));
                        if (w < 0)
                                return negative_errno();
                        off += w;
                }
        }
        return n < 0 ? negative_errno() : 0;
}

static int copy_tree(const char *from, const char *to, uint64_t *used, uint64_t max, unsigned depth)
{
        DIR *d;
        struct dirent *de;
        int r = 0;

        if (depth > 64)
                return -ELOOP;
        d = opendir(from);
        if (!d)
                return negative_errno();
        /* readdir() is thread-safe on a stream of one thread (glibc; readdir_r is deprecated) */
        while (r >= 0 && (de = readdir(d))) { /* NOLINT(concurrency-mt-unsafe) */
                AUTOFREE char *src = NULL, *dst = NULL;
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (asprintf(&src, "%s/%s", from, de->d_name) < 0 ||
                    asprintf(&dst, "%s/%s", to, de->d_name) < 0) {
                        r = -ENOMEM;
                        break;
                }
                if (stat(src, &st) < 0)
                        continue; /* a dangling link of the volume is not part of the model */
                if (S_ISDIR(st.st_mode)) {
                        if (mkdir(dst, 0755) < 0)
                                r = negative_errno();
                        else
                                r = copy_tree(src, dst, used, max, depth + 1);
                } else if (S_ISREG(st.st_mode)) {
                        r = copy_file(src, dst, used, max);
                }
        }
        closedir(d);
        return r;
}

static int fetch_local(const struct fetch_config *c, const struct storage_uri *u, const char *dir,
                       char *reterr, size_t len)
{
        AUTOFREE char *src = NULL;
        uint64_t used = 0;
        struct stat st;
        int r;

        if (u->path)
                src = strdup(u->path);
        else if (asprintf(&src, "%s/%s%s%s", c->pvc_root, u->bucket, *u->key ? "/" : "", u->key) <
                 0)
                src = NULL;
        if (!src)
                return -ENOMEM;
        if (stat(src, &st) < 0) {
                r = negative_errno();
                snprintf(reterr, len, "%s: %s", src, errno_to_string(-r));
                return r;
        }
        if (S_ISDIR(st.st_mode)) {
                r = copy_tree(src, dir, &used, c->size_max, 0);
        } else {
                const char *slash = strrchr(src, '/');
                AUTOFREE char *dst = NULL;
                if (asprintf(&dst, "%s/%s", dir, slash ? slash + 1 : src) < 0)
                        return -ENOMEM;
                r = copy_file(src, dst, &used, c->size_max);
        }
        if (r < 0)
                snprintf(reterr, len, "copying %s: %s", src,
                         r == -EFBIG ? "larger than the size limit" : errno_to_string(-r));
        return r;
}

/* model-registry://: the registered version's artifact URI, then that download. */
static int fetch_registered(const struct fetch_config *c, const char *uri, const char *dir,
                            char *reterr, size_t len)
{
        AUTOFREE char *resolved = NULL;
        char inner[1024];
        int r;

        r = mr_resolve(&c->registry, uri, &resolved, reterr, len);
        if (r < 0)
                return r;
        log_info("agent: %s is %s", uri, resolved);
        r = fetch_model(c, resolved, dir, inner, sizeof(inner));
        if (r < 0)
                snprintf(reterr, len, "%.300s (the model artifact of %.300s): %s", resolved, uri,
                         inner);
        return r;
}

int fetch_model(const struct fetch_config *c, const char *uri, const char *dir, char *reterr,
                size_t len)
{
        struct storage_uri u;
        int r;

        r = storage_uri_parse(uri, &u, reterr, len);
        if (r < 0)
                return r;
        switch (u.kind) {
        case STORAGE_S3: {
                static const struct object_store s3 = { .scheme = "s3", .s3 = true };
                r = fetch_bucket(c, &s3, &u, dir, reterr, len);
                break;
        }
        case STORAGE_HTTP:
                r = fetch_http(c, &u, dir, reterr, len);
                break;
        case STORAGE_LOCAL:
                r = fetch_local(c, &u, dir, reterr, len);
                break;
        case STORAGE_GCS: {
                /* GCS JSON API; STORAGE_EMULATOR_HOST honoured (fetch_config_from_env) */
                const struct object_store gs = { .scheme = "gs", .bearer = c->gcs_token };
                r = fetch_bucket(c, &gs, &u, dir, reterr, len);
                break;
        }
        case STORAGE_MODEL_REGISTRY:
                r = fetch_registered(c, uri, dir, reterr, len);
                break;
        default:
                snprintf(reterr, len, "%s: this storage scheme is not supported", uri);
                r = -EPROTONOSUPPORT;
                break;
        }
        storage_uri_release(&u);
        return r;
}
