/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/transport.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "json/json-util.h"
#include "util/parse-util.h"
#include "util/string-util.h"

/* Largest non-watch response body we accept (a big unpaged LIST). */
#define KUBE_RESPONSE_MAX ((size_t)256 * 1024 * 1024)
/* Longest bearer token. */
#define KUBE_TOKEN_MAX          ((size_t)64 * 1024)
#define KUBE_CONNECT_TIMEOUT_MS 10000L

void kube__wipe_free(char *s)
{
        if (s)
                explicit_bzero(s, strlen(s));
        free(s);
}

/* ---- rate limiter: a token bucket shared by clones (client-go's flowcontrol) ---- */

void kube__sleep_usec(usec_t u)
{
        struct timespec ts = { .tv_sec = (time_t)(u / USEC_PER_SEC),
                               .tv_nsec = (long)((u % USEC_PER_SEC) * NSEC_PER_USEC) };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

void kube__limiter_wait(struct kube_client *c)
{
        struct kube_shared *sh = c->sh;
        usec_t delay;

        if (c->own_budget) {
                if (c->own_limited) {
                        delay = token_bucket_reserve(&c->own_bucket, now_monotonic());
                        if (delay > 0)
                                kube__sleep_usec(delay);
                }
                return;
        }
        if (!sh->limited)
                return;
        (void)pthread_mutex_lock(&sh->limiter_lock);
        delay = token_bucket_reserve(&sh->bucket, now_monotonic());
        (void)pthread_mutex_unlock(&sh->limiter_lock);
        if (delay > 0)
                kube__sleep_usec(delay);
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
                        kube__wipe_free(sh->token);
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
int kube__client_token(struct kube_client *c, bool force, char **ret)
{
        if (c->bearer) {
                *ret = strdup(c->bearer);
                return *ret ? 0 : -ENOMEM;
        }
        return current_token(c->sh, force, ret);
}

/* Appends "?key=value" or "&key=value" (value URL-escaped). NULL value: nothing. */
int kube__query_add(struct kube_client *c, struct buf *url, const char *key, const char *value)
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

int kube__query_add_uint(struct kube_client *c, struct buf *url, const char *key, unsigned v)
{
        char s[16];

        if (v == 0)
                return 0;
        (void)snprintf(s, sizeof(s), "%u", v);
        return kube__query_add(c, url, key, s);
}

/* Builds server + resource path into url. */
int kube__build_url(struct kube_client *c, struct buf *url, const struct gvr *r, const char *ns,
                    const char *name, const char *subresource)
{
        char path[2048];
        int k;

        k = kube_resource_path(r, ns, name, subresource, path, sizeof(path));
        if (k < 0)
                return k;
        return buf_printf(url, "%s%s", c->sh->server, path);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
        struct kube__response *resp = userdata;
        size_t n = size * nmemb;
        int r;

        r = buf_append(&resp->body, data, n);
        if (r < 0) {
                resp->cb_error = r == -E2BIG ? -EFBIG : r;
                return 0;
        }
        return n;
}

size_t kube__on_header(char *data, size_t size, size_t nmemb, void *userdata)
{
        struct kube__response *resp = userdata;
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

int kube__curl_to_errno(CURLcode cc)
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

void kube__status_transport(struct kube_status *reterr, struct kube_client *c, CURLcode cc)
{
        if (!reterr)
                return;
        *reterr = (struct kube_status){ 0 };
        (void)snprintf(reterr->message, sizeof(reterr->message), "%s: %s", c->sh->server,
                       c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc));
}

void kube__status_local(struct kube_status *reterr, const char *msg)
{
        if (!reterr)
                return;
        *reterr = (struct kube_status){ 0 };
        (void)snprintf(reterr->message, sizeof(reterr->message), "%s", msg);
}

void kube__slist_freep(struct curl_slist **l)
{
        if (*l)
                curl_slist_free_all(*l);
}

/* Resets the handle and applies everything common to all requests. */
CURLcode kube__setup_handle(struct kube_client *c, const char *url, const char *method,
                            const struct curl_slist *headers)
{
        struct kube_shared *sh = c->sh;
        CURL *h = c->curl;
        CURLcode cc = CURLE_OK;

        curl_easy_reset(h);
        c->errbuf[0] = '\0';
        KUBE_SETOPT(h, CURLOPT_URL, url);
        KUBE_SETOPT(h, CURLOPT_SHARE, sh->share);
        KUBE_SETOPT(h, CURLOPT_NOSIGNAL, 1L);
        KUBE_SETOPT(h, CURLOPT_ERRORBUFFER, c->errbuf);
        KUBE_SETOPT(h, CURLOPT_USERAGENT, sh->user_agent);
        KUBE_SETOPT(h, CURLOPT_PROTOCOLS_STR, "http,https");
        KUBE_SETOPT(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        KUBE_SETOPT(h, CURLOPT_CONNECTTIMEOUT_MS, KUBE_CONNECT_TIMEOUT_MS);
        KUBE_SETOPT(h, CURLOPT_TCP_KEEPALIVE, 1L);
        KUBE_SETOPT(h, CURLOPT_TCP_KEEPIDLE, 30L);
        KUBE_SETOPT(h, CURLOPT_TCP_KEEPINTVL, 10L);
        KUBE_SETOPT(h, CURLOPT_HTTPHEADER, headers);
        if (streq(method, "GET"))
                KUBE_SETOPT(h, CURLOPT_HTTPGET, 1L);
        else
                KUBE_SETOPT(h, CURLOPT_CUSTOMREQUEST, method);

        if (sh->ca_pem) {
                struct curl_blob blob = { .data = sh->ca_pem,
                                          .len = strlen(sh->ca_pem),
                                          .flags = CURL_BLOB_COPY };

                KUBE_SETOPT(h, CURLOPT_CAINFO_BLOB, &blob);
        }
        if (sh->client_cert_pem && sh->client_key_pem) {
                struct curl_blob cert = { .data = sh->client_cert_pem,
                                          .len = strlen(sh->client_cert_pem),
                                          .flags = CURL_BLOB_COPY };
                struct curl_blob key = { .data = sh->client_key_pem,
                                         .len = strlen(sh->client_key_pem),
                                         .flags = CURL_BLOB_COPY };

                KUBE_SETOPT(h, CURLOPT_SSLCERTTYPE, "PEM");
                KUBE_SETOPT(h, CURLOPT_SSLCERT_BLOB, &cert);
                KUBE_SETOPT(h, CURLOPT_SSLKEYTYPE, "PEM");
                KUBE_SETOPT(h, CURLOPT_SSLKEY_BLOB, &key);
        }
        if (sh->insecure) {
                KUBE_SETOPT(h, CURLOPT_SSL_VERIFYPEER, 0L);
                KUBE_SETOPT(h, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        return cc;
}

int kube__make_headers(const char *content_type, const char *token, bool json_accept,
                       const struct curl_slist *extra, struct curl_slist **ret)
{
        CLEANUP(kube__slist_freep) struct curl_slist *l = NULL;
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

static void response_release(struct kube__response *resp)
{
        buf_release(&resp->body);
}

/* The options of one non-watch request on top of kube__setup_handle(). */
static CURLcode setup_request(struct kube_client *c, const char *url, const char *method,
                              const struct curl_slist *headers, const char *body,
                              struct kube__response *resp)
{
        CURLcode cc = kube__setup_handle(c, url, method, headers);

        KUBE_SETOPT(c->curl, CURLOPT_WRITEFUNCTION, on_body);
        KUBE_SETOPT(c->curl, CURLOPT_WRITEDATA, resp);
        KUBE_SETOPT(c->curl, CURLOPT_HEADERFUNCTION, kube__on_header);
        KUBE_SETOPT(c->curl, CURLOPT_HEADERDATA, resp);
        KUBE_SETOPT(c->curl, CURLOPT_TIMEOUT_MS, (long)(c->sh->timeout / USEC_PER_MSEC));
        /* the apiserver gzips large responses (LISTs) when asked */
        KUBE_SETOPT(c->curl, CURLOPT_ACCEPT_ENCODING, "gzip");
        if (body) {
                KUBE_SETOPT(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
                KUBE_SETOPT(c->curl, CURLOPT_POSTFIELDS, body);
        }
        return cc;
}

/* Tells the observer (if any) about one finished request: method and HTTP status (0: none). */
static void observe(struct kube_client *c, const char *method, CURLcode cc)
{
        long code = 0;

        if (!c->sh->observer)
                return;
        if (cc == CURLE_OK)
                (void)curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
        c->sh->observer(c->sh->observer_userdata, method, (int)code);
}

/* Sends one attempt and collects the answer into resp; *ret_code is its HTTP status. */
static int perform_once(struct kube_client *c, const char *method, const char *url,
                        const char *content_type, const char *body, bool force_token,
                        struct kube__response *resp, long *ret_code, struct kube_status *reterr)
{
        CLEANUP(kube__slist_freep) struct curl_slist *headers = NULL;
        AUTOFREE char *token = NULL;
        CURLcode cc;
        int r;

        r = kube__client_token(c, force_token, &token);
        if (r < 0)
                return r;
        r = kube__make_headers(body ? content_type : NULL, token, true, c->impersonate, &headers);
        if (token)
                explicit_bzero(token, strlen(token));
        if (r < 0)
                return r;

        cc = setup_request(c, url, method, headers, body, resp);
        if (cc != CURLE_OK) {
                kube__status_transport(reterr, c, cc);
                r = kube__curl_to_errno(cc);
                return r == -EIO ? -EINVAL : r;
        }

        kube__limiter_wait(c);
        cc = curl_easy_perform(c->curl);
        observe(c, method, cc);
        if (resp->cb_error < 0) {
                kube__status_local(reterr, resp->cb_error == -EFBIG ? "response body too large"
                                                                    : "out of memory");
                return resp->cb_error;
        }
        if (cc != CURLE_OK) {
                kube__status_transport(reterr, c, cc);
                return kube__curl_to_errno(cc);
        }
        (void)curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, ret_code);
        return 0;
}

/* A 429 / 503 with Retry-After: counts it; while the retry budget lasts, waits and says "resend". */
static bool throttle_again(struct kube_client *c, long code, const struct kube__response *resp,
                           unsigned *throttled)
{
        if (!kube_throttle_is_retryable((int)code, resp->retry_after))
                return false;
        atomic_fetch_add(&c->sh->throttled, 1);
        if (*throttled >= c->sh->throttle_retries) {
                atomic_fetch_add(&c->sh->throttle_exhausted, 1);
                return false;
        }
        kube__sleep_usec(
                kube_throttle_delay(resp->retry_after, *throttled, c->sh->throttle_wait_max));
        (*throttled)++;
        return true;
}

/* A non-2xx answer: its Status decoded into *reterr, and its errno (-EIO when none fits). */
static int answer_error(long code, const struct kube__response *resp, struct kube_status *reterr)
{
        struct kube_status st;
        int r;

        r = kube_status_from_response((int)code, resp->body.p, resp->body.len, &st);
        if (st.retry_after == 0 || resp->retry_after > 0)
                st.retry_after = resp->retry_after;
        if (reterr)
                *reterr = st;
        return r < 0 ? r : -EIO;
}

/* A 2xx answer: its body parsed into *ret_obj (an empty object when there is none). */
static int answer_decode(long code, const struct kube__response *resp, json_t **ret_obj,
                         struct kube_status *reterr)
{
        if (ret_obj) {
                json_t *obj = NULL;
                struct error_detail e = { 0 };
                int r;

                if (resp->body.len == 0)
                        obj = json_object();
                else {
                        r = json_parse_bounded_flags(resp->body.p, resp->body.len,
                                                     JSON_PARSE_ALLOW_NUL, &obj, &e);
                        if (r < 0) {
                                if (reterr) {
                                        *reterr = (struct kube_status){ .http_code = (int)code };
                                        (void)snprintf(reterr->message, sizeof(reterr->message),
                                                       "invalid JSON in response: %.255s",
                                                       e.message);
                                }
                                return -EBADMSG;
                        }
                }
                if (!obj)
                        return -ENOMEM;
                *ret_obj = obj;
        }
        if (reterr)
                *reterr = (struct kube_status){ .http_code = (int)code };
        return 0;
}

int kube__perform(struct kube_client *c, const char *method, const char *url,
                  const char *content_type, const char *body, json_t **ret_obj,
                  struct kube_status *reterr)
{
        unsigned throttled = 0;

        for (unsigned attempt = 0;; attempt++) {
                CLEANUP(response_release)
                struct kube__response resp = { .body = BUF_INIT(KUBE_RESPONSE_MAX) };
                long code = 0;
                int r;

                r = perform_once(c, method, url, content_type, body, attempt > throttled, &resp,
                                 &code, reterr);
                if (r < 0)
                        return r;
                /* a 401 with a token file: re-read the (rotated) token once and resend */
                if (code == 401 && attempt == throttled && c->sh->token_file && !c->bearer)
                        continue;
                if (throttle_again(c, code, &resp, &throttled))
                        continue;
                if (code < 200 || code >= 300)
                        return answer_error(code, &resp, reterr);
                return answer_decode(code, &resp, ret_obj, reterr);
        }
}
