/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The request engine under the Kubernetes client (client.h): internal to src/kube/, shared by
 * client.c (lifecycle, verbs), transport.c (this engine) and watch-stream.c (kube_watch). Nothing
 * outside src/kube/ includes this header; the struct bodies below are private to those three files.
 *
 * transport.c owns one libcurl easy-handle request: the client-side rate limit, the bearer token
 * (re-read from a rotating file), headers, the handle options common to every request, the
 * response callbacks, and the mapping of a CURLcode to a negative errno and a struct kube_status.
 * kube__perform() is one complete non-watch request with its retries (401 after rotation, 429/503
 * with Retry-After).
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/stat.h>

#include <curl/curl.h>
#include <jansson.h>

#include "kube/bucket.h"
#include "kube/client.h"
#include "util/buf.h"

/* Longest request URL (path + query; selectors can be long). */
#define KUBE_URL_MAX ((size_t)64 * 1024)

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

/* Keeps the first failure in *cc. */
static inline void kube__cc_keep(CURLcode *cc, CURLcode r)
{
        if (*cc == CURLE_OK)
                *cc = r;
}

/*
 * curl_easy_setopt() into the local CURLcode cc: the first failure sticks (later options are
 * still set, harmlessly; the caller gives up on the handle). A plain call, so that curl's
 * compile-time option type checks still apply.
 */
#define KUBE_SETOPT(h, opt, val) kube__cc_keep(&cc, curl_easy_setopt((h), (opt), (val)))

/* What the header callback keeps of an answer (and the body, for non-watch requests). */
struct kube__response {
        struct buf body;
        unsigned retry_after;
        int cb_error; /* set by callbacks; wins over the CURLcode */
};

/* Zeroes a secret, then frees it. Accepts NULL. */
void kube__wipe_free(char *s);
/* Cleanup helper for CLEANUP(): frees the list (accepts a NULL list). */
void kube__slist_freep(struct curl_slist **l);

/* Sleeps u microseconds (restarted on EINTR). */
void kube__sleep_usec(usec_t u);
/* Waits for a token of the client's budget (its own or the one shared by its clones). */
void kube__limiter_wait(struct kube_client *c);
/* The token of this request: the identity's bearer token, else the shared one (re-read from the
 * token file when it changed, or always when force is set). *ret: owned, NULL when none. */
_warn_unused_result_ int kube__client_token(struct kube_client *c, bool force, char **ret);

/* Appends "?key=value" or "&key=value" (value URL-escaped). NULL value: nothing. */
_warn_unused_result_ int kube__query_add(struct kube_client *c, struct buf *url, const char *key,
                                         const char *value);
/* The same for an unsigned value; 0: nothing. */
_warn_unused_result_ int kube__query_add_uint(struct kube_client *c, struct buf *url,
                                              const char *key, unsigned v);
/* Builds server + resource path into url. */
_warn_unused_result_ int kube__build_url(struct kube_client *c, struct buf *url,
                                         const struct gvr *r, const char *ns, const char *name,
                                         const char *subresource);

/* Builds the request headers: Accept, Content-Type (when set), Authorization (when a token is
 * given; -EINVAL on control characters), then the extra lines. *ret: owned. */
_warn_unused_result_ int kube__make_headers(const char *content_type, const char *token,
                                            bool json_accept, const struct curl_slist *extra,
                                            struct curl_slist **ret);
/* Resets the handle and applies everything common to all requests (headers: borrowed). */
CURLcode kube__setup_handle(struct kube_client *c, const char *url, const char *method,
                            const struct curl_slist *headers);
/* libcurl header callback (userdata: struct kube__response): keeps Retry-After. */
size_t kube__on_header(char *data, size_t size, size_t nmemb, void *userdata);

/* Negative errno of a transport outcome (CURLE_OK: 0). */
int kube__curl_to_errno(CURLcode cc);
/* Fills *reterr (may be NULL) with a transport failure: the server and libcurl's message. */
void kube__status_transport(struct kube_status *reterr, struct kube_client *c, CURLcode cc);
/* Fills *reterr (may be NULL) with a local failure message and no HTTP code. */
void kube__status_local(struct kube_status *reterr, const char *msg);

/*
 * One non-watch request: rate limit, send, collect the body, map the outcome. Retries once with
 * a freshly read token after a 401 when the token comes from a file (rotation), and up to the
 * client's throttle budget after a 429 / 503 with Retry-After. body: borrowed, NUL-terminated,
 * may be NULL. *ret_obj: new reference (an empty object for an empty 2xx body), may be NULL.
 */
_warn_unused_result_ int kube__perform(struct kube_client *c, const char *method, const char *url,
                                       const char *content_type, const char *body, json_t **ret_obj,
                                       struct kube_status *reterr);
