/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/watch-stream.h"

#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "kube/transport.h"
#include "kube/watch.h"
#include "util/buf.h"

/* Largest error body kept from a failed watch request. */
#define KUBE_ERROR_BODY_MAX ((size_t)64 * 1024)

struct watch_state {
        struct kube_client *c;
        struct watch_splitter splitter;
        struct buf error_body; /* body of a non-2xx answer */
        kube_watch_fn fn;      /* decoded events (kube_watch), or */
        watch_line_fn line_fn; /* raw lines (kube_watch_lines) */
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
        if (w->line_fn)
                r = watch_splitter_feed(&w->splitter, data, n, w->line_fn, w->userdata);
        else
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

/* The watch URL: resource path plus the watch query. */
static int watch_url(struct kube_client *c, struct buf *url, const struct gvr *r, const char *ns,
                     const struct kube_watch_options *opts)
{
        int k;

        k = kube__build_url(c, url, r, ns, NULL, NULL);
        if (k >= 0)
                k = kube__query_add(c, url, "watch", "1");
        if (k >= 0)
                k = kube__query_add(c, url, "labelSelector", opts->label_selector);
        if (k >= 0)
                k = kube__query_add(c, url, "fieldSelector", opts->field_selector);
        if (k >= 0)
                k = kube__query_add(c, url, "resourceVersion", opts->resource_version);
        if (k >= 0 && opts->allow_bookmarks)
                k = kube__query_add(c, url, "allowWatchBookmarks", "true");
        if (k >= 0)
                k = kube__query_add_uint(c, url, "timeoutSeconds", opts->timeout_seconds);
        return k;
}

/* The handle for the stream: common options, the data and progress callbacks, Retry-After. */
static CURLcode watch_setup(struct kube_client *c, const char *url,
                            const struct curl_slist *headers, const struct kube_watch_options *opts,
                            struct watch_state *w, struct kube__response *hdr)
{
        CURLcode cc = kube__setup_handle(c, url, "GET", headers);

        KUBE_SETOPT(c->curl, CURLOPT_WRITEFUNCTION, on_watch_data);
        KUBE_SETOPT(c->curl, CURLOPT_WRITEDATA, w);
        KUBE_SETOPT(c->curl, CURLOPT_NOPROGRESS, 0L);
        KUBE_SETOPT(c->curl, CURLOPT_XFERINFOFUNCTION, on_watch_progress);
        KUBE_SETOPT(c->curl, CURLOPT_XFERINFODATA, w);
        KUBE_SETOPT(c->curl, CURLOPT_HEADERFUNCTION, kube__on_header);
        KUBE_SETOPT(c->curl, CURLOPT_HEADERDATA, hdr);
        if (opts->timeout_seconds > 0)
                /* the server ends the stream; this only catches a server that does not */
                KUBE_SETOPT(c->curl, CURLOPT_TIMEOUT_MS,
                            ((long)opts->timeout_seconds + 60L) * 1000L);
        return cc;
}

/* How a stream that libcurl finished without a transport error ended: non-2xx or 2xx. */
static int watch_answer(struct kube_client *c, struct watch_state *w,
                        const struct kube__response *hdr, struct kube_status *reterr)
{
        struct kube_status st;
        int k;

        if (w->code == 0)
                (void)curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &w->code);
        if (w->code >= 200 && w->code < 300) {
                k = watch_splitter_finish(&w->splitter);
                if (k < 0 && reterr) {
                        *reterr = (struct kube_status){ .http_code = (int)w->code };
                        (void)snprintf(reterr->message, sizeof(reterr->message),
                                       "watch stream ended inside an event line");
                }
                return k;
        }
        k = kube_status_from_response((int)w->code, w->error_body.p, w->error_body.len, &st);
        if (hdr->retry_after > 0)
                st.retry_after = hdr->retry_after;
        if (reterr)
                *reterr = st;
        return k < 0 ? k : -EIO;
}

/* Runs the transfer and maps its end (callback error, transport error, or the answer). */
static int watch_run(struct kube_client *c, struct watch_state *w, const struct kube__response *hdr,
                     struct kube_status *reterr)
{
        CURLcode cc;

        kube__limiter_wait(c);
        cc = curl_easy_perform(c->curl);
        if (c->sh->observer) {
                long obs_code = w->code;

                if (obs_code == 0 && cc == CURLE_OK)
                        (void)curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &obs_code);
                c->sh->observer(c->sh->observer_userdata, "WATCH", (int)obs_code);
        }
        if (w->error < 0)
                return w->error;
        if (cc != CURLE_OK) {
                kube__status_transport(reterr, c, cc);
                return kube__curl_to_errno(cc);
        }
        return watch_answer(c, w, hdr, reterr);
}

static void watch_state_release(struct watch_state *w)
{
        watch_splitter_release(&w->splitter);
        buf_release(&w->error_body);
}

/* kube_watch and kube_watch_lines: exactly one of fn and line_fn is set. */
static int watch_stream(struct kube_client *c, const struct gvr *r, const char *ns,
                        const struct kube_watch_options *opts, kube_watch_fn fn,
                        watch_line_fn line_fn, void *userdata, struct kube_status *reterr)
{
        static const struct kube_watch_options none = { 0 };
        struct buf url CLEANUP(buf_releasep) = BUF_INIT(KUBE_URL_MAX);
        CLEANUP(kube__slist_freep) struct curl_slist *headers = NULL;
        AUTOFREE char *token = NULL;
        CLEANUP(watch_state_release)
        struct watch_state w = {
                .c = c,
                .error_body = BUF_INIT(KUBE_ERROR_BODY_MAX),
                .fn = fn,
                .line_fn = line_fn,
                .userdata = userdata,
                .reterr = reterr,
        };
        struct kube__response hdr = { .body = BUF_INIT(1) }; /* headers only: Retry-After */
        CURLcode cc;
        int k;

        if (!c || (!fn && !line_fn))
                return -EINVAL;
        if (!opts)
                opts = &none;
        w.cancel = opts->cancel;
        if (reterr)
                *reterr = (struct kube_status){ 0 };

        k = watch_url(c, &url, r, ns, opts);
        if (k >= 0)
                k = kube__client_token(c, false, &token);
        if (k >= 0)
                k = kube__make_headers(NULL, token, true, c->impersonate, &headers);
        if (k < 0)
                return k;
        if (opts->cancel && atomic_load(opts->cancel))
                return -ECANCELED;

        watch_splitter_init(&w.splitter, WATCH_LINE_MAX);
        cc = watch_setup(c, buf_str(&url), headers, opts, &w, &hdr);
        if (cc != CURLE_OK) {
                kube__status_transport(reterr, c, cc);
                return kube__curl_to_errno(cc);
        }

        k = watch_run(c, &w, &hdr, reterr);
        if (k == -ECANCELED && reterr)
                kube__status_local(reterr, "watch cancelled");
        return k;
}

int kube_watch(struct kube_client *c, const struct gvr *r, const char *ns,
               const struct kube_watch_options *opts, kube_watch_fn fn, void *userdata,
               struct kube_status *reterr)
{
        if (!fn)
                return -EINVAL;
        return watch_stream(c, r, ns, opts, fn, NULL, userdata, reterr);
}

int kube_watch_lines(struct kube_client *c, const struct gvr *r, const char *ns,
                     const struct kube_watch_options *opts, watch_line_fn fn, void *userdata,
                     struct kube_status *reterr)
{
        if (!fn)
                return -EINVAL;
        return watch_stream(c, r, ns, opts, NULL, fn, userdata, reterr);
}
