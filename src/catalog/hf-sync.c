/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/hf-sync.h"

#include <curl/curl.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "catalog/glob.h"
#include "catalog/limits.h"
#include "util/buf.h"
#include "util/parse-util.h"

#define HF_USER_AGENT   "model-registry-catalog"
#define HF_ERROR_MAX    2048U
#define HF_BODY_EXCERPT 200

void catalog_hf_result_release(struct catalog_hf_result *r)
{
        catalog_models_unref(r->data);
        free(r->error);
        *r = (struct catalog_hf_result){ 0 };
}

struct hf_client {
        const struct catalog_hf_config *cfg;
        struct catalog_hf_opts opts;
        CURL *curl;
};

struct hf_response {
        long status;
        struct buf body;
        char *link;        /* owned; the Link header */
        char *retry_after; /* owned */
};

static void hf_response_release(struct hf_response *r)
{
        buf_release(&r->body);
        free(r->link);
        free(r->retry_after);
        *r = (struct hf_response){ 0 };
}

static bool cancelled(const struct hf_client *cl)
{
        return cl->opts.cancel && atomic_load(cl->opts.cancel);
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
        struct buf *b = ud;

        return buf_append(b, p, size * n) < 0 ? 0 : size * n;
}

/* Keeps the value of header name (case-insensitive) in *slot. */
static void keep_header(const char *line, size_t len, const char *name, char **slot)
{
        size_t nl = strlen(name);

        if (len <= nl + 1 || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
                return;
        line += nl + 1;
        len -= nl + 1;
        while (len > 0 && (*line == ' ' || *line == '\t')) {
                line++;
                len--;
        }
        while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n' || line[len - 1] == ' '))
                len--;
        free(*slot);
        *slot = strndup(line, len);
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
        struct hf_response *r = ud;

        /* a new status line (redirects, 100-continue) starts a new set of headers */
        if (size * n > 5 && strneq(p, "HTTP/", 5)) {
                free(r->link);
                free(r->retry_after);
                r->link = r->retry_after = NULL;
        }
        keep_header(p, size * n, "Link", &r->link);
        keep_header(p, size * n, "Retry-After", &r->retry_after);
        return size * n;
}

static int on_progress(void *ud, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
        (void)dlt, (void)dln, (void)ult, (void)uln;
        return cancelled(ud) ? 1 : 0;
}

/* Sleeps t, waking every 50 ms to look at the cancel flag. -ECANCELED. */
static int sleep_cancellable(const struct hf_client *cl, usec_t t)
{
        usec_t end = now_monotonic() + t;

        while (now_monotonic() < end) {
                usec_t left = end - now_monotonic();
                struct timespec ts;

                if (cancelled(cl))
                        return -ECANCELED;
                left = MIN(left, 50 * USEC_PER_MSEC);
                ts.tv_sec = (time_t)(left / USEC_PER_SEC);
                ts.tv_nsec = (long)((left % USEC_PER_SEC) * 1000);
                nanosleep(&ts, NULL);
        }
        return cancelled(cl) ? -ECANCELED : 0;
}

/* Retry-After: delta-seconds or an HTTP date. -EINVAL when neither. */
static int parse_retry_after(const char *s, usec_t *ret)
{
        uint64_t secs;
        time_t when;

        if (!s || !*s)
                return -EINVAL;
        if (safe_atou64(s, &secs) == 0) {
                *ret = secs > UINT32_MAX ? USEC_INFINITY : secs * USEC_PER_SEC;
                return 0;
        }
        when = curl_getdate(s, NULL);
        if (when < 0)
                return -EINVAL;
        *ret = when <= time(NULL) ? 0 : (usec_t)(when - time(NULL)) * USEC_PER_SEC;
        return 0;
}

/*
 * GET url with the key (if any). Transport errors: -EIO with a message in err. An HTTP status
 * is no error here; a 429 with a usable Retry-After is retried.
 */
static int hf_get(struct hf_client *cl, const char *url, size_t body_max, struct hf_response *ret,
                  char *err, size_t n_err)
{
        AUTOFREE char *auth = NULL;
        struct curl_slist *h = NULL;
        int r = 0;

        if (cl->cfg->api_key && asprintf(&auth, "Authorization: Bearer %s", cl->cfg->api_key) < 0)
                return -ENOMEM;
        if (auth) {
                h = curl_slist_append(NULL, auth);
                if (!h)
                        return -ENOMEM;
        }
        for (unsigned attempt = 0;; attempt++) {
                CURLcode cc;
                usec_t wait;

                hf_response_release(ret);
                ret->body = BUF_INIT(body_max);
                curl_easy_reset(cl->curl);
                curl_easy_setopt(cl->curl, CURLOPT_URL, url);
                curl_easy_setopt(cl->curl, CURLOPT_USERAGENT, HF_USER_AGENT);
                curl_easy_setopt(cl->curl, CURLOPT_HTTPHEADER, h);
                curl_easy_setopt(cl->curl, CURLOPT_WRITEFUNCTION, on_body);
                curl_easy_setopt(cl->curl, CURLOPT_WRITEDATA, &ret->body);
                curl_easy_setopt(cl->curl, CURLOPT_HEADERFUNCTION, on_header);
                curl_easy_setopt(cl->curl, CURLOPT_HEADERDATA, ret);
                curl_easy_setopt(cl->curl, CURLOPT_NOPROGRESS, 0L);
                curl_easy_setopt(cl->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
                curl_easy_setopt(cl->curl, CURLOPT_XFERINFODATA, cl);
                curl_easy_setopt(cl->curl, CURLOPT_NOSIGNAL, 1L);
                curl_easy_setopt(cl->curl, CURLOPT_FOLLOWLOCATION, 1L);
                curl_easy_setopt(cl->curl, CURLOPT_MAXREDIRS, 5L);
                curl_easy_setopt(cl->curl, CURLOPT_PROTOCOLS_STR, "http,https");
                curl_easy_setopt(cl->curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
                curl_easy_setopt(cl->curl, CURLOPT_TIMEOUT_MS,
                                 (long)(cl->opts.timeout / USEC_PER_MSEC));
                curl_easy_setopt(cl->curl, CURLOPT_CONNECTTIMEOUT_MS,
                                 (long)(cl->opts.connect_timeout / USEC_PER_MSEC));
                cc = curl_easy_perform(cl->curl);
                if (cancelled(cl)) {
                        r = -ECANCELED;
                        break;
                }
                if (cc == CURLE_WRITE_ERROR) {
                        snprintf(err, n_err, "response larger than %zu bytes", body_max);
                        r = -EIO;
                        break;
                }
                if (cc != CURLE_OK) {
                        snprintf(err, n_err, "%s", curl_easy_strerror(cc));
                        r = -EIO;
                        break;
                }
                curl_easy_getinfo(cl->curl, CURLINFO_RESPONSE_CODE, &ret->status);
                if (ret->status != 429 || attempt >= cl->opts.retries ||
                    parse_retry_after(ret->retry_after, &wait) < 0 ||
                    wait > cl->opts.retry_wait_max)
                        break;
                r = sleep_cancellable(cl, wait);
                if (r < 0)
                        break;
        }
        curl_slist_free_all(h);
        return r;
}

/* "<status>[ (Retry-After v)]: <body excerpt>" for error messages. */
static void status_text(const struct hf_response *resp, char *buf, size_t n)
{
        const char *b = buf_str(&resp->body);
        int len = (int)MIN(strcspn(b, "\r\n"), (size_t)HF_BODY_EXCERPT);

        if (resp->retry_after)
                snprintf(buf, n, "%ld (Retry-After %s): %.*s", resp->status, resp->retry_after, len,
                         b);
        else
                snprintf(buf, n, "%ld: %.*s", resp->status, len, b);
}

/* Appends printf text to the growing error message (bounded). */
static int err_append(struct buf *e, const char *fmt, ...) _printf_(2, 3);
static int err_append(struct buf *e, const char *fmt, ...)
{
        char tmp[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(tmp, sizeof(tmp), fmt, ap);
        va_end(ap);
        if (e->len + strlen(tmp) >= HF_ERROR_MAX)
                return 0;
        return buf_puts(e, tmp);
}

/* Escapes s for a URL path, keeping '/' (repository ids are "org/name"). */
static char *path_escape(const char *s)
{
        struct buf b = BUF_INIT(8192);
        static const char hex[] = "0123456789ABCDEF";

        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                int r = isalnum(c) || strchr("-._~/", c)
                                ? buf_putc(&b, (char)c)
                                : buf_printf(&b, "%%%c%c", hex[c >> 4], hex[c & 15]);

                if (r < 0) {
                        buf_release(&b);
                        return NULL;
                }
        }
        return buf_take(&b, NULL);
}

static int validate_credentials(struct hf_client *cl, char *err, size_t n_err)
{
        struct hf_response resp = { 0 };
        AUTOFREE char *url = NULL;
        char cause[512], st[512];
        int r;

        if (asprintf(&url, "%s/api/whoami-v2", cl->cfg->base_url) < 0)
                return -ENOMEM;
        r = hf_get(cl, url, CATALOG_HF_BODY_MAX, &resp, cause, sizeof(cause));
        if (r == -EIO)
                snprintf(err, n_err,
                         "failed to validate Hugging Face catalog credentials: failed to validate "
                         "Hugging Face credentials: %s",
                         cause);
        else if (r >= 0 && (resp.status == 401 || resp.status == 403)) {
                snprintf(err, n_err,
                         "failed to validate Hugging Face catalog credentials: invalid Hugging "
                         "Face API credentials (status %ld)",
                         resp.status);
                r = -EIO;
        } else if (r >= 0 && resp.status != 200) {
                status_text(&resp, st, sizeof(st));
                snprintf(err, n_err,
                         "failed to validate Hugging Face catalog credentials: Hugging Face API "
                         "validation failed with status: %s",
                         st);
                r = -EIO;
        }
        hf_response_release(&resp);
        return r;
}

/* Appends the names of one wildcard pattern to *names (strv, n). -EIO with err on failure. */
static int list_by_author(struct hf_client *cl, const char *org, const char *prefix, char ***names,
                          size_t *n, char *err, size_t n_err)
{
        AUTOFREE char *cursor = NULL, *e_org = curl_easy_escape(cl->curl, org, 0),
                      *e_prefix = prefix ? curl_easy_escape(cl->curl, prefix, 0) : NULL;
        size_t got = 0;
        int r = 0;

        if (!e_org || (prefix && !e_prefix))
                return -ENOMEM;
        for (unsigned page = 0; page < CATALOG_HF_PAGES_MAX; page++) {
                struct hf_response resp = { 0 };
                AUTOFREE char *url = NULL;
                json_auto_t *arr = NULL;
                json_error_t je;
                char cause[512];
                size_t i, page_n;
                json_t *m;

                if (cl->cfg->max_models > 0 && got >= cl->cfg->max_models)
                        break;
                if (asprintf(&url, "%s/api/models?author=%s&limit=%d%s%s%s%s", cl->cfg->base_url,
                             e_org, CATALOG_HF_LIST_LIMIT, e_prefix ? "&search=" : "",
                             e_prefix ? e_prefix : "", cursor ? "&cursor=" : "",
                             cursor ? cursor : "") < 0)
                        return -ENOMEM;
                r = hf_get(cl, url, CATALOG_HF_BODY_MAX, &resp, cause, sizeof(cause));
                if (r == -EIO)
                        snprintf(err, n_err, "failed to list models for author %s: %s", org, cause);
                if (r < 0) {
                        hf_response_release(&resp);
                        return r;
                }
                if (resp.status != 200) {
                        char st[512];

                        status_text(&resp, st, sizeof(st));
                        snprintf(err, n_err, "Hugging Face API returned status %s for author %s",
                                 st, org);
                        hf_response_release(&resp);
                        return -EIO;
                }
                arr = json_loadb(buf_str(&resp.body), resp.body.len, 0, &je);
                if (!json_is_array(arr)) {
                        snprintf(err, n_err, "failed to decode models list for author %s: %s", org,
                                 arr ? "not a JSON array" : je.text);
                        hf_response_release(&resp);
                        return -EIO;
                }
                page_n = json_array_size(arr);
                json_array_foreach(arr, i, m) {
                        const char *id = json_string_value(json_object_get(m, "id"));
                        const char *slash;
                        char **nv;

                        if (cl->cfg->max_models > 0 && got >= cl->cfg->max_models)
                                break;
                        if (!id || !id[0])
                                id = json_string_value(json_object_get(m, "modelId"));
                        if (!id || !id[0])
                                continue;
                        /* the hub's search is fuzzy: keep names that start with the prefix */
                        slash = strchr(id, '/');
                        if (prefix && slash && strncasecmp(slash + 1, prefix, strlen(prefix)) != 0)
                                continue;
                        if (*n >= CATALOG_MODELS_PER_SOURCE_MAX)
                                break;
                        nv = reallocarray(*names, *n + 2, sizeof(*nv));
                        if (!nv) {
                                hf_response_release(&resp);
                                return -ENOMEM;
                        }
                        *names = nv;
                        nv[*n] = strdup(id);
                        if (!nv[*n]) {
                                hf_response_release(&resp);
                                return -ENOMEM;
                        }
                        nv[++*n] = NULL;
                        got++;
                }
                free(cursor);
                cursor = NULL;
                r = catalog_hf_link_next_cursor(resp.link, &cursor);
                hf_response_release(&resp);
                if (r < 0)
                        return r;
                if (!cursor || page_n < CATALOG_HF_LIST_LIMIT)
                        break;
        }
        return 0;
}

static int strv_push(char ***v, size_t *n, const char *s)
{
        char **nv = reallocarray(*v, *n + 2, sizeof(*nv));

        if (!nv)
                return -ENOMEM;
        *v = nv;
        nv[*n] = strdup(s);
        if (!nv[*n])
                return -ENOMEM;
        nv[++*n] = NULL;
        return 0;
}

/* upstream's message for "*", "*\/x" and patterns without an organization; -EIO */
static int unsupported_pattern(const char *p, char *err, size_t n_err)
{
        snprintf(err, n_err,
                 "wildcard pattern \"%s\" is not supported - Hugging Face requires a specific "
                 "organization (e.g., 'ibm-granite/*' or 'meta-llama/Llama-2-*')",
                 p);
        return -EIO;
}

/*
 * Step 2: the concrete names. Returns -EIO with err when a pattern is unsupported or when
 * wildcard patterns found nothing at all.
 */
static int expand_names(struct hf_client *cl, char ***ret, char *err, size_t n_err)
{
        CLEANUP(catalog_strv_freep) char **names = NULL, **failed = NULL;
        struct buf causes = BUF_INIT(HF_ERROR_MAX);
        size_t n = 0, n_failed = 0, n_wild = 0;
        int r = 0;

        names = calloc(1, sizeof(*names));
        failed = calloc(1, sizeof(*failed));
        if (!names || !failed)
                return -ENOMEM;
        for (char **p = cl->cfg->included; p && *p && r >= 0; p++) {
                AUTOFREE char *org = NULL, *prefix = NULL;
                enum catalog_hf_pattern type;
                char cause[768];

                r = catalog_hf_pattern_parse(*p, &type, &org, &prefix);
                if (r < 0)
                        break;
                switch (type) {
                case CATALOG_HF_PATTERN_INVALID:
                        r = unsupported_pattern(*p, err, n_err);
                        break;
                case CATALOG_HF_PATTERN_ORG_ALL:
                case CATALOG_HF_PATTERN_ORG_PREFIX:
                        n_wild++;
                        r = list_by_author(cl, org, prefix, &names, &n, cause, sizeof(cause));
                        if (r == -EIO) {
                                r = strv_push(&failed, &n_failed, *p);
                                if (r >= 0)
                                        r = err_append(&causes, "; %s: %s", *p, cause);
                        }
                        break;
                case CATALOG_HF_PATTERN_EXACT:
                        r = strv_push(&names, &n, *p);
                        break;
                }
        }
        if (r >= 0 && n_wild > 0 && n == 0) {
                struct buf list = BUF_INIT(HF_ERROR_MAX);

                for (size_t i = 0; i < n_failed && r >= 0; i++)
                        r = err_append(&list, "%s%s", i ? " " : "", failed[i]);
                snprintf(err, n_err, "no models found%s%s%s%s", n_failed ? ": [" : "",
                         n_failed ? buf_str(&list) : "", n_failed ? "]" : "", buf_str(&causes));
                buf_release(&list);
                r = r < 0 ? r : -EIO;
        }
        buf_release(&causes);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(names);
        return 0;
}

/* GET /api/models/{id}: the info object. -EIO with err. */
static int fetch_info(struct hf_client *cl, const char *name, json_t **ret, char *err, size_t n_err)
{
        struct hf_response resp = { 0 };
        AUTOFREE char *url = NULL, *path = NULL;
        json_error_t je;
        char cause[512];
        json_t *info;
        size_t len;
        int r;

        /* upstream trims '/' around the id */
        while (*name == '/')
                name++;
        path = strdup(name);
        if (!path)
                return -ENOMEM;
        len = strlen(path);
        while (len > 0 && path[len - 1] == '/')
                path[--len] = '\0';
        {
                AUTOFREE char *esc = path_escape(path);

                if (!esc || asprintf(&url, "%s/api/models/%s", cl->cfg->base_url, esc) < 0)
                        return -ENOMEM;
        }
        r = hf_get(cl, url, CATALOG_HF_BODY_MAX, &resp, cause, sizeof(cause));
        if (r == -EIO)
                snprintf(err, n_err, "failed to fetch model info for %s: %s", path, cause);
        if (r < 0) {
                hf_response_release(&resp);
                return r;
        }
        if (resp.status != 200) {
                char st[512];

                status_text(&resp, st, sizeof(st));
                snprintf(err, n_err, "Hugging Face API returned status %s for model %s", st, path);
                hf_response_release(&resp);
                return -EIO;
        }
        info = json_loadb(buf_str(&resp.body), resp.body.len, 0, &je);
        hf_response_release(&resp);
        if (!json_is_object(info)) {
                snprintf(err, n_err, "failed to decode model info for %s: %s", path,
                         info ? "not a JSON object" : je.text);
                json_decref(info);
                return -EIO;
        }
        if (!json_string_value(json_object_get(info, "id")) ||
            !json_string_value(json_object_get(info, "id"))[0])
                if (json_object_set_new(info, "id", json_string(path)) < 0) {
                        json_decref(info);
                        return -ENOMEM;
                }
        *ret = info;
        return 0;
}

/* The model card: the first README among the siblings that can be fetched; NULL when none. */
static int fetch_readme(struct hf_client *cl, const char *id, const json_t *info, char **ret)
{
        AUTOFREE char *esc = path_escape(id);
        const json_t *sib;
        size_t i;

        *ret = NULL;
        if (!esc)
                return -ENOMEM;
        json_array_foreach(json_object_get(info, "siblings"), i, sib) {
                const char *f = json_string_value(json_object_get(sib, "rfilename"));

                for (size_t k = 0; f && k < ELEMENTSOF(catalog_hf_readme_names); k++) {
                        struct hf_response resp = { 0 };
                        AUTOFREE char *url = NULL;
                        char cause[256];
                        int r;

                        if (!streq(f, catalog_hf_readme_names[k]))
                                continue;
                        if (asprintf(&url, "%s/%s/raw/main/%s", cl->cfg->base_url, esc, f) < 0)
                                return -ENOMEM;
                        r = hf_get(cl, url, CATALOG_HF_README_MAX, &resp, cause, sizeof(cause));
                        if (r >= 0 && resp.status == 200) {
                                *ret = buf_take(&resp.body, NULL);
                                hf_response_release(&resp);
                                return *ret ? 0 : -ENOMEM;
                        }
                        hf_response_release(&resp);
                        if (r < 0 && r != -EIO)
                                return r;
                }
        }
        return 0;
}

static int client_init(struct hf_client *cl, const struct catalog_hf_config *c,
                       const struct catalog_hf_opts *opts)
{
        *cl = (struct hf_client){ .cfg = c, .opts = opts ? *opts : (struct catalog_hf_opts){ 0 } };
        if (!cl->opts.timeout)
                cl->opts.timeout = 30 * USEC_PER_SEC;
        if (!cl->opts.connect_timeout)
                cl->opts.connect_timeout = 10 * USEC_PER_SEC;
        if (!cl->opts.retries)
                cl->opts.retries = 3;
        if (!cl->opts.retry_wait_max)
                cl->opts.retry_wait_max = 60 * USEC_PER_SEC;
        cl->curl = curl_easy_init();
        return cl->curl ? 0 : -ENOMEM;
}

static int set_error(char **slot, const char *prefix, const char *msg)
{
        if (asprintf(slot, "%s%s", prefix, msg) < 0) {
                *slot = NULL;
                return -ENOMEM;
        }
        return 0;
}

int catalog_hf_sync(const struct catalog_hf_config *c, const struct catalog_hf_opts *opts,
                    struct catalog_hf_result *ret)
{
        CLEANUP(catalog_models_unrefp) struct catalog_models *data = NULL;
        CLEANUP(catalog_strv_freep) char **names = NULL, **failed = NULL;
        struct buf causes = BUF_INIT(HF_ERROR_MAX), list = BUF_INIT(HF_ERROR_MAX);
        int64_t now_ms = (int64_t)(now_realtime() / USEC_PER_MSEC);
        struct hf_client cl;
        size_t n_failed = 0;
        char err[HF_ERROR_MAX];
        int r;

        *ret = (struct catalog_hf_result){ 0 };
        r = client_init(&cl, c, opts);
        if (r < 0)
                return r;
        if (c->api_key) {
                r = validate_credentials(&cl, err, sizeof(err));
                if (r == -EIO) {
                        curl_easy_cleanup(cl.curl);
                        return set_error(&ret->error, "", err);
                }
                if (r < 0)
                        goto out;
        }
        r = expand_names(&cl, &names, err, sizeof(err));
        if (r == -EIO) {
                curl_easy_cleanup(cl.curl);
                return set_error(&ret->error, "failed to expand model patterns: ", err);
        }
        if (r < 0)
                goto out;
        data = calloc(1, sizeof(*data));
        failed = calloc(1, sizeof(*failed));
        if (!data || !failed) {
                r = -ENOMEM;
                goto out;
        }
        data->refs = 1;
        data->v = calloc(catalog_strv_length(names) + 1, sizeof(*data->v));
        if (!data->v) {
                r = -ENOMEM;
                goto out;
        }
        for (char **nm = names; *nm; nm++) {
                json_t *info = NULL;
                AUTOFREE char *readme = NULL;
                struct catalog_model_data d = { 0 };
                bool dup = false;

                if (!catalog_glob_included(c->included, c->excluded, *nm))
                        continue;
                r = fetch_info(&cl, *nm, &info, err, sizeof(err));
                if (r == -EIO) {
                        r = strv_push(&failed, &n_failed, *nm);
                        if (r >= 0)
                                r = err_append(&causes, "; %s", err);
                        if (r < 0)
                                goto out;
                        continue;
                }
                if (r < 0)
                        goto out;
                r = fetch_readme(&cl, json_string_value(json_object_get(info, "id")), info,
                                 &readme);
                if (r >= 0)
                        r = catalog_hf_model_from_info(info, *nm, readme, now_ms, &d);
                json_decref(info);
                if (r < 0)
                        goto out;
                /* the final name must pass the globs too, and names stay unique */
                for (size_t i = 0; i < data->n && !dup; i++)
                        dup = streq(data->v[i].name, d.name);
                if (dup || !catalog_glob_included(c->included, c->excluded, d.name)) {
                        free(d.name);
                        json_decref(d.model);
                        json_decref(d.artifacts);
                        continue;
                }
                data->v[data->n++] = d;
        }
        r = catalog_models_stamp(data, now_ms);
        if (r < 0)
                goto out;
        if (n_failed > 0) {
                for (size_t i = 0; i < n_failed && r >= 0; i++)
                        r = err_append(&list, "%s%s", i ? " " : "", failed[i]);
                if (r >= 0 &&
                    asprintf(&ret->error,
                             "Failed to fetch some models, ensure models exist and are accessible "
                             "with given credentials. Failed models: [%s]%s",
                             buf_str(&list), buf_str(&causes)) < 0) {
                        ret->error = NULL;
                        r = -ENOMEM;
                }
                if (r < 0)
                        goto out;
        }
        if (data->n > 0 || n_failed == 0)
                ret->data = TAKE_PTR(data);
        r = 0;
out:
        buf_release(&causes);
        buf_release(&list);
        curl_easy_cleanup(cl.curl);
        if (r < 0)
                catalog_hf_result_release(ret);
        return r;
}

int catalog_hf_preview_names(const struct catalog_hf_config *c, const struct catalog_hf_opts *opts,
                             char ***ret_names, char *reterr, size_t n_reterr)
{
        CLEANUP(catalog_strv_freep) char **names = NULL;
        struct hf_client cl;
        size_t n = 0;
        int r;

        r = client_init(&cl, c, opts);
        if (r < 0)
                return r;
        names = calloc(1, sizeof(*names));
        if (!names) {
                r = -ENOMEM;
                goto out;
        }
        if (c->api_key) {
                r = validate_credentials(&cl, reterr, n_reterr);
                if (r < 0)
                        goto out;
        }
        for (char **p = c->included; p && *p && r >= 0; p++) {
                AUTOFREE char *org = NULL, *prefix = NULL;
                enum catalog_hf_pattern type;
                char cause[768];
                json_t *info = NULL;

                r = catalog_hf_pattern_parse(*p, &type, &org, &prefix);
                if (r < 0)
                        break;
                switch (type) {
                case CATALOG_HF_PATTERN_INVALID:
                        r = unsupported_pattern(*p, reterr, n_reterr);
                        break;
                case CATALOG_HF_PATTERN_ORG_ALL:
                case CATALOG_HF_PATTERN_ORG_PREFIX:
                        /* a failing pattern is skipped (upstream) */
                        r = list_by_author(&cl, org, prefix, &names, &n, cause, sizeof(cause));
                        if (r == -EIO)
                                r = 0;
                        break;
                case CATALOG_HF_PATTERN_EXACT:
                        r = fetch_info(&cl, *p, &info, cause, sizeof(cause));
                        if (r == -EIO)
                                r = strv_push(&names, &n, *p);
                        else if (r >= 0)
                                r = strv_push(&names, &n,
                                              json_string_value(json_object_get(info, "id")));
                        json_decref(info);
                        break;
                }
        }
out:
        curl_easy_cleanup(cl.curl);
        if (r == -EIO)
                r = -EINVAL;
        if (r < 0)
                return r;
        *ret_names = TAKE_PTR(names);
        return 0;
}
