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
#include <ftw.h>
#include <gnutls/crypto.h>
#include <pthread.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "agent/azure.h"
#include "agent/cloudevent.h"
#include "agent/extract.h"
#include "agent/plan.h"
#include "agent/gcs-json.h"
#include "agent/hf-json.h"
#include "agent/integrity.h"
#include "agent/jwt-sign.h"
#include "agent/oauth.h"
#include "agent/s3-xml.h"
#include "agent/space.h"
#include "agent/uri.h"
#include "util/buf.h"
#include "util/file-util.h"
#include "util/log.h"
#include "util/parse-util.h"

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

/* A whole number in [1, max] from $name, else @def. */
static uint32_t env_u32(const char *name, uint32_t def, uint32_t max)
{
        const char *v = env_get(name);
        uint32_t n;

        if (!v || !*v || safe_atou32(v, &n) < 0 || n == 0 || n > max)
                return def;
        return n;
}

static void strip_slashes(char *url)
{
        if (url)
                for (size_t n = strlen(url); n > 0 && url[n - 1] == '/'; n--)
                        url[n - 1] = 0;
}

static void token_cache_free(struct token_cache *tc)
{
        if (!tc)
                return;
        pthread_mutex_destroy(&tc->lock);
        free(tc->token);
        free(tc);
}

static struct token_cache *token_cache_new(void)
{
        struct token_cache *tc = calloc(1, sizeof(*tc));

        if (tc && pthread_mutex_init(&tc->lock, NULL) != 0) {
                free(tc);
                return NULL;
        }
        return tc;
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
        free(c->gcs_credentials);
        token_cache_free(c->gcs_cache);
        token_cache_free(c->gcs_write_cache);
        token_cache_free(c->azure_cache);
        free(c->azure_client_id);
        free(c->azure_client_secret);
        free(c->azure_tenant_id);
        free(c->azure_authority);
        free(c->azure_account);
        free(c->azure_key);
        free(c->azure_endpoint);
        free(c->hf_endpoint);
        free(c->hf_token);
        mr_resolve_config_release(&c->registry);
        *c = (struct fetch_config){ 0 };
}

/* $AWS_ENDPOINT_URL or $S3_ENDPOINT (a scheme added from $S3_USE_HTTPS), else AWS's regional
 * endpoint. NULL on OOM. */
/* @ep (host[:port] gets https:// or, !@https, http://), else AWS's endpoint for @region. */
static char *s3_endpoint_url(const char *ep, bool https, const char *region)
{
        char *url = NULL;

        if (ep && *ep) {
                if (strstr(ep, "://"))
                        url = strdup(ep);
                else if (asprintf(&url, "%s://%s", https ? "https" : "http", ep) < 0)
                        url = NULL;
        } else if (region && asprintf(&url, "https://s3.%s.amazonaws.com", region) < 0) {
                url = NULL;
        }
        strip_slashes(url);
        return url;
}

static char *s3_endpoint_from_env(const char *region)
{
        const char *ep = env_get("AWS_ENDPOINT_URL");

        if (!ep || !*ep)
                ep = env_get("S3_ENDPOINT");
        return s3_endpoint_url(ep, env_bool("S3_USE_HTTPS", true), region);
}

static int replace_str(char **field, const char *value)
{
        char *s = NULL;

        if (value && !(s = strdup(value)))
                return -ENOMEM;
        if (*field)
                explicit_bzero(*field, strlen(*field));
        free(*field);
        *field = s;
        return 0;
}

int fetch_config_set_s3(struct fetch_config *c, const char *endpoint, const char *region,
                        const char *access_key, const char *secret_key)
{
        char *url;

        if (region && *region && replace_str(&c->s3_region, region) < 0)
                return -ENOMEM;
        url = s3_endpoint_url(endpoint, true, c->s3_region);
        if (!url)
                return -ENOMEM;
        free(c->s3_endpoint);
        c->s3_endpoint = url;
        if (replace_str(&c->access_key, access_key) < 0 ||
            replace_str(&c->secret_key, secret_key) < 0 || replace_str(&c->session_token, NULL) < 0)
                return -ENOMEM;
        return 0;
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

/* Azure: AZURE_STORAGE_CONNECTION_STRING (AccountName, AccountKey, BlobEndpoint), then
 * AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_ACCESS_KEY (KServe's name) or AZURE_STORAGE_KEY (the az
 * CLI's), which win over the connection string's. -EINVAL: a connection string that is not one. */
static int azure_from_env(struct fetch_config *c)
{
        const char *cs = env_get("AZURE_STORAGE_CONNECTION_STRING");
        struct azure_conn conn = { 0 };
        int r;

        if (cs && *cs) {
                r = azure_connection_string_parse(cs, &conn);
                if (r < 0)
                        return r;
        }
        c->azure_account = env_dup("AZURE_STORAGE_ACCOUNT");
        c->azure_key = env_dup("AZURE_STORAGE_ACCESS_KEY");
        if (!c->azure_key)
                c->azure_key = env_dup("AZURE_STORAGE_KEY");
        if (!c->azure_account)
                c->azure_account = TAKE_PTR(conn.account);
        if (!c->azure_key)
                c->azure_key = TAKE_PTR(conn.key);
        c->azure_endpoint = TAKE_PTR(conn.endpoint);
        azure_conn_release(&conn);
        /* KServe's older names (AZ_*) first, as it copies them over Azure's */
        c->azure_client_id = env_dup("AZ_CLIENT_ID");
        if (!c->azure_client_id)
                c->azure_client_id = env_dup("AZURE_CLIENT_ID");
        c->azure_client_secret = env_dup("AZ_CLIENT_SECRET");
        if (!c->azure_client_secret)
                c->azure_client_secret = env_dup("AZURE_CLIENT_SECRET");
        c->azure_tenant_id = env_dup("AZ_TENANT_ID");
        if (!c->azure_tenant_id)
                c->azure_tenant_id = env_dup("AZURE_TENANT_ID");
        return 0;
}

/* The AWS key pair (+ session token) from the environment or the files of $AWS_CREDENTIALS_DIR;
 * none at all when either half is missing or anonymous access is asked for: AWS_ANONYMOUS_CREDENTIAL,
 * or awsAnonymousCredential, the name KServe's credential builder gives the variable (from its
 * s3-useanoncredential annotation) and its agent and storage initializer read. */
static void s3_credentials_from_env(struct fetch_config *c)
{
        const char *creds = env_get("AWS_CREDENTIALS_DIR");

        if (env_bool("AWS_ANONYMOUS_CREDENTIAL", false) ||
            env_bool("awsAnonymousCredential", false))
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
        int r;

        *c = (struct fetch_config){
                .connect_timeout_sec = 10,
                .stall_timeout_sec = env_u32("MODELPLANE_STALL_TIMEOUT", 30, 3600),
                .size_max = FETCH_SIZE_MAX_DEFAULT,
                .entries_max = FETCH_ENTRIES_MAX_DEFAULT,
                .attempts = env_u32("MODELPLANE_FETCH_ATTEMPTS", 4, 100),
                .retry_base = 500 * USEC_PER_MSEC,
                .s3_verify = env_bool("S3_VERIFY_SSL", true),
                .s3_etag_md5 = env_bool("MODELPLANE_S3_ETAG_MD5", true),
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
        c->gcs_credentials = env_dup("GOOGLE_APPLICATION_CREDENTIALS");
        c->gcs_cache = token_cache_new();
        c->gcs_write_cache = token_cache_new();
        c->azure_cache = token_cache_new();
        c->ca_bundle = env_dup("AWS_CA_BUNDLE");
        s3_credentials_from_env(c);
        c->hf_endpoint = env_dup("HF_ENDPOINT");
        if (!c->hf_endpoint)
                c->hf_endpoint = strdup("https://huggingface.co");
        strip_slashes(c->hf_endpoint);
        c->hf_token = env_dup("HF_TOKEN");
        if (!c->hf_token)
                c->hf_token = env_dup("HUGGING_FACE_HUB_TOKEN");
        c->azure_authority = env_dup("AZURE_AUTHORITY_HOST");
        if (!c->azure_authority)
                c->azure_authority = strdup("https://login.microsoftonline.com");
        strip_slashes(c->azure_authority);
        r = azure_from_env(c);
        if (r == -EINVAL)
                log_warn("agent: AZURE_STORAGE_CONNECTION_STRING is not a connection string: "
                         "ignored");
        c->pvc_root = env_dup("MODELPLANE_PVC_ROOT");
        if (!c->pvc_root)
                c->pvc_root = strdup("/mnt/pvc");
        if (!c->s3_region || !c->s3_endpoint || !c->pvc_root || !c->gcs_endpoint ||
            !c->hf_endpoint || !c->gcs_cache || !c->gcs_write_cache || !c->azure_cache ||
            !c->azure_authority || r == -ENOMEM || mr_resolve_config_from_env(&c->registry) < 0) {
                fetch_config_release(c);
                return -ENOMEM;
        }
        return 0;
}

/* The MD5 storage states for the body: from a listing, or from the response's headers. */
struct expect_md5 {
        bool set;
        uint8_t md5[MD5_SIZE];
        const char *source; /* "ETag", "Content-MD5", "x-goog-hash", "md5Hash" */
};

/* What the final response's headers said (reset at each status line: redirects). */
struct response_heads {
        struct expect_md5 etag, content_md5, goog;
        bool sse_not_md5; /* SSE-KMS or SSE-C: the ETag is not the body's MD5 */
};

/* One transfer's sink: a file or an archive stream (a socket), or a capped buffer; error bodies
 * always go to err. */
struct sink {
        CURL *curl;
        int fd; /* the file or stream socket, or -EBADF: @body */
        bool stream;
        struct buf *body;
        struct buf err;
        uint64_t n, max;
        bool too_big;
        const char *space_dir; /* the file system whose free space counts, or NULL */
        uint64_t expected;     /* Content-Length, 0 if unknown */
        uint64_t next_space_check;
        int fail; /* the sink's own error (write, space), negative errno */
        char why[512];
        bool s3;                         /* an S3 object: its ETag may be an MD5 */
        const struct expect_md5 *listed; /* from the listing, may be NULL */
        struct response_heads heads;
        bool started;
        bool answer;            /* an upload's answer: no sum to check */
        gnutls_hash_hd_t md5;   /* while hashing */
        struct expect_md5 want; /* what the body is checked against */
};

static void sink_release(struct sink *s)
{
        buf_release(&s->err);
        if (s->md5)
                gnutls_hash_deinit(s->md5, NULL);
        s->md5 = NULL;
}

/* "name: value" headers of interest. */
static size_t sink_header(char *p, size_t size, size_t nmemb, void *userdata)
{
        struct sink *s = userdata;
        size_t len = size * nmemb, nl;
        const char *v;

        if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
                s->heads = (struct response_heads){ 0 };
                return len;
        }
        v = memchr(p, ':', len);
        if (!v)
                return len;
        nl = (size_t)(v - p);
        v++;
#define HEADER_IS(name) (nl == strlen(name) && strncasecmp(p, name, nl) == 0)
        if (HEADER_IS("etag")) {
                s->heads.etag.set = md5_from_etag(v, len - nl - 1, s->heads.etag.md5);
                s->heads.etag.source = "ETag";
        } else if (HEADER_IS("content-md5")) {
                s->heads.content_md5.set = md5_from_base64(v, len - nl - 1,
                                                           s->heads.content_md5.md5);
                s->heads.content_md5.source = "Content-MD5";
        } else if (HEADER_IS("x-goog-hash")) {
                /* sent once per hash kind ("crc32c=...", "md5=...") or as one list */
                if (md5_from_goog_hash(v, len - nl - 1, s->heads.goog.md5)) {
                        s->heads.goog.set = true;
                        s->heads.goog.source = "x-goog-hash";
                }
        } else if (HEADER_IS("x-amz-server-side-encryption")) {
                s->heads.sse_not_md5 |= strstr(v, "kms") != NULL;
        } else if (HEADER_IS("x-amz-server-side-encryption-customer-algorithm")) {
                s->heads.sse_not_md5 = true;
        }
#undef HEADER_IS
        return len;
}

/* The sum to check, chosen when the body starts: the listing's, Content-MD5, x-goog-hash, or an
 * S3 single-part object's ETag. */
static int sink_start(struct sink *s)
{
        curl_off_t cl = -1;

        s->started = true;
        if (s->answer)
                ; /* the stored object's sums, not the answer's */
        else if (s->listed && s->listed->set)
                s->want = *s->listed;
        else if (s->heads.content_md5.set)
                s->want = s->heads.content_md5;
        else if (s->heads.goog.set)
                s->want = s->heads.goog;
        else if (s->s3 && s->heads.etag.set && !s->heads.sse_not_md5)
                s->want = s->heads.etag;
        if (s->want.set && gnutls_hash_init(&s->md5, GNUTLS_DIG_MD5) < 0) {
                s->md5 = NULL;
                s->want.set = false; /* MD5 unavailable (FIPS mode): not checked */
        }
        if (curl_easy_getinfo(s->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK &&
            cl > 0)
                s->expected = (uint64_t)cl;
        /* an archive's content is not its length: extraction checks each entry */
        if (s->space_dir && !s->stream && s->expected > 0)
                return space_check(s->space_dir, s->expected, s->why, sizeof(s->why));
        return 0;
}

#define SPACE_CHECK_EVERY ((uint64_t)16 << 20)

/* Writes all of @p to the sink's descriptor; the space left is checked as bytes arrive. */
static int sink_put(struct sink *s, const char *p, size_t len)
{
        if (s->space_dir && !s->stream && s->expected > 0 && s->n >= s->next_space_check) {
                uint64_t left = s->expected > s->n ? s->expected - s->n : 0;
                int r = space_check(s->space_dir, left, s->why, sizeof(s->why));
                if (r < 0)
                        return space_exhausted(s->space_dir, s->n, s->expected, s->why,
                                               sizeof(s->why));
                s->next_space_check = s->n + SPACE_CHECK_EVERY;
        }
        while (len > 0) {
                ssize_t w = s->stream ? send(s->fd, p, len, MSG_NOSIGNAL) : write(s->fd, p, len);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0) {
                        int r = negative_errno();
                        if (errno_is_space(r))
                                return space_exhausted(s->space_dir ? s->space_dir : ".", s->n,
                                                       s->expected, s->why, sizeof(s->why));
                        (void)snprintf(s->why, sizeof(s->why), "writing: %s", errno_to_string(-r));
                        return r;
                }
                p += w;
                len -= (size_t)w;
        }
        return 0;
}

static size_t sink_write(char *p, size_t size, size_t nmemb, void *userdata)
{
        struct sink *s = userdata;
        size_t len = size * nmemb;
        long code = 0;
        int r;

        curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code);
        if (code >= 300) {
                /* a long error body is truncated, never an abort */
                size_t room = s->err.max - 1 - s->err.len;
                if (buf_append(&s->err, p, MIN(len, room)) < 0)
                        return 0;
                return len;
        }
        if (!s->started) {
                r = sink_start(s);
                if (r < 0) {
                        s->fail = r;
                        return 0;
                }
        }
        if (s->n + len > s->max) {
                s->too_big = true;
                return 0;
        }
        if (s->md5)
                (void)gnutls_hash(s->md5, p, len);
        if (s->fd < 0) {
                s->n += len;
                return buf_append(s->body, p, len) < 0 ? 0 : len;
        }
        r = sink_put(s, p, len);
        if (r < 0) {
                s->fail = r;
                return 0;
        }
        s->n += len;
        return len;
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

struct stream_job;

/* A body sent (the request logger's records): PUT (S3, Azure) or POST (GCS media upload). */
struct upload {
        const char *method; /* "PUT" or "POST" */
        const void *body;   /* borrowed */
        size_t len;
        const char *content_type; /* borrowed */
};

/* How an Azure request is authorized: a Shared Key, a bearer token, or neither (anonymous). */
struct azure_auth {
        const char *account; /* the canonicalized resource's account */
        const char *key;     /* base64, may be NULL */
        const char *bearer;  /* may be NULL */
};

struct request {
        const char *url;                 /* borrowed */
        bool s3;                         /* sign with the S3 configuration */
        const char *bearer;              /* borrowed; Authorization: Bearer, may be NULL */
        const char *const *headers;      /* borrowed; more "Name: value" lines, may be NULL */
        const struct azure_auth *azure;  /* borrowed; x-ms-* headers, may be NULL */
        const char *post;                /* borrowed; a form body POSTed, may be NULL (GET) */
        const struct upload *upload;     /* borrowed; a body PUT or POSTed, may be NULL */
        int fd;                          /* sink: a file (truncated per attempt), or -EBADF ... */
        struct buf *body;                /* ... a buffer (reset per attempt) ... */
        struct stream_job *stream;       /* ... or an archive extracted as it arrives */
        bool fd_is_stream;               /* fd: the extractor's socket (one attempt of @stream) */
        const char *space_dir;           /* free space checked here (downloads), or NULL */
        const struct expect_md5 *listed; /* the listing's MD5, may be NULL */
        uint64_t max;
};

static const char *method_of(const struct request *q)
{
        return q->upload ? q->upload->method : q->post ? "POST" : "GET";
}

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
        bool kept; /* the thread's kept handle: reset, not cleaned up, after the transfer */
        struct curl_slist *hdrs;
        char *sigv4, *userpwd, *tok, *auth, *date, *ctype, *sha;
        char curlerr[CURL_ERROR_SIZE];
};

/* The calling thread's kept handle (fetch_thread_keep()): its connection cache, DNS cache and
 * TLS sessions carry over between transfers. One per thread: libcurl does not support one
 * connection cache used by concurrent threads (CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT). */
static _Thread_local bool thread_keeps;
static _Thread_local CURL *thread_curl;

void fetch_thread_keep(void)
{
        thread_keeps = true;
}

void fetch_thread_release(void)
{
        curl_easy_cleanup(thread_curl);
        thread_curl = NULL;
        thread_keeps = false;
}

/* The handle of one transfer: the thread's kept one, reset to no options, or a new one. */
static CURL *transfer_handle(bool *ret_kept)
{
        *ret_kept = false;
        if (!thread_keeps)
                return curl_easy_init();
        if (!thread_curl)
                thread_curl = curl_easy_init();
        else
                curl_easy_reset(thread_curl);
        *ret_kept = thread_curl != NULL;
        return thread_curl;
}

static void transfer_opts_release(struct transfer_opts *t)
{
        if (!t->kept)
                curl_easy_cleanup(t->curl);
        curl_slist_free_all(t->hdrs);
        free(t->sigv4);
        free(t->userpwd);
        free(t->tok);
        free(t->auth);
        free(t->date);
        free(t->ctype);
        free(t->sha);
}

/* libcurl's progress callback: a non-zero answer aborts the transfer (CURLE_ABORTED_BY_CALLBACK). */
static int cancel_check(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                        curl_off_t ulnow)
{
        (void)dltotal;
        (void)dlnow;
        (void)ultotal;
        (void)ulnow;
        return atomic_load((const atomic_bool *)userdata) ? 1 : 0;
}

static void setopt_common(struct transfer_opts *t, const struct fetch_config *c,
                          const struct request *q, struct sink *s)
{
        CURL *curl = t->curl;

        if (c->cancel) { /* called about once a second, and as bytes move */
                curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, cancel_check);
                curl_easy_setopt(curl, CURLOPT_XFERINFODATA, (void *)c->cancel);
                curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
        }

        curl_easy_setopt(curl, CURLOPT_URL, q->url);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, c->connect_timeout_sec);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, c->stall_timeout_sec);
        curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)q->max);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, sink_write);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, s);
        curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, sink_header);
        curl_easy_setopt(curl, CURLOPT_HEADERDATA, s);
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, t->curlerr);
        curl_easy_setopt(curl, CURLOPT_USERAGENT, "modelplane-agent/" MODELPLANE_VERSION);
        if (q->post) {
                curl_easy_setopt(curl, CURLOPT_POSTFIELDS, q->post);
                curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)strlen(q->post));
        }
}

/* An upload's body, verb and Content-Type (libcurl's form type otherwise). */
static int setopt_upload(struct transfer_opts *t, const struct upload *up)
{
        struct curl_slist *l;

        curl_easy_setopt(t->curl, CURLOPT_POSTFIELDS, (const char *)up->body);
        curl_easy_setopt(t->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)up->len);
        if (!streq(up->method, "POST"))
                curl_easy_setopt(t->curl, CURLOPT_CUSTOMREQUEST, up->method);
        if (asprintf(&t->ctype, "Content-Type: %s", up->content_type) < 0) {
                t->ctype = NULL;
                return -ENOMEM;
        }
        l = curl_slist_append(t->hdrs, t->ctype);
        if (!l)
                return -ENOMEM;
        t->hdrs = l;
        return 0;
}

/* http(s):// and gs://: redirects followed, an optional bearer token and more headers (libcurl
 * does not send an Authorization or Cookie header of ours on to another host). */
static int setopt_plain(struct transfer_opts *t, const struct request *q)
{
        curl_easy_setopt(t->curl, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(t->curl, CURLOPT_MAXREDIRS, 5L);
        curl_easy_setopt(t->curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        for (size_t i = 0; q->headers && q->headers[i]; i++) {
                struct curl_slist *l = curl_slist_append(t->hdrs, q->headers[i]);

                if (!l)
                        return -ENOMEM;
                t->hdrs = l;
        }
        if (q->bearer) {
                struct curl_slist *l;

                if (asprintf(&t->auth, "Authorization: Bearer %s", q->bearer) < 0) {
                        t->auth = NULL;
                        return -ENOMEM;
                }
                l = curl_slist_append(t->hdrs, t->auth);
                if (!l)
                        return -ENOMEM;
                t->hdrs = l;
        }
        if (t->hdrs)
                curl_easy_setopt(t->curl, CURLOPT_HTTPHEADER, t->hdrs);
        return 0;
}

/* The RFC 1123 date of now, as x-ms-date wants it (no locale involved). */
static void http_date(char buf[64])
{
        static const char *const days[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
        static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
        time_t now = time(NULL);
        struct tm tm;

        if (!gmtime_r(&now, &tm))
                tm = (struct tm){ .tm_mday = 1, .tm_year = 70 };
        (void)snprintf(buf, 64, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday % 7],
                       tm.tm_mday, months[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                       tm.tm_sec);
}

/* Azure Blob: x-ms-date and x-ms-version, and a Shared Key signature of this very request or a
 * bearer token; no redirects (a signed request is for its host only). */
static int setopt_azure(struct transfer_opts *t, const struct request *q)
{
        const struct azure_auth *a = q->azure;
        AUTOFREE char *sts = NULL, *sig = NULL;
        char date[64];
        int r;

        http_date(date);
        if (asprintf(&t->date, "x-ms-date: %s", date) < 0) {
                t->date = NULL;
                return -ENOMEM;
        }
        t->hdrs = curl_slist_append(t->hdrs, t->date);
        t->hdrs = curl_slist_append(t->hdrs, "x-ms-version: " AZURE_API_VERSION);
        if (q->upload) /* Put Blob: a block blob, whole */
                t->hdrs = curl_slist_append(t->hdrs, "x-ms-blob-type: BlockBlob");
        if (a->key) {
                const struct azure_upload up = {
                        .method = q->upload ? q->upload->method : "GET",
                        .content_length = q->upload ? q->upload->len : 0,
                        .content_type = q->upload ? q->upload->content_type : NULL,
                        .blob_type = q->upload ? "BlockBlob" : NULL,
                };
                r = azure_string_to_sign_upload(a->account, q->url, date, AZURE_API_VERSION, &up,
                                                &sts);
                if (r >= 0)
                        r = azure_shared_key_signature(a->key, sts, &sig);
                if (r < 0)
                        return r;
                if (asprintf(&t->auth, "Authorization: SharedKey %s:%s", a->account, sig) < 0)
                        t->auth = NULL;
        } else if (a->bearer && asprintf(&t->auth, "Authorization: Bearer %s", a->bearer) < 0) {
                t->auth = NULL;
        }
        if ((a->key || a->bearer) && !t->auth)
                return -ENOMEM;
        if (t->auth)
                t->hdrs = curl_slist_append(t->hdrs, t->auth);
        if (!t->hdrs)
                return -ENOMEM;
        curl_easy_setopt(t->curl, CURLOPT_HTTPHEADER, t->hdrs);
        return 0;
}

/* "x-amz-content-sha256: <hex>" of the body SigV4 signs: an upload's, or the empty one. */
static int payload_sha256(struct transfer_opts *t, const struct upload *up)
{
        static const char hex[] = "0123456789abcdef";
        uint8_t sum[32];
        char sum_hex[65];

        if (!up)
                return 0;
        if (gnutls_hash_fast(GNUTLS_DIG_SHA256, up->body, up->len, sum) < 0)
                return -EIO;
        for (size_t i = 0; i < sizeof(sum); i++) {
                sum_hex[2 * i] = hex[sum[i] >> 4];
                sum_hex[2 * i + 1] = hex[sum[i] & 15];
        }
        sum_hex[64] = 0;
        if (asprintf(&t->sha, "x-amz-content-sha256: %s", sum_hex) < 0) {
                t->sha = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* s3://: the endpoint's TLS settings and, with credentials, libcurl's SigV4. */
static int setopt_s3(struct transfer_opts *t, const struct fetch_config *c, const struct request *q)
{
        int r;

        if (!c->s3_verify) {
                curl_easy_setopt(t->curl, CURLOPT_SSL_VERIFYPEER, 0L);
                curl_easy_setopt(t->curl, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        if (c->ca_bundle)
                curl_easy_setopt(t->curl, CURLOPT_CAINFO, c->ca_bundle);
        if (!c->access_key) {
                if (t->hdrs)
                        curl_easy_setopt(t->curl, CURLOPT_HTTPHEADER, t->hdrs);
                return 0;
        }
        r = payload_sha256(t, q->upload);
        if (r < 0)
                return r;
        if (asprintf(&t->sigv4, "aws:amz:%s:s3", c->s3_region) < 0) {
                t->sigv4 = NULL;
                return -ENOMEM;
        }
        if (asprintf(&t->userpwd, "%s:%s", c->access_key, c->secret_key) < 0) {
                t->userpwd = NULL;
                return -ENOMEM;
        }
        t->hdrs = curl_slist_append(t->hdrs,
                                    t->sha ? t->sha : "x-amz-content-sha256: " EMPTY_SHA256);
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

/* A body that is not what storage says it is: -EBADMSG naming the object and both sums. */
static int check_md5(const struct request *q, struct sink *s, char *reterr, size_t len)
{
        uint8_t got[MD5_SIZE];
        char want_hex[MD5_HEX_SIZE], got_hex[MD5_HEX_SIZE];

        if (!s->started && s->listed && s->listed->set) {
                /* an empty body wrote nothing: its sum is still checked */
                int r = sink_start(s);
                if (r < 0) {
                        (void)snprintf(reterr, len, "GET %s: %s", q->url, s->why);
                        return r;
                }
        }
        if (!s->md5)
                return 0;
        gnutls_hash_deinit(s->md5, got);
        s->md5 = NULL;
        if (memcmp(got, s->want.md5, MD5_SIZE) == 0)
                return 0;
        md5_to_hex(s->want.md5, want_hex);
        md5_to_hex(got, got_hex);
        (void)snprintf(reterr, len,
                       "GET %s: MD5 mismatch: %s says %s, the %llu bytes received have %s", q->url,
                       s->want.source, want_hex, (unsigned long long)s->n, got_hex);
        return -EBADMSG;
}

/* Maps a finished transfer to 0 or an errno with the reason in @reterr. */
static int transfer_outcome(const struct request *q, struct sink *s, CURLcode cc, long code,
                            const char *curlerr, char *reterr, size_t len)
{
        char reason[512];

        if (s->fail < 0) {
                (void)snprintf(reterr, len, "GET %s: %s", q->url, s->why);
                return s->fail;
        }
        if (s->too_big || cc == CURLE_FILESIZE_EXCEEDED) {
                (void)snprintf(reterr, len, "GET %s: larger than the size limit of %llu bytes",
                               q->url, (unsigned long long)q->max);
                return -EFBIG;
        }
        if (cc == CURLE_ABORTED_BY_CALLBACK) {
                (void)snprintf(reterr, len, "%s %s: cancelled", method_of(q), q->url);
                return -ECANCELED;
        }
        if (cc != CURLE_OK) {
                (void)snprintf(reterr, len, "%s %s: %s", method_of(q), q->url,
                               *curlerr ? curlerr : curl_easy_strerror(cc));
                return cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
        }
        if (code >= 300) {
                if (!s3_error_parse(buf_str(&s->err), s->err.len, reason, sizeof(reason)) &&
                    !gcs_error_parse(buf_str(&s->err), s->err.len, reason, sizeof(reason)) &&
                    !oauth_error_parse(buf_str(&s->err), s->err.len, reason, sizeof(reason)) &&
                    !hf_error_parse(buf_str(&s->err), s->err.len, reason, sizeof(reason)))
                        (void)snprintf(reason, sizeof(reason), "%.200s", buf_str(&s->err));
                (void)snprintf(reterr, len, "%s %s: HTTP %ld%s%s", method_of(q), q->url, code,
                               *reason ? " " : "", reason);
                return code == 403 || code == 401 ? -EACCES : code == 404 ? -ENOENT : -EIO;
        }
        return check_md5(q, s, reterr, len);
}

static int transfer_once(const struct fetch_config *c, const struct request *q, long *ret_code,
                         CURLcode *ret_cc, char *reterr, size_t len)
{
        CLEANUP(transfer_opts_release) struct transfer_opts t = { 0 };
        CLEANUP(sink_release) struct sink s = { 0 };
        CURLcode cc;
        long code = 0;
        int r;

        t.curl = transfer_handle(&t.kept);
        s = (struct sink){ .curl = t.curl,
                           .fd = q->fd,
                           .stream = q->fd_is_stream,
                           .body = q->body,
                           .err = BUF_INIT(ERROR_BODY_MAX),
                           .max = q->max,
                           .space_dir = q->space_dir,
                           .s3 = q->s3 && c->s3_etag_md5,
                           .listed = q->listed,
                           .answer = q->upload != NULL };
        if (!t.curl)
                return -ENOMEM;
        setopt_common(&t, c, q, &s);
        r = q->upload ? setopt_upload(&t, q->upload) : 0;
        if (r >= 0)
                r = q->azure ? setopt_azure(&t, q)
                    : q->s3  ? setopt_s3(&t, c, q)
                             : setopt_plain(&t, q);
        if (r < 0)
                return r;
        cc = curl_easy_perform(t.curl);
        curl_easy_getinfo(t.curl, CURLINFO_RESPONSE_CODE, &code);
        *ret_code = code;
        *ret_cc = cc;
        return transfer_outcome(q, &s, cc, code, t.curlerr, reterr, len);
}

/* An archive extracted as it arrives: the transfer writes into one end of a socket pair, a
 * thread runs libarchive on the other. */
struct stream_job {
        const char *dir;
        struct extract_limits lim;
        int fd; /* the extractor's end, while it runs */
        int r;
        char why[512];
};

static void *stream_extract(void *userdata)
{
        struct stream_job *j = userdata;
        char buf[65536];
        ssize_t n;

        j->r = archive_extract_fd(j->fd, j->dir, &j->lim, j->why, sizeof(j->why));
        /* what follows the archive's end (padding) is read, so the transfer completes */
        while (j->r >= 0 && ((n = read(j->fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)))
                ;
        /* closing the read end: a transfer still writing gets EPIPE; nothing can be lost here */
        (void)close(j->fd);
        j->fd = -EBADF;
        return NULL;
}

int fetch_empty_dir(const char *dir)
{
        return remove_tree(dir, true);
}

/* One attempt of a streamed archive: the transfer's error wins, unless it only says the
 * extractor stopped reading (then the extractor's reason is the answer). */
static int transfer_streamed(const struct fetch_config *c, const struct request *q, long *ret_code,
                             CURLcode *ret_cc, char *reterr, size_t len)
{
        struct stream_job *j = q->stream;
        struct request one = *q;
        pthread_t th;
        int sv[2], r;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return negative_errno();
        j->fd = sv[1];
        j->r = 0;
        j->why[0] = 0;
        r = -pthread_create(&th, NULL, stream_extract, j);
        if (r < 0) {
                (void)close(sv[0]);
                (void)close(sv[1]);
                return r;
        }
        one.fd = sv[0];
        one.fd_is_stream = true;
        one.stream = NULL;
        r = transfer_once(c, &one, ret_code, ret_cc, reterr, len);
        /* end of the body: the extractor reads EOF (a socket: nothing to flush) */
        (void)close(sv[0]);
        (void)pthread_join(th, NULL);
        /* the extractor's end closed with bytes unread: EPIPE, or ECONNRESET */
        if (j->r < 0 && (r >= 0 || r == -EPIPE || r == -ECONNRESET)) {
                (void)snprintf(reterr, len, "%s: %s", q->url, j->why);
                *ret_cc = CURLE_WRITE_ERROR; /* not a transport error: not retried */
                return j->r;
        }
        return r;
}

/* The backoff before attempt @attempt + 1, said in a warning (debug with quiet_retries). */
static void retry_wait(const struct fetch_config *c, unsigned attempt, const char *reterr)
{
        usec_t d = backoff_delay(attempt, c->retry_base, 30 * USEC_PER_SEC, fetch_jitter01());
        struct timespec ts = usec_to_timespec(d);

        log_emit(c->quiet_retries ? LOG_LEVEL_DEBUG : LOG_LEVEL_WARN, 0, NULL,
                 "%s (attempt %u of %u, retrying in %llu ms)", reterr, attempt, c->attempts,
                 (unsigned long long)(d / USEC_PER_MSEC));
        nanosleep(&ts, NULL);
}

static int transfer(const struct fetch_config *c, const struct request *q, char *reterr, size_t len)
{
        int r = -EIO;

        for (unsigned attempt = 1; attempt <= MAX(c->attempts, 1U); attempt++) {
                long code = 0;
                CURLcode cc = CURLE_OK;

                if (c->cancel && atomic_load(c->cancel)) {
                        (void)snprintf(reterr, len, "%s %s: cancelled", method_of(q), q->url);
                        return -ECANCELED;
                }

                if (q->fd >= 0 && (lseek(q->fd, 0, SEEK_SET) < 0 || ftruncate(q->fd, 0) < 0))
                        return negative_errno();
                if (q->stream && attempt > 1) {
                        r = fetch_empty_dir(q->stream->dir);
                        if (r < 0)
                                return r;
                }
                if (q->body)
                        buf_reset(q->body);
                r = q->stream ? transfer_streamed(c, q, &code, &cc, reterr, len)
                              : transfer_once(c, q, &code, &cc, reterr, len);
                if (r == 0 || r == -ENOMEM || r == -EFBIG || errno_is_space(r) || r == -EBADMSG ||
                    r == -ECANCELED || !retryable(cc, code))
                        return r;
                if (attempt < c->attempts)
                        retry_wait(c, attempt, reterr);
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

/* How an object is fetched: plain (http), S3-signed, GCS (alt=media, bearer token), or Azure
 * (signed per request, endpoint/container/blob). */
struct object_store {
        const char *scheme; /* "s3", "gs", "azure": for messages */
        bool s3;
        const char *bearer;             /* borrowed, may be NULL */
        const char *const *headers;     /* borrowed; more request headers, may be NULL */
        const struct azure_auth *azure; /* borrowed, may be NULL */
        const char *endpoint;           /* Azure's blob endpoint, the hub's; borrowed */
        const char *revision;           /* hf: the commit (or revision) files are resolved at */
        const char *md5_name;           /* what the listing calls its MD5s */
};

/* One object into the new file @path: written, synced and closed, every step checked; the
 * free space of @space_dir counts. */
static int get_to_file(const struct fetch_config *c, const char *url, const struct object_store *os,
                       const char *path, const char *space_dir, const struct expect_md5 *listed,
                       uint64_t max, char *reterr, size_t len)
{
        struct request q = { .url = url,
                             .s3 = os->s3,
                             .bearer = os->bearer,
                             .headers = os->headers,
                             .azure = os->azure,
                             .max = max,
                             .space_dir = space_dir,
                             .listed = listed };
        int fd, r, k;

        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) {
                r = negative_errno();
                snprintf(reterr, len, "cannot create %s: %s", path, errno_to_string(-r));
                return r;
        }
        q.fd = fd;
        r = transfer(c, &q, reterr, len);
        /* a file system may report a failed write only now (delayed allocation, NFS, quota) */
        k = fsync(fd) < 0 ? negative_errno() : 0;
        if (close(fd) < 0 && k == 0)
                k = negative_errno();
        if (r >= 0 && k < 0) {
                if (errno_is_space(k))
                        (void)space_exhausted(space_dir, 0, 0, reterr, len);
                else
                        (void)snprintf(reterr, len, "writing %s: %s", path, errno_to_string(-k));
                r = k;
        }
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

        if (os->revision) {
                /* {endpoint}/{repo}/resolve/{revision}/{file}: the hub redirects (LFS: a CDN) */
                r = buf_printf(b, "%s/%s/resolve/", os->endpoint, bucket);
                if (r >= 0)
                        r = s3_escape(b, os->revision, false);
                if (r >= 0)
                        r = buf_putc(b, '/');
                return r >= 0 ? s3_escape(b, key, true) : r;
        }
        if (os->azure) {
                r = buf_printf(b, "%s/", os->endpoint);
                if (r >= 0)
                        r = s3_escape(b, bucket, false);
                if (r >= 0)
                        r = buf_putc(b, '/');
                return r >= 0 ? s3_escape(b, key, true) : r;
        }
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
                r = get_to_file(c, buf_str(&url), os, path, dir, NULL, c->size_max, reterr, len);
        if (r == -ENOENT)
                (void)snprintf(reterr, len, "%s://%s/%s: no such object or prefix", os->scheme,
                               u->bucket, u->key);
        return r;
}

/* One listed object, @rel below the prefix, into @dir/@rel (checked against the listing's
 * @md5, base64, when given); *used counts the bytes on disk. */
static int fetch_listed_key(const struct fetch_config *c, const struct object_store *os,
                            const struct storage_uri *u, const char *key, const char *md5,
                            const char *rel, const char *dir, uint64_t *used, char *reterr,
                            size_t len)
{
        struct expect_md5 listed = { .source = os->md5_name ? os->md5_name : "md5Hash" };
        CLEANUP(buf_release) struct buf url = BUF_INIT(8192);
        AUTOFREE char *path = NULL;
        struct stat st;
        int r;

        listed.set = md5 && md5_from_base64(md5, strlen(md5), listed.md5);
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
                r = get_to_file(c, buf_str(&url), os, path, dir, &listed,
                                dir_budget(c->size_max, *used), reterr, len);
        if (r >= 0 && stat(path, &st) == 0)
                *used += (uint64_t)st.st_size;
        return r;
}

/* A listed key below @prefix, not a folder marker. */
static bool list_key_wanted(const char *key, const char *prefix, size_t plen)
{
        return strncmp(key, prefix, plen) == 0 && key[plen] != 0 && key[strlen(key) - 1] != '/';
}

/* Downloads what a prefix listing found (@list, consumed), or the single object @u->key when
 * nothing is under "<key>/". */
static int fetch_listed(const struct fetch_config *c, const struct object_store *os,
                        const struct storage_uri *u, struct s3_list *list, const char *prefix,
                        const char *dir, char *reterr, size_t len)
{
        size_t plen = strlen(prefix);
        uint64_t used = 0, listed = 0;
        int r = 0;

        if (list->n_keys == 0) {
                s3_list_release(list);
                if (*u->key)
                        return fetch_single_object(c, os, u, dir, reterr, len);
                (void)snprintf(reterr, len, "%s://%s/: the bucket is empty", os->scheme, u->bucket);
                return -ENOENT;
        }
        /* the listing's sizes: the limit and the free space, before any byte is fetched */
        for (size_t i = 0; i < list->n_keys; i++)
                if (list_key_wanted(list->keys[i], prefix, plen) &&
                    list->sizes[i] != S3_SIZE_UNKNOWN)
                        listed += MIN(list->sizes[i], UINT64_MAX - listed);
        if (listed > c->size_max) {
                (void)snprintf(reterr, len,
                               "%s://%s/%s: %llu bytes listed, over the size limit of %llu bytes",
                               os->scheme, u->bucket, prefix, (unsigned long long)listed,
                               (unsigned long long)c->size_max);
                r = -EFBIG;
        }
        if (r >= 0) {
                char why[256];
                r = space_check(dir, listed, why, sizeof(why));
                if (r < 0)
                        (void)snprintf(reterr, len, "%s://%s/%s: %s", os->scheme, u->bucket, prefix,
                                       why);
        }
        for (size_t i = 0; i < list->n_keys && r >= 0; i++) {
                const char *key = list->keys[i];

                if (list_key_wanted(key, prefix, plen))
                        r = fetch_listed_key(c, os, u, key, list->md5s[i], key + plen, dir, &used,
                                             reterr, len);
        }
        s3_list_release(list);
        return r;
}

/* Appends @lit, then @value escaped (nothing when @value is NULL); keeps a failure of before. */
static int add_param(struct buf *url, int r, const char *lit, const char *value)
{
        if (r < 0 || !value)
                return r;
        r = buf_puts(url, lit);
        return r < 0 ? r : s3_escape(url, value, false);
}

/* Azure's List Blobs: the parameters in the order Shared Key signs them (sorted). */
static int list_page_url_azure(const struct object_store *os, const char *bucket,
                               const char *prefix, const char *token, struct buf *url)
{
        int r = buf_printf(url, "%s/", os->endpoint);

        if (r >= 0)
                r = s3_escape(url, bucket, false);
        if (r >= 0)
                r = buf_puts(url, "?comp=list");
        r = add_param(url, r, "&marker=", token);
        r = add_param(url, r, "&prefix=", prefix);
        return r >= 0 ? buf_puts(url, "&restype=container") : r;
}

/* S3's ListObjectsV2: the query parameters in the sorted order SigV4's canonical request needs. */
static int list_page_url_s3(const struct fetch_config *c, const char *bucket, const char *prefix,
                            const char *token, struct buf *url)
{
        int r = s3_base(c, bucket, url);

        r = add_param(url, r, "?continuation-token=", token);
        if (r >= 0)
                r = buf_puts(url, token ? "&list-type=2&prefix=" : "?list-type=2&prefix=");
        return r >= 0 ? s3_escape(url, prefix, false) : r;
}

/* One page of the listing of @prefix: Azure, S3, or the GCS objects list. */
static int list_page_url(const struct fetch_config *c, const struct object_store *os,
                         const char *bucket, const char *prefix, const char *token, struct buf *url)
{
        int r;

        if (os->azure)
                return list_page_url_azure(os, bucket, prefix, token, url);
        if (os->s3)
                return list_page_url_s3(c, bucket, prefix, token, url);
        r = gcs_base(c, bucket, url);
        if (r >= 0)
                r = buf_puts(url, "?fields=items(name,size,md5Hash),nextPageToken&prefix=");
        if (r >= 0)
                r = s3_escape(url, prefix, false);
        return add_param(url, r, "&pageToken=", token);
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
                                             .fd = -EBADF,
                                             .s3 = os->s3,
                                             .bearer = os->bearer,
                                             .azure = os->azure,
                                             .body = &page,
                                             .max = LIST_PAGE_MAX - 1 };
                        r = transfer(c, &q, reterr, len);
                }
                if (r >= 0) {
                        r = os->azure ? azure_list_parse(buf_str(&page), page.len, &list)
                            : os->s3  ? s3_list_parse(buf_str(&page), page.len, &list)
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

/* KServe's "<host>-headers" for @url (uri.h): *@ret NULL when the variable is unset. Read when
 * a download starts, so a secret's headers need no restart (nothing here calls setenv). */
static int host_headers(const char *url, char ***ret, char *reterr, size_t len)
{
        bool oom;
        AUTOFREE char *var = url_headers_env_name(url, &oom);
        const char *v = var ? env_get(var) : NULL;
        char why[256] = "";
        int r;

        *ret = NULL;
        if (oom)
                return -ENOMEM;
        if (!v || !*v)
                return 0;
        r = url_headers_parse(v, ret, why, sizeof(why));
        if (r == -EINVAL)
                (void)snprintf(reterr, len, "GET %s: the environment variable %s: %s", url, var,
                               why);
        return r;
}

/* http(s)://: one file, or an archive streamed into @dir as it arrives (never saved whole). */
static int fetch_http(const struct fetch_config *c, const struct storage_uri *u, const char *dir,
                      char *reterr, size_t len)
{
        CLEANUP(ce_strv_freep) char **headers = NULL;
        enum archive_kind ak = archive_kind_from_url(u->url);
        AUTOFREE char *name = url_file_name(u->url), *path = NULL;
        struct stream_job job = {
                .dir = dir,
                .lim = { .size_max = c->size_max, .entries_max = c->entries_max },
                .fd = -EBADF,
        };
        int r = host_headers(u->url, &headers, reterr, len);
        const struct object_store os = { .scheme = "http",
                                         .headers = (const char *const *)headers };
        struct request q = { .url = u->url,
                             .headers = os.headers,
                             .fd = -EBADF,
                             .stream = &job,
                             .max = c->size_max,
                             .space_dir = dir };

        if (r < 0)
                return r;
        if (!name || asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        if (ak == ARCHIVE_NONE)
                return get_to_file(c, u->url, &os, path, dir, NULL, c->size_max, reterr, len);
        return transfer(c, &q, reterr, len);
}

/* Writes all of @p to @fd. */
static int write_all(int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t w = write(fd, p, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return negative_errno();
                p += w;
                n -= (size_t)w;
        }
        return 0;
}

/* @from into the new file @to: the free space checked first, every write, the sync and the
 * close checked. A full volume is -ENOSPC with the message in @reterr. */
static int copy_file(const char *from, const char *to, const char *space_dir, uint64_t *used,
                     uint64_t max, char *reterr, size_t len)
{
        AUTOCLOSE int in = open(from, O_RDONLY | O_CLOEXEC);
        char buf[65536];
        uint64_t done = 0;
        struct stat st;
        ssize_t n;
        int out, r = 0, k;

        if (in < 0 || fstat(in, &st) < 0)
                return negative_errno();
        if (*used + (uint64_t)st.st_size > max)
                return -EFBIG;
        r = space_check(space_dir, (uint64_t)st.st_size, reterr, len);
        if (r < 0)
                return r;
        out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (out < 0)
                return negative_errno();
        while (r >= 0 && (n = read(in, buf, sizeof(buf))) != 0) {
                if (n < 0) {
                        r = errno == EINTR ? 0 : negative_errno();
                        continue;
                }
                *used += (uint64_t)n;
                if (*used > max)
                        r = -EFBIG;
                else
                        r = write_all(out, buf, (size_t)n);
                done += (uint64_t)n;
        }
        k = fsync(out) < 0 ? negative_errno() : 0;
        if (close(out) < 0 && k == 0)
                k = negative_errno();
        if (r >= 0)
                r = k;
        if (errno_is_space(r))
                return space_exhausted(space_dir, done, (uint64_t)st.st_size, reterr, len);
        return r;
}

static int copy_tree(const char *from, const char *to, const char *space_dir, uint64_t *used,
                     uint64_t max, unsigned depth, char *reterr, size_t len)
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
                                r = copy_tree(src, dst, space_dir, used, max, depth + 1, reterr,
                                              len);
                } else if (S_ISREG(st.st_mode)) {
                        r = copy_file(src, dst, space_dir, used, max, reterr, len);
                }
        }
        closedir(d);
        return r;
}

static int fetch_local(const struct fetch_config *c, const struct storage_uri *u, const char *dir,
                       char *reterr, size_t len)
{
        AUTOFREE char *src = NULL;
        char why[512] = "";
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
                r = copy_tree(src, dir, dir, &used, c->size_max, 0, why, sizeof(why));
        } else {
                const char *slash = strrchr(src, '/');
                AUTOFREE char *dst = NULL;
                if (asprintf(&dst, "%s/%s", dir, slash ? slash + 1 : src) < 0)
                        return -ENOMEM;
                r = copy_file(src, dst, dir, &used, c->size_max, why, sizeof(why));
        }
        if (r < 0)
                snprintf(reterr, len, "copying %s: %s", src,
                         r == -EFBIG         ? "larger than the size limit"
                         : errno_is_space(r) ? why
                                             : errno_to_string(-r));
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

/* A service-account key file's access token for @scope: the JWT (RS256, its private_key)
 * exchanged at its token_uri. Into *ret (owned). -EACCES with the reason (the file, the key, the
 * endpoint's answer) in @reterr. */
static int gcs_token_exchange_scope(const struct fetch_config *c, const char *scope, char **ret,
                                    uint64_t *ret_expires_in, char *reterr, size_t len)
{
        CLEANUP(sa_key_release) struct sa_key key = { 0 };
        AUTOFREE char *json = NULL, *input = NULL, *jwt = NULL, *form = NULL;
        struct buf body = BUF_INIT(65536);
        char why[512];
        size_t n = 0;
        int r;

        r = read_file_bounded(c->gcs_credentials, 1 << 20, READ_FILE_SECRET, &json, &n, NULL);
        if (r < 0) {
                (void)snprintf(reterr, len, "GOOGLE_APPLICATION_CREDENTIALS %s: %s",
                               c->gcs_credentials, errno_to_string(-r));
                return r == -ENOMEM ? r : -EACCES;
        }
        r = sa_key_parse(json, n, &key, why, sizeof(why));
        explicit_bzero(json, n);
        if (r >= 0)
                r = jwt_signing_input(&key, scope, (int64_t)time(NULL), &input);
        if (r >= 0)
                r = jwt_sign_rs256(key.private_key, input, &jwt, why, sizeof(why));
        if (key.private_key)
                explicit_bzero(key.private_key, strlen(key.private_key));
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                (void)snprintf(reterr, len, "GOOGLE_APPLICATION_CREDENTIALS %s: %s",
                               c->gcs_credentials, why);
                return -EACCES;
        }
        /* the JWT is base64url and dots: nothing to escape */
        if (asprintf(&form, "grant_type=%s&assertion=%s",
                     "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer", jwt) < 0) {
                form = NULL;
                return -ENOMEM;
        }
        struct request q = {
                .url = key.token_uri, .fd = -EBADF, .body = &body, .post = form, .max = 65535
        };
        r = transfer(c, &q, why, sizeof(why));
        if (r >= 0) {
                r = oauth_token_parse(buf_str(&body), body.len, ret, ret_expires_in);
                if (r == -EBADMSG)
                        (void)snprintf(why, sizeof(why), "POST %s: no access_token in the answer",
                                       key.token_uri);
        }
        buf_release(&body);
        if (r < 0 && r != -ENOMEM) {
                (void)snprintf(reterr, len, "service account %s: %s", key.client_email, why);
                return -EACCES;
        }
        return r;
}

typedef int (*token_exchange_fn)(const struct fetch_config *c, char **ret, uint64_t *ret_expires_in,
                                 char *reterr, size_t len);

/* Downloads read (devstorage.read_only); the request logger's uploads write. */
static int gcs_read_token_exchange(const struct fetch_config *c, char **ret,
                                   uint64_t *ret_expires_in, char *reterr, size_t len)
{
        return gcs_token_exchange_scope(c, GCS_READ_SCOPE, ret, ret_expires_in, reterr, len);
}

static int gcs_write_token_exchange(const struct fetch_config *c, char **ret,
                                    uint64_t *ret_expires_in, char *reterr, size_t len)
{
        return gcs_token_exchange_scope(c, GCS_WRITE_SCOPE, ret, ret_expires_in, reterr, len);
}

/* @tc's token, or a new one from @exchange when there is none or it expires within a minute
 * (one exchange however many downloads run). Into *ret (owned). */
static int cached_token(const struct fetch_config *c, struct token_cache *tc,
                        token_exchange_fn exchange, const char *what, char **ret, char *reterr,
                        size_t len)
{
        usec_t now = now_monotonic();
        uint64_t expires_in = 0;
        int r = 0;

        *ret = NULL;
        pthread_mutex_lock(&tc->lock);
        if (tc->token && now + 60 * USEC_PER_SEC < tc->expires) {
                *ret = strdup(tc->token);
                r = *ret ? 0 : -ENOMEM;
        } else {
                free(tc->token);
                tc->token = NULL;
                r = exchange(c, &tc->token, &expires_in, reterr, len);
                if (r >= 0) {
                        tc->expires = now + MIN(expires_in, 86400ULL) * USEC_PER_SEC;
                        *ret = strdup(tc->token);
                        r = *ret ? 0 : -ENOMEM;
                        log_info("agent: an access token for %s, valid %llus", what,
                                 (unsigned long long)expires_in);
                }
        }
        pthread_mutex_unlock(&tc->lock);
        return r;
}

/* The bearer of gs:// requests: GOOGLE_OAUTH_ACCESS_TOKEN, else the service-account key's
 * token for reading or, @write, for writing (each cached), else none. */
static int gcs_bearer(const struct fetch_config *c, bool write, char **ret, char *reterr,
                      size_t len)
{
        *ret = NULL;
        if (c->gcs_token || !c->gcs_credentials) {
                *ret = c->gcs_token ? strdup(c->gcs_token) : NULL;
                return c->gcs_token && !*ret ? -ENOMEM : 0;
        }
        if (write)
                return cached_token(c, c->gcs_write_cache, gcs_write_token_exchange,
                                    "GOOGLE_APPLICATION_CREDENTIALS (read-write)", ret, reterr,
                                    len);
        return cached_token(c, c->gcs_cache, gcs_read_token_exchange,
                            "GOOGLE_APPLICATION_CREDENTIALS", ret, reterr, len);
}

/* An Azure service principal's token for Blob Storage: the client-credentials grant at
 * <authority>/<tenant>/oauth2/v2.0/token, scope https://storage.azure.com/.default. -EACCES
 * with the endpoint's answer in @reterr. */
static int azure_token_exchange(const struct fetch_config *c, char **ret, uint64_t *ret_expires_in,
                                char *reterr, size_t len)
{
        CLEANUP(buf_release) struct buf url = BUF_INIT(4096), form = BUF_INIT(16384);
        struct buf body = BUF_INIT(65536);
        char why[512];
        int r;

        r = buf_printf(&url, "%s/", c->azure_authority);
        if (r >= 0)
                r = s3_escape(&url, c->azure_tenant_id, false);
        if (r >= 0)
                r = buf_puts(&url, "/oauth2/v2.0/token");
        if (r >= 0)
                r = buf_puts(&form, "grant_type=client_credentials&client_id=");
        if (r >= 0)
                r = s3_escape(&form, c->azure_client_id, false);
        if (r >= 0)
                r = buf_puts(&form, "&client_secret=");
        if (r >= 0)
                r = s3_escape(&form, c->azure_client_secret, false);
        if (r >= 0)
                r = buf_puts(&form, "&scope=https%3A%2F%2Fstorage.azure.com%2F.default");
        if (r < 0)
                return r;
        struct request q = { .url = buf_str(&url),
                             .fd = -EBADF,
                             .body = &body,
                             .post = buf_str(&form),
                             .max = 65535 };
        r = transfer(c, &q, why, sizeof(why));
        if (r >= 0) {
                r = oauth_token_parse(buf_str(&body), body.len, ret, ret_expires_in);
                if (r == -EBADMSG)
                        (void)snprintf(why, sizeof(why), "POST %s: no access_token in the answer",
                                       buf_str(&url));
        }
        if (form.p)
                explicit_bzero(form.p, form.len);
        buf_release(&body);
        if (r < 0 && r != -ENOMEM) {
                (void)snprintf(reterr, len, "Azure service principal %s: %s", c->azure_client_id,
                               why);
                return -EACCES;
        }
        return r;
}

/* hf://ORG/REPO[:REVISION] as huggingface_hub's snapshot_download: the model's info at the
 * revision (its commit and file list, with sizes), then each file resolved at that commit, so
 * every file comes from one snapshot; HF_TOKEN as the bearer (not sent on to the CDN: libcurl
 * drops Authorization on a redirect to another host). */
static int fetch_hf(const struct fetch_config *c, const struct storage_uri *u, const char *dir,
                    char *reterr, size_t len)
{
        struct buf url = BUF_INIT(8192), page = BUF_INIT(LIST_PAGE_MAX);
        struct s3_list list = { 0 };
        AUTOFREE char *sha = NULL;
        struct object_store hf = { .scheme = "hf",
                                   .bearer = c->hf_token,
                                   .endpoint = c->hf_endpoint };
        int r;

        r = buf_printf(&url, "%s/api/models/%s/revision/", c->hf_endpoint, u->bucket);
        if (r >= 0)
                r = s3_escape(&url, u->key, false);
        if (r >= 0)
                r = buf_puts(&url, "?blobs=true");
        if (r >= 0) {
                struct request q = { .url = buf_str(&url),
                                     .fd = -EBADF,
                                     .bearer = c->hf_token,
                                     .body = &page,
                                     .max = LIST_PAGE_MAX - 1 };
                r = transfer(c, &q, reterr, len);
                if (r == -EACCES && !c->hf_token)
                        (void)snprintf(reterr + strlen(reterr), len - strlen(reterr),
                                       " (no HF_TOKEN set)");
        }
        if (r >= 0) {
                r = hf_model_info_parse(buf_str(&page), page.len, &list, &sha);
                if (r < 0)
                        (void)snprintf(reterr, len, "hf://%s:%s: %s", u->bucket, u->key,
                                       r == -E2BIG ? "too many files"
                                                   : "malformed model info answer");
        }
        if (r >= 0 && list.n_keys == 0) {
                (void)snprintf(reterr, len, "hf://%s:%s: the repository has no files", u->bucket,
                               u->key);
                r = -ENOENT;
        }
        buf_release(&url);
        buf_release(&page);
        if (r < 0) {
                s3_list_release(&list);
                return r;
        }
        hf.revision = sha ? sha : u->key;
        return fetch_listed(c, &hf, u, &list, "", dir, reterr, len);
}

/* Whether the account's key applies to @account: AZURE_STORAGE_ACCOUNT (or the connection
 * string's AccountName) names it, or names none. */
static bool azure_account_is_configured(const struct fetch_config *c, const char *account)
{
        return !c->azure_account || streq(c->azure_account, account);
}

/* How requests to an Azure @account are made: the endpoint (the connection string's BlobEndpoint
 * when the key is this account's, else @url_endpoint, else https://<account>.blob.core.windows.net)
 * and the authorization, in KServe's order: a service principal's token, else the account's
 * Shared Key, else anonymous. *ret_endpoint and *ret_bearer are owned (the bearer may be NULL);
 * @auth borrows them and @c's key. */
static int azure_access(const struct fetch_config *c, const char *account, const char *url_endpoint,
                        struct azure_auth *auth, char **ret_endpoint, char **ret_bearer,
                        char *reterr, size_t len)
{
        bool ours = azure_account_is_configured(c, account);
        char *endpoint = NULL, *bearer = NULL;
        int r = 0;

        *auth = (struct azure_auth){ .account = account, .key = ours ? c->azure_key : NULL };
        if (c->azure_client_id && c->azure_client_secret && c->azure_tenant_id) {
                auth->key = NULL;
                r = cached_token(c, c->azure_cache, azure_token_exchange,
                                 "the Azure service principal", &bearer, reterr, len);
                if (r < 0)
                        return r;
                auth->bearer = bearer;
        }
        if (ours && c->azure_endpoint)
                endpoint = strdup(c->azure_endpoint);
        else if (url_endpoint)
                endpoint = strdup(url_endpoint);
        else if (asprintf(&endpoint, "https://%s.blob.core.windows.net", account) < 0)
                endpoint = NULL;
        if (!endpoint) {
                free(bearer);
                return -ENOMEM;
        }
        *ret_endpoint = endpoint;
        *ret_bearer = bearer;
        return 0;
}

static void secret_free(char *s)
{
        if (s)
                explicit_bzero(s, strlen(s));
        free(s);
}

/* Azure: every blob under <prefix>/ (List Blobs, paged by NextMarker), or the one blob, from the
 * account's endpoint (https://<account>.blob.core.windows.net, or the connection string's
 * BlobEndpoint: Azurite), with its Shared Key or anonymously. */
static int fetch_azure(const struct fetch_config *c, const struct storage_uri *u, const char *dir,
                       char *reterr, size_t len)
{
        struct azure_auth auth;
        struct object_store az = { .scheme = "azure", .azure = &auth, .md5_name = "Content-MD5" };
        char *endpoint = NULL, *bearer = NULL; /* freed below (not AUTOFREE: the structs alias
                                                * them, which the analyzer takes for a leak) */
        int r;

        r = azure_access(c, u->account, u->url, &auth, &endpoint, &bearer, reterr, len);
        if (r >= 0) {
                az.endpoint = endpoint;
                r = fetch_bucket(c, &az, u, dir, reterr, len);
        }
        free(endpoint);
        secret_free(bearer);
        return r;
}

/* An http(s) URL under the configured blob endpoint (Azurite's path-style
 * http://127.0.0.1:10000/<account>/<container>/<prefix>) is Azure: @u is turned into an Azure
 * URI (returns 1). 0 when it is not, -ENOMEM. */
static int azure_endpoint_url(const struct fetch_config *c, struct storage_uri *u)
{
        size_t n = c->azure_endpoint ? strlen(c->azure_endpoint) : 0;
        const char *rest, *slash, *acct, *sep;
        struct storage_uri az = { .kind = STORAGE_AZURE };

        if (n == 0 || strncmp(u->url, c->azure_endpoint, n) != 0 || u->url[n] != '/' ||
            strpbrk(u->url + n, "?#"))
                return 0;
        rest = u->url + n + 1;
        slash = strrchr(c->azure_endpoint, '/');
        acct = c->azure_account ? c->azure_account : slash ? slash + 1 : "";
        sep = strstr(c->azure_endpoint, "://");
        if (!*acct || !sep || sep + 2 == slash)
                return 0; /* no account in the endpoint's path */
        slash = strchr(rest, '/');
        if (slash == rest || !*rest)
                return 0;
        az.account = strdup(acct);
        az.bucket = slash ? strndup(rest, (size_t)(slash - rest)) : strdup(rest);
        az.key = strdup(slash ? slash + 1 : "");
        if (!az.account || !az.bucket || !az.key) {
                storage_uri_release(&az);
                return -ENOMEM;
        }
        for (size_t k = strlen(az.key); k > 0 && az.key[k - 1] == '/'; k--)
                az.key[k - 1] = 0;
        if (*az.key && !relative_path_is_safe(az.key)) {
                storage_uri_release(&az);
                return 0; /* fetched as plain http: nothing is written from its path */
        }
        storage_uri_release(u);
        *u = az;
        return 1;
}

/* The URL an object is uploaded to: S3's object URL, GCS's media upload, Azure's blob URL. */
static int put_url(const struct fetch_config *c, const struct fetch_object *o,
                   const char *azure_endpoint, struct buf *b)
{
        int r;

        switch (o->store) {
        case FETCH_STORE_S3:
                r = s3_base(c, o->bucket, b);
                return r >= 0 ? s3_escape(b, o->key, true) : r;
        case FETCH_STORE_GCS:
                r = buf_printf(b, "%s/upload/storage/v1/b/", c->gcs_endpoint);
                if (r >= 0)
                        r = s3_escape(b, o->bucket, false);
                if (r >= 0)
                        r = buf_puts(b, "/o?uploadType=media&name=");
                return r >= 0 ? s3_escape(b, o->key, false) : r;
        case FETCH_STORE_AZURE:
                r = buf_printf(b, "%s/", azure_endpoint);
                if (r >= 0)
                        r = s3_escape(b, o->bucket, false);
                if (r >= 0)
                        r = buf_putc(b, '/');
                return r >= 0 ? s3_escape(b, o->key, true) : r;
        }
        return -EINVAL;
}

int fetch_put_object(const struct fetch_config *c, const struct fetch_object *o, const void *body,
                     size_t len, const char *content_type, char *reterr, size_t len_err)
{
        CLEANUP(buf_release) struct buf url = BUF_INIT(8192), answer = BUF_INIT(65536);
        const struct upload up = { .method = o->store == FETCH_STORE_GCS ? "POST" : "PUT",
                                   .body = body,
                                   .len = len,
                                   .content_type = content_type };
        struct azure_auth auth = { 0 };
        char *endpoint = NULL, *bearer = NULL; /* freed below, as in fetch_azure() */
        int r = 0;

        if (o->store == FETCH_STORE_AZURE)
                r = azure_access(c, o->account, /* url_endpoint= */ NULL, &auth, &endpoint, &bearer,
                                 reterr, len_err);
        else if (o->store == FETCH_STORE_GCS)
                r = gcs_bearer(c, /* write= */ true, &bearer, reterr, len_err);
        if (r >= 0)
                r = put_url(c, o, endpoint, &url);
        if (r >= 0) {
                struct request q = { .url = buf_str(&url),
                                     .s3 = o->store == FETCH_STORE_S3,
                                     .bearer = o->store == FETCH_STORE_GCS ? bearer : NULL,
                                     .azure = o->store == FETCH_STORE_AZURE ? &auth : NULL,
                                     .upload = &up,
                                     .fd = -EBADF,
                                     .body = &answer,
                                     .max = answer.max - 1 };
                r = transfer(c, &q, reterr, len_err);
        }
        free(endpoint);
        secret_free(bearer);
        return r;
}

int fetch_model_cancellable(const struct fetch_config *c, const char *uri, const char *dir,
                            const atomic_bool *cancel, char *reterr, size_t len)
{
        /* a shallow copy carries the flag down: its strings stay c's */
        struct fetch_config call = *c;

        call.cancel = cancel;
        return fetch_model(&call, uri, dir, reterr, len);
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
                r = azure_endpoint_url(c, &u);
                if (r > 0)
                        r = fetch_azure(c, &u, dir, reterr, len);
                else if (r == 0)
                        r = fetch_http(c, &u, dir, reterr, len);
                break;
        case STORAGE_LOCAL:
                r = fetch_local(c, &u, dir, reterr, len);
                break;
        case STORAGE_GCS: {
                /* GCS JSON API; STORAGE_EMULATOR_HOST honoured (fetch_config_from_env) */
                AUTOFREE char *bearer = NULL;
                r = gcs_bearer(c, /* write= */ false, &bearer, reterr, len);
                if (r >= 0) {
                        const struct object_store gs = { .scheme = "gs", .bearer = bearer };
                        r = fetch_bucket(c, &gs, &u, dir, reterr, len);
                }
                break;
        }
        case STORAGE_MODEL_REGISTRY:
                r = fetch_registered(c, uri, dir, reterr, len);
                break;
        case STORAGE_AZURE:
                r = fetch_azure(c, &u, dir, reterr, len);
                break;
        case STORAGE_HF:
                r = fetch_hf(c, &u, dir, reterr, len);
                break;
        default:
                snprintf(reterr, len, "%s: this storage scheme is not supported", uri);
                r = -EPROTONOSUPPORT;
                break;
        }
        storage_uri_release(&u);
        return r;
}
