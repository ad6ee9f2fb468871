/* SPDX-License-Identifier: Apache-2.0 */
#include "transfer/push.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <gnutls/crypto.h>

#include "transfer/oci.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/log.h"

#define ATTEMPTS      4
#define HEADER_MAX    4096
#define RETRY_BASE_MS 500

struct oci_client {
        CURL *curl;
        char *host, *repository, *username, *password;
        bool tls_verify, pull_only;
        long timeout_sec;
        const char *scheme; /* "https" or "http", decided by the ping */
        struct oci_challenge challenge;
        char *token; /* a Bearer token, once obtained */
};

/* What one request sends and receives. */
struct request {
        CURL *curl;
        const char *method;
        char url[2048];
        const char *content_type;
        const char *accept;
        /* the body: a buffer, or a file */
        const char *body;
        size_t body_len;
        int body_fd;
        uint64_t body_size;
        uint64_t body_off;
        /* the answer */
        long status;
        struct buf *reply; /* NULL: the answer's body is only kept for errors */
        int out_fd;        /* >= 0: the body goes to this file (a blob) */
        uint64_t out_max, out_len;
        gnutls_hash_hd_t out_hash;
        struct buf err;
        char www_authenticate[HEADER_MAX], location[HEADER_MAX], content_type_got[128];
        bool header_too_long;
        CURLcode cc;
        char curl_err[CURL_ERROR_SIZE];
};

int oci_client_new(const struct oci_client_config *cfg, struct oci_client **ret)
{
        struct oci_client *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->curl = curl_easy_init();
        c->host = strdup(cfg->host);
        c->repository = strdup(cfg->repository);
        c->username = cfg->username ? strdup(cfg->username) : NULL;
        c->password = cfg->password ? strdup(cfg->password) : NULL;
        c->tls_verify = cfg->tls_verify;
        c->pull_only = cfg->pull_only;
        c->timeout_sec = cfg->timeout_sec > 0 ? cfg->timeout_sec : 30;
        c->scheme = "https";
        if (!c->curl || !c->host || !c->repository || (cfg->username && !c->username) ||
            (cfg->password && !c->password)) {
                oci_client_free(c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

struct oci_client *oci_client_free(struct oci_client *c)
{
        if (!c)
                return NULL;
        if (c->curl)
                curl_easy_cleanup(c->curl);
        free(c->host);
        free(c->repository);
        free(c->username);
        if (c->password)
                explicit_bzero(c->password, strlen(c->password));
        free(c->password);
        if (c->token)
                explicit_bzero(c->token, strlen(c->token));
        free(c->token);
        oci_challenge_release(&c->challenge);
        free(c);
        return NULL;
}

void oci_sha256_digest(const void *data, size_t len, char ret[72])
{
        unsigned char md[32];

        (void)gnutls_hash_fast(GNUTLS_DIG_SHA256, data, len, md);
        (void)snprintf(ret, OCI_DIGEST_LEN, "sha256:");
        for (size_t i = 0; i < 32; i++)
                (void)snprintf(ret + 7 + 2 * i, 3, "%02x", md[i]);
}

static size_t header_cb(char *p, size_t size, size_t n, void *userdata)
{
        struct request *rq = userdata;
        size_t len = size * n, vlen;
        struct {
                const char *name;
                char *dst;
                size_t cap;
        } keep[] = {
                { "www-authenticate:", rq->www_authenticate, sizeof(rq->www_authenticate) },
                { "location:", rq->location, sizeof(rq->location) },
                { "content-type:", rq->content_type_got, sizeof(rq->content_type_got) },
        };

        if (len >= 5 && strneq(p, "HTTP/", 5)) {
                /* a new answer (after a redirect): forget the last one's */
                rq->www_authenticate[0] = rq->location[0] = rq->content_type_got[0] = '\0';
                return len;
        }
        for (size_t i = 0; i < ELEMENTSOF(keep); i++) {
                size_t nl = strlen(keep[i].name);
                const char *v;

                if (len < nl || strncasecmp(p, keep[i].name, nl) != 0)
                        continue;
                v = p + nl;
                vlen = len - nl;
                while (vlen > 0 && (*v == ' ' || *v == '\t'))
                        v++, vlen--;
                while (vlen > 0 &&
                       (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
                        vlen--;
                if (vlen >= keep[i].cap) {
                        rq->header_too_long = true;
                        return len;
                }
                if (keep[i].dst[0] && i == 0)
                        return len; /* the first challenge header; enough for us */
                memcpy(keep[i].dst, v, vlen);
                keep[i].dst[vlen] = '\0';
        }
        return len;
}

static size_t write_cb(char *p, size_t size, size_t n, void *userdata)
{
        struct request *rq = userdata;
        size_t len = size * n;

        if (rq->status == 0)
                (void)curl_easy_getinfo(rq->curl, CURLINFO_RESPONSE_CODE, &rq->status);
        if (rq->out_fd >= 0 && rq->status >= 200 && rq->status < 300) {
                size_t done = 0;

                if (rq->out_len + len > rq->out_max)
                        return 0;
                while (done < len) {
                        ssize_t w = write(rq->out_fd, p + done, len - done);

                        if (w < 0 && errno == EINTR)
                                continue;
                        if (w <= 0)
                                return 0;
                        done += (size_t)w;
                }
                (void)gnutls_hash(rq->out_hash, p, len);
                rq->out_len += len;
                return len;
        }
        if (rq->reply && rq->status >= 200 && rq->status < 300)
                return buf_write_cb(p, size, n, rq->reply);
        /* an error body: the first 64 KiB are enough to quote */
        if (rq->err.len + len < rq->err.max && buf_append(&rq->err, p, len) < 0)
                return 0;
        return len;
}

static size_t read_cb(char *p, size_t size, size_t n, void *userdata)
{
        struct request *rq = userdata;
        size_t want = size * n;

        if (rq->body_fd >= 0) {
                ssize_t r;

                if (rq->body_off >= rq->body_size)
                        return 0;
                want = (size_t)MIN((uint64_t)want, rq->body_size - rq->body_off);
                do
                        r = pread(rq->body_fd, p, want, (off_t)rq->body_off);
                while (r < 0 && errno == EINTR);
                if (r <= 0)
                        return CURL_READFUNC_ABORT;
                rq->body_off += (uint64_t)r;
                return (size_t)r;
        }
        want = MIN(want, rq->body_len - (size_t)rq->body_off);
        memcpy(p, rq->body + rq->body_off, want);
        rq->body_off += want;
        return want;
}

/* "Authorization: Basic base64(user:password)" into buf. */
static int basic_authorization(const struct oci_client *c, char *buf, size_t n)
{
        AUTOFREE char *pair = NULL, *b64 = NULL;
        int w;

        if (asprintf(&pair, "%s:%s", c->username, c->password ? c->password : "") < 0)
                return -ENOMEM;
        b64 = base64_encode(pair, strlen(pair));
        explicit_bzero(pair, strlen(pair));
        if (!b64)
                return -ENOMEM;
        w = snprintf(buf, n, "Authorization: Basic %s", b64);
        explicit_bzero(b64, strlen(b64));
        return w < 0 || (size_t)w >= n ? -ENOMEM : 0;
}

/* The Authorization header for the client's state, or "" (none yet). */
static int auth_header(struct oci_client *c, char *buf, size_t n)
{
        buf[0] = '\0';
        if (c->token) {
                if ((size_t)snprintf(buf, n, "Authorization: Bearer %s", c->token) >= n)
                        return -ENOMEM;
                return 0;
        }
        if (c->challenge.scheme != OCI_AUTH_BASIC || !c->username)
                return 0;
        return basic_authorization(c, buf, n);
}

static void setup_tls(struct oci_client *c)
{
        (void)curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYPEER, c->tls_verify ? 1L : 0L);
        (void)curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYHOST, c->tls_verify ? 2L : 0L);
}

/* One exchange (no retries, no auth dance). 0 with rq->status, or a curl failure in rq->cc. */
/* Forgets the last attempt's answer; a download file starts over. */
static int request_reset(struct request *rq)
{
        rq->status = 0;
        rq->www_authenticate[0] = rq->location[0] = rq->content_type_got[0] = '\0';
        rq->header_too_long = false;
        rq->body_off = 0;
        rq->out_len = 0;
        rq->curl_err[0] = '\0';
        buf_reset(&rq->err);
        if (rq->reply)
                buf_reset(rq->reply);
        if (rq->out_fd >= 0) {
                /* each attempt writes and hashes from the start */
                if (ftruncate(rq->out_fd, 0) < 0 || lseek(rq->out_fd, 0, SEEK_SET) < 0)
                        return -errno;
                gnutls_hash_deinit(rq->out_hash, NULL);
                if (gnutls_hash_init(&rq->out_hash, GNUTLS_DIG_SHA256) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Appends "NAME: VALUE" (value NULL or "": nothing). -ENOMEM. */
static int header_add(struct curl_slist **h, const char *name, const char *value)
{
        AUTOFREE char *line = NULL;
        struct curl_slist *t;

        if (!value || !*value)
                return 0;
        if (asprintf(&line, "%s%s", name, value) < 0)
                return -ENOMEM;
        t = curl_slist_append(*h, line);
        if (!t)
                return -ENOMEM;
        *h = t;
        return 0;
}

static int headers_build(const struct request *rq, const char *authorization,
                         struct curl_slist **ret)
{
        bool upload = rq->body || rq->body_fd >= 0;
        struct curl_slist *h = NULL;
        int r = 0;

        if (upload)
                r = header_add(&h, "Expect:", " ");
        if (r >= 0)
                r = header_add(&h, "Content-Type: ", rq->content_type);
        if (r >= 0)
                r = header_add(&h, "Accept: ", rq->accept);
        if (r >= 0)
                r = header_add(&h, "", authorization);
        if (r < 0) {
                curl_slist_free_all(h);
                return r;
        }
        *ret = h;
        return 0;
}

static void setup_body(CURL *k, struct request *rq)
{
        if (rq->body || rq->body_fd >= 0) {
                (void)curl_easy_setopt(k, CURLOPT_UPLOAD, 1L);
                (void)curl_easy_setopt(k, CURLOPT_READFUNCTION, read_cb);
                (void)curl_easy_setopt(k, CURLOPT_READDATA, rq);
                (void)curl_easy_setopt(k, CURLOPT_INFILESIZE_LARGE,
                                       (curl_off_t)(rq->body_fd >= 0 ? rq->body_size
                                                                     : rq->body_len));
        } else if (streq(rq->method, "POST")) {
                (void)curl_easy_setopt(k, CURLOPT_POSTFIELDSIZE, 0L);
                (void)curl_easy_setopt(k, CURLOPT_POSTFIELDS, "");
        }
}

/* One exchange (no retries, no auth dance). 0 with rq->status, or a curl failure in rq->cc. */
static int perform(struct oci_client *c, struct request *rq, const char *authorization)
{
        struct curl_slist *h = NULL;
        CURL *k = c->curl;
        int r;

        curl_easy_reset(k);
        rq->curl = k;
        r = request_reset(rq);
        if (r >= 0)
                r = headers_build(rq, authorization, &h);
        if (r < 0)
                return r;
        (void)curl_easy_setopt(k, CURLOPT_URL, rq->url);
        (void)curl_easy_setopt(k, CURLOPT_CUSTOMREQUEST, rq->method);
        if (streq(rq->method, "HEAD"))
                (void)curl_easy_setopt(k, CURLOPT_NOBODY, 1L);
        (void)curl_easy_setopt(k, CURLOPT_PROTOCOLS_STR, "http,https");
        (void)curl_easy_setopt(k, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        (void)curl_easy_setopt(k, CURLOPT_FOLLOWLOCATION, streq(rq->method, "GET") ? 1L : 0L);
        (void)curl_easy_setopt(k, CURLOPT_MAXREDIRS, 5L);
        (void)curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT, 10L);
        (void)curl_easy_setopt(k, CURLOPT_LOW_SPEED_LIMIT, 1L);
        (void)curl_easy_setopt(k, CURLOPT_LOW_SPEED_TIME, c->timeout_sec);
        (void)curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
        (void)curl_easy_setopt(k, CURLOPT_USERAGENT, "modelplane-async-upload");
        (void)curl_easy_setopt(k, CURLOPT_ERRORBUFFER, rq->curl_err);
        (void)curl_easy_setopt(k, CURLOPT_HEADERFUNCTION, header_cb);
        (void)curl_easy_setopt(k, CURLOPT_HEADERDATA, rq);
        (void)curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, write_cb);
        (void)curl_easy_setopt(k, CURLOPT_WRITEDATA, rq);
        setup_tls(c);
        setup_body(k, rq);
        (void)curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
        rq->cc = curl_easy_perform(k);
        (void)curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, &rq->status);
        curl_slist_free_all(h);
        return 0;
}

static int curl_errno(CURLcode cc)
{
        switch (cc) {
        case CURLE_COULDNT_CONNECT:
                return -ECONNREFUSED;
        case CURLE_COULDNT_RESOLVE_HOST:
                return -EHOSTUNREACH;
        case CURLE_OPERATION_TIMEDOUT:
                return -ETIMEDOUT;
        case CURLE_WRITE_ERROR:
                return -EBADMSG;
        default:
                return -EIO;
        }
}

static bool is_tls_error(CURLcode cc)
{
        return cc == CURLE_SSL_CONNECT_ERROR || cc == CURLE_PEER_FAILED_VERIFICATION ||
               cc == CURLE_SSL_CACERT_BADFILE || cc == CURLE_SSL_CERTPROBLEM;
}

static int transport_error(struct oci_client *c, const struct request *rq, struct error_detail *e)
{
        const char *detail = rq->curl_err[0] ? rq->curl_err : curl_easy_strerror(rq->cc);

        if (rq->cc == CURLE_PEER_FAILED_VERIFICATION || rq->cc == CURLE_SSL_CACERT_BADFILE)
                return error_detail_set(e, ERROR_UNAVAILABLE, -EIO,
                                        "the OCI registry %s: TLS certificate verification "
                                        "failed: %s (MODEL_SYNC_DESTINATION_OCI_ENABLE_TLS_VERIFY)",
                                        c->host, detail);
        if (is_tls_error(rq->cc))
                return error_detail_set(e, ERROR_UNAVAILABLE, -EIO,
                                        "the OCI registry %s: TLS failed: %s (a registry without "
                                        "TLS needs MODEL_SYNC_DESTINATION_OCI_ENABLE_TLS_VERIFY="
                                        "false)",
                                        c->host, detail);
        return error_detail_set(e, ERROR_UNAVAILABLE, curl_errno(rq->cc),
                                "cannot reach the OCI registry %s: %s", c->host, detail);
}

static int status_error(struct oci_client *c, const struct request *rq, const char *what,
                        struct error_detail *e)
{
        char msg[512];
        int r;

        oci_error_message(rq->err.p, rq->err.len, msg, sizeof(msg));
        if (rq->status == 401 || rq->status == 403)
                r = error_detail_set(e, ERROR_INVALID, -EACCES,
                                     "the OCI registry %s refused %s of %s (%ld%s%s)%s", c->host,
                                     what, c->repository, rq->status, msg[0] ? ": " : "", msg,
                                     c->username ? ": check the credentials"
                                                 : ": no credentials were given");
        else if (rq->status == 404)
                r = error_detail_set(e, ERROR_NOT_FOUND, -ENOENT,
                                     "the OCI registry %s: %s of %s not found (404%s%s)", c->host,
                                     what, c->repository, msg[0] ? ": " : "", msg);
        else
                r = error_detail_set(e, ERROR_UNAVAILABLE, -EIO,
                                     "the OCI registry %s answered %ld to %s of %s%s%s", c->host,
                                     rq->status, what, c->repository, msg[0] ? ": " : "", msg);
        if (e)
                e->status = (int)rq->status;
        return r;
}

static bool retryable(const struct request *rq)
{
        if (rq->cc != CURLE_OK)
                return !is_tls_error(rq->cc) && rq->cc != CURLE_WRITE_ERROR &&
                       rq->cc != CURLE_COULDNT_RESOLVE_HOST;
        return rq->status == 429 || rq->status >= 500;
}

static void backoff(unsigned attempt)
{
        struct timespec ts;
        long ms = RETRY_BASE_MS << MIN(attempt, 6U);

        ts.tv_sec = ms / 1000;
        ts.tv_nsec = (ms % 1000) * 1000000L;
        (void)nanosleep(&ts, NULL);
}

static void request_init(struct request *rq, const char *method)
{
        *rq = (struct request){ .method = method, .body_fd = -1, .out_fd = -1 };
        buf_init(&rq->err, OCI_ERROR_BODY_MAX);
}

/* realm?scope=repository:<repo>:pull[,push][&service=...] into url. Our own scope: the
 * challenge's names the request that drew it (a pull for a HEAD). */
static int token_url(const struct oci_client *c, char *url, size_t n)
{
        char own[512];
        char *scope, *svc = NULL;
        int w;

        (void)snprintf(own, sizeof(own), "repository:%s:%s", c->repository,
                       c->pull_only ? "pull" : "pull,push");
        scope = curl_easy_escape(NULL, own, 0);
        if (c->challenge.service)
                svc = curl_easy_escape(NULL, c->challenge.service, 0);
        if (!scope || (c->challenge.service && !svc)) {
                curl_free(scope);
                curl_free(svc);
                return -ENOMEM;
        }
        w = snprintf(url, n, "%s%sscope=%s%s%s", c->challenge.realm,
                     strchr(c->challenge.realm, '?') ? "&" : "?", scope, svc ? "&service=" : "",
                     svc ? svc : "");
        curl_free(scope);
        curl_free(svc);
        return w < 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}

/* The Bearer token for the challenge: GET realm?service=&scope= (Basic when credentials). */
static int fetch_token(struct oci_client *c, struct error_detail *e)
{
        struct request rq;
        struct buf reply = BUF_INIT(OCI_TOKEN_ANSWER_MAX);
        char authz[2048] = "";
        unsigned attempt = 0;
        int r;

        request_init(&rq, "GET");
        rq.reply = &reply;
        r = token_url(c, rq.url, sizeof(rq.url));
        if (r < 0)
                r = error_detail_set(e, ERROR_INVALID, r, "the registry's token realm is too long");
        if (r >= 0 && c->username && basic_authorization(c, authz, sizeof(authz)) < 0)
                r = error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        while (r >= 0) {
                r = perform(c, &rq, authz);
                if (r < 0 || !retryable(&rq) || ++attempt >= ATTEMPTS)
                        break;
                backoff(attempt);
        }
        explicit_bzero(authz, sizeof(authz));
        if (r >= 0 && rq.cc != CURLE_OK)
                r = transport_error(c, &rq, e);
        else if (r >= 0 && rq.status != 200)
                r = status_error(c, &rq, "a token", e);
        if (r >= 0) {
                free(c->token);
                c->token = NULL;
                r = oci_token_parse(buf_str(&reply), reply.len, &c->token, e);
        }
        buf_release(&reply);
        buf_release(&rq.err);
        return r;
}

/* After a 401: read its challenge and get what it asks for. -EACCES when it asks again. */
static int answer_challenge(struct oci_client *c, struct request *rq, bool second,
                            struct error_detail *e)
{
        int r;

        if (second || rq->header_too_long)
                return status_error(c, rq,
                                    rq->method[0] == 'G' || rq->method[0] == 'H' ? "a pull"
                                                                                 : "a push",
                                    e);
        oci_challenge_release(&c->challenge);
        r = oci_challenge_parse(rq->www_authenticate, &c->challenge, e);
        if (r < 0)
                return r;
        if (c->challenge.scheme == OCI_AUTH_BEARER)
                return fetch_token(c, e);
        if (!c->username)
                return status_error(c, rq, "access", e);
        return 0;
}

/* A request with retries and the auth dance. 0 with rq->status (any status), or the transport
 * error. */
static int request_run(struct oci_client *c, struct request *rq, struct error_detail *e)
{
        bool answered = false;
        char authz[OCI_TOKEN_MAX + 64];
        unsigned attempt = 0;
        int r;

        for (;;) {
                r = auth_header(c, authz, sizeof(authz));
                if (r < 0)
                        return error_detail_set(e, ERROR_INTERNAL, r, "out of memory");
                r = perform(c, rq, authz);
                explicit_bzero(authz, sizeof(authz));
                if (r < 0)
                        return error_detail_set(e, ERROR_INTERNAL, r,
                                                "cannot rewind the download file");
                if (rq->cc == CURLE_OK && rq->status == 401) {
                        r = answer_challenge(c, rq, answered, e);
                        if (r < 0)
                                return r;
                        answered = true; /* the challenge is not a failed attempt */
                        continue;
                }
                if (!retryable(rq) || attempt + 1 >= ATTEMPTS)
                        break;
                if (rq->cc != CURLE_OK)
                        log_warn("async-upload: %s %s: %s; retrying", rq->method, rq->url,
                                 curl_easy_strerror(rq->cc));
                else
                        log_warn("async-upload: %s %s: %ld; retrying", rq->method, rq->url,
                                 rq->status);
                backoff(attempt++);
        }
        if (rq->cc != CURLE_OK)
                return transport_error(c, rq, e);
        return 0;
}

/* "<scheme>://<host>/v2/<repository>/<what><arg>" */
static int url_set(struct oci_client *c, struct request *rq, const char *what, const char *arg,
                   struct error_detail *e)
{
        if ((size_t)snprintf(rq->url, sizeof(rq->url), "%s://%s/v2/%s/%s%s", c->scheme, c->host,
                             c->repository, what, arg ? arg : "") >= sizeof(rq->url))
                return error_detail_set(e, ERROR_INVALID, -ENAMETOOLONG,
                                        "the registry URL is longer than 2 KiB");
        return 0;
}

int oci_client_ping(struct oci_client *c, struct error_detail *e)
{
        struct request rq;
        int r;

        request_init(&rq, "GET");
        (void)snprintf(rq.url, sizeof(rq.url), "%s://%s/v2/", c->scheme, c->host);
        r = perform(c, &rq, NULL);
        if (r >= 0 && !c->tls_verify && rq.cc != CURLE_OK && is_tls_error(rq.cc)) {
                /* no TLS there: plain http, as --tls-verify=false allows */
                c->scheme = "http";
                (void)snprintf(rq.url, sizeof(rq.url), "%s://%s/v2/", c->scheme, c->host);
                r = perform(c, &rq, NULL);
        }
        if (r >= 0 && rq.cc != CURLE_OK)
                r = transport_error(c, &rq, e);
        else if (r >= 0 && rq.status == 401)
                r = answer_challenge(c, &rq, false, e);
        else if (r >= 0 && (rq.status < 200 || rq.status >= 300) && rq.status != 404)
                r = status_error(c, &rq, "the API version check", e);
        buf_release(&rq.err);
        return r;
}

int oci_blob_exists(struct oci_client *c, const char *digest, bool *ret, struct error_detail *e)
{
        struct request rq;
        int r;

        request_init(&rq, "HEAD");
        r = url_set(c, &rq, "blobs/", digest, e);
        if (r >= 0)
                r = request_run(c, &rq, e);
        if (r >= 0) {
                *ret = rq.status == 200;
                if (rq.status != 200 && rq.status != 404)
                        r = status_error(c, &rq, "a blob check", e);
        }
        buf_release(&rq.err);
        return r;
}

/* An upload's Location made absolute and given ?digest= (or &digest=). */
static int upload_url(struct oci_client *c, const char *location, const char *digest, char *out,
                      size_t n)
{
        const char *sep = strchr(location, '?') ? "&" : "?";
        int w;

        if (strneq(location, "http://", 7) || strneq(location, "https://", 8))
                w = snprintf(out, n, "%s%sdigest=%s", location, sep, digest);
        else if (location[0] == '/')
                w = snprintf(out, n, "%s://%s%s%sdigest=%s", c->scheme, c->host, location, sep,
                             digest);
        else
                return -EBADMSG;
        return w < 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}

int oci_blob_mount(struct oci_client *c, const char *digest, const char *from, bool *ret,
                   struct error_detail *e)
{
        struct request rq;
        AUTOFREE char *q = NULL;
        int r;

        *ret = false;
        request_init(&rq, "POST");
        if (asprintf(&q, "?mount=%s&from=%s", digest, from) < 0)
                r = error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        else
                r = url_set(c, &rq, "blobs/uploads/", q, e);
        if (r >= 0)
                r = request_run(c, &rq, e);
        if (r >= 0)
                *ret = rq.status == 201;
        buf_release(&rq.err);
        return r < 0 ? r : 0;
}

int oci_blob_upload(struct oci_client *c, int fd, uint64_t size, const char *digest,
                    struct error_detail *e)
{
        struct request rq;
        int r;

        request_init(&rq, "POST");
        r = url_set(c, &rq, "blobs/uploads/", NULL, e);
        if (r >= 0)
                r = request_run(c, &rq, e);
        if (r >= 0 && rq.status != 202)
                r = status_error(c, &rq, "a blob upload", e);
        if (r >= 0 &&
            (!rq.location[0] || upload_url(c, rq.location, digest, rq.url, sizeof(rq.url)) < 0))
                r = error_detail_set(e, ERROR_UNAVAILABLE, -EBADMSG,
                                     "the OCI registry %s gave no usable upload location", c->host);
        if (r >= 0) {
                rq.method = "PUT";
                rq.body_fd = fd;
                rq.body_size = size;
                rq.content_type = "application/octet-stream";
                r = request_run(c, &rq, e);
        }
        if (r >= 0 && rq.status != 201)
                r = status_error(c, &rq, "a blob upload", e);
        buf_release(&rq.err);
        return r;
}

int oci_blob_fetch(struct oci_client *c, const char *digest, uint64_t size, int fd,
                   struct error_detail *e)
{
        struct request rq;
        unsigned char md[32];
        char got[OCI_DIGEST_LEN];
        int r;

        request_init(&rq, "GET");
        rq.out_fd = fd;
        rq.out_max = size;
        if (gnutls_hash_init(&rq.out_hash, GNUTLS_DIG_SHA256) < 0) {
                buf_release(&rq.err);
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        }
        r = url_set(c, &rq, "blobs/", digest, e);
        if (r >= 0)
                r = request_run(c, &rq, e);
        gnutls_hash_deinit(rq.out_hash, md);
        if (r >= 0 && rq.status != 200)
                r = status_error(c, &rq, "a base image layer", e);
        if (r >= 0) {
                (void)snprintf(got, sizeof(got), "sha256:");
                for (size_t i = 0; i < 32; i++)
                        (void)snprintf(got + 7 + 2 * i, 3, "%02x", md[i]);
                if (rq.out_len != size || !streq(got, digest))
                        r = error_detail_set(e, ERROR_UNAVAILABLE, -EBADMSG,
                                             "the blob %s from %s is corrupt: %llu bytes with "
                                             "digest %s, expected %llu bytes",
                                             digest, c->host, (unsigned long long)rq.out_len, got,
                                             (unsigned long long)size);
        }
        buf_release(&rq.err);
        return r;
}

int oci_manifest_get(struct oci_client *c, const char *reference, struct buf *body,
                     char ret_type[128], struct error_detail *e)
{
        struct request rq;
        int r;

        request_init(&rq, "GET");
        rq.reply = body;
        rq.accept = OCI_MANIFEST_ACCEPT;
        r = url_set(c, &rq, "manifests/", reference, e);
        if (r >= 0)
                r = request_run(c, &rq, e);
        if (r >= 0 && rq.status != 200)
                r = status_error(c, &rq, "the manifest", e);
        if (r >= 0)
                (void)snprintf(ret_type, 128, "%s", rq.content_type_got);
        buf_release(&rq.err);
        return r;
}

int oci_manifest_put(struct oci_client *c, const char *reference, const char *media_type,
                     const char *body, size_t len, struct error_detail *e)
{
        struct request rq;
        int r;

        request_init(&rq, "PUT");
        rq.body = body;
        rq.body_len = len;
        rq.content_type = media_type;
        r = url_set(c, &rq, "manifests/", reference, e);
        if (r >= 0)
                r = request_run(c, &rq, e);
        if (r >= 0 && rq.status != 201 && rq.status != 200)
                r = status_error(c, &rq, "a push", e);
        buf_release(&rq.err);
        return r;
}
