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
                curl_easy_setopt(cl->curl, CURLOPT_WRITEFUNCTION, buf_write_cb);
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
        int n;

        va_start(ap, fmt);
        n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
        va_end(ap);
        if (n < 0 || e->len + strlen(tmp) >= HF_ERROR_MAX)
                return 0; /* the message is best effort: an unprintable part is left out */
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

/* What a GET of a JSON document from the hub is, for its error messages. */
struct hf_doc {
        const char *fetch_failed;  /* "<fetch_failed> <name>: <cause>" */
        const char *noun;          /* "... returned status <st> for <noun> <name>" */
        const char *decode_failed; /* "<decode_failed> <name>: <why>" */
        const char *name;          /* borrowed */
        json_type type;            /* JSON_ARRAY or JSON_OBJECT */
};

/*
 * GETs url and decodes its body as a JSON value of doc->type. Returns the value and, when
 * ret_link is not NULL, the Link header (owned, may be NULL). -EIO with err for a transport
 * error, a status other than 200 or a body that is not the JSON expected.
 */
static int hf_get_json(struct hf_client *cl, const char *url, const struct hf_doc *doc,
                       json_t **ret, char **ret_link, char *err, size_t n_err)
{
        CLEANUP(hf_response_release) struct hf_response resp = { 0 };
        json_auto_t *v = NULL;
        json_error_t je;
        char cause[512];
        int r;

        r = hf_get(cl, url, CATALOG_HF_BODY_MAX, &resp, cause, sizeof(cause));
        if (r == -EIO)
                (void)snprintf(err, n_err, "%s %s: %s", doc->fetch_failed, doc->name, cause);
        if (r < 0)
                return r;
        if (resp.status != 200) {
                char st[512];

                status_text(&resp, st, sizeof(st));
                (void)snprintf(err, n_err, "Hugging Face API returned status %s for %s %s", st,
                               doc->noun, doc->name);
                return -EIO;
        }
        v = json_loadb(buf_str(&resp.body), resp.body.len, 0, &je);
        if (!v || json_typeof(v) != doc->type) {
                (void)snprintf(err, n_err, "%s %s: %s", doc->decode_failed, doc->name,
                               !v                        ? je.text
                               : doc->type == JSON_ARRAY ? "not a JSON array"
                                                         : "not a JSON object");
                return -EIO;
        }
        if (ret_link)
                *ret_link = TAKE_PTR(resp.link);
        *ret = TAKE_PTR(v);
        return 0;
}

/* The names a wildcard pattern is listing, with the maxModels budget across its pages. */
struct author_listing {
        const char *prefix; /* NULL for "org/" "*" */
        uint32_t max;       /* 0 = no limit */
        size_t got;
};

static bool listing_full(const struct author_listing *l)
{
        return l->max > 0 && l->got >= l->max;
}

/* Appends the ids of one page of GET /api/models to *names (strv, n). */
static int append_listed(struct author_listing *l, const json_t *page, char ***names, size_t *n)
{
        size_t i;
        json_t *m;

        json_array_foreach(page, i, m) {
                const char *id = json_string_value(json_object_get(m, "id"));
                const char *slash;
                int r;

                if (listing_full(l))
                        break;
                if (!id || !id[0])
                        id = json_string_value(json_object_get(m, "modelId"));
                if (!id || !id[0])
                        continue;
                /* the hub's search is fuzzy: keep names that start with the prefix */
                slash = strchr(id, '/');
                if (l->prefix && slash && strncasecmp(slash + 1, l->prefix, strlen(l->prefix)) != 0)
                        continue;
                if (*n >= CATALOG_MODELS_PER_SOURCE_MAX)
                        break;
                r = strv_push(names, n, id);
                if (r < 0)
                        return r;
                l->got++;
        }
        return 0;
}

/* Appends the names of one wildcard pattern to *names (strv, n). -EIO with err on failure. */
static int list_by_author(struct hf_client *cl, const char *org, const char *prefix, char ***names,
                          size_t *n, char *err, size_t n_err)
{
        AUTOFREE char *cursor = NULL, *e_org = curl_easy_escape(cl->curl, org, 0),
                      *e_prefix = prefix ? curl_easy_escape(cl->curl, prefix, 0) : NULL;
        struct author_listing l = { .prefix = prefix, .max = cl->cfg->max_models };
        const struct hf_doc doc = { "failed to list models for author", "author",
                                    "failed to decode models list for author", org, JSON_ARRAY };

        if (!e_org || (prefix && !e_prefix))
                return -ENOMEM;
        for (unsigned page = 0; page < CATALOG_HF_PAGES_MAX && !listing_full(&l); page++) {
                AUTOFREE char *url = NULL, *link = NULL;
                json_auto_t *arr = NULL;
                int r;

                if (asprintf(&url, "%s/api/models?author=%s&limit=%d%s%s%s%s", cl->cfg->base_url,
                             e_org, CATALOG_HF_LIST_LIMIT, e_prefix ? "&search=" : "",
                             e_prefix ? e_prefix : "", cursor ? "&cursor=" : "",
                             cursor ? cursor : "") < 0)
                        return -ENOMEM;
                r = hf_get_json(cl, url, &doc, &arr, &link, err, n_err);
                if (r >= 0)
                        r = append_listed(&l, arr, names, n);
                free(cursor);
                cursor = NULL;
                if (r >= 0)
                        r = catalog_hf_link_next_cursor(link, &cursor);
                if (r < 0)
                        return r;
                if (!cursor || json_array_size(arr) < CATALOG_HF_LIST_LIMIT)
                        break;
        }
        return 0;
}

/* upstream's message for "*", "*\/x" and patterns without an organization; -EIO */
static int unsupported_pattern(const char *p, char *err, size_t n_err)
{
        (void)snprintf(err, n_err,
                       "wildcard pattern \"%s\" is not supported - Hugging Face requires a "
                       "specific organization (e.g., 'ibm-granite/*' or 'meta-llama/Llama-2-*')",
                       p);
        return -EIO;
}

/*
 * Parses an includedModels pattern; -EIO with upstream's message in err when it is not
 * supported (no specific organization).
 */
static int parse_supported_pattern(const char *p, enum catalog_hf_pattern *ret_type, char **ret_org,
                                   char **ret_prefix, char *err, size_t n_err)
{
        int r = catalog_hf_pattern_parse(p, ret_type, ret_org, ret_prefix);

        if (r < 0)
                return r;
        return *ret_type == CATALOG_HF_PATTERN_INVALID ? unsupported_pattern(p, err, n_err) : 0;
}

/* "a b c": the names of v (n of them), space-separated, bounded as the error messages are. */
static int join_names(struct buf *list, char *const *v, size_t n)
{
        int r = 0;

        for (size_t i = 0; i < n && r >= 0; i++)
                r = err_append(list, "%s%s", i ? " " : "", v[i]);
        return r;
}

/* The names of step 2 so far, and the wildcard patterns that failed with their causes. */
struct expansion {
        char **names; /* owned strv */
        size_t n;
        char **failed; /* owned strv */
        size_t n_failed;
        size_t n_wild;
        struct buf causes; /* "; <pattern>: <cause>" ... */
};

/* Expands one includedModels pattern into e. -EIO with err when it is unsupported. */
static int expand_pattern(struct hf_client *cl, const char *p, struct expansion *e, char *err,
                          size_t n_err)
{
        AUTOFREE char *org = NULL, *prefix = NULL;
        enum catalog_hf_pattern type;
        char cause[768];
        int r;

        r = parse_supported_pattern(p, &type, &org, &prefix, err, n_err);
        if (r < 0)
                return r;
        if (type == CATALOG_HF_PATTERN_EXACT)
                return strv_push(&e->names, &e->n, p);
        e->n_wild++;
        r = list_by_author(cl, org, prefix, &e->names, &e->n, cause, sizeof(cause));
        if (r == -EIO) {
                r = strv_push(&e->failed, &e->n_failed, p);
                if (r >= 0)
                        r = err_append(&e->causes, "; %s: %s", p, cause);
        }
        return r;
}

/* "no models found[: [a b]]; a: cause..." when wildcard patterns found nothing at all; -EIO. */
static int no_models_found(const struct expansion *e, char *err, size_t n_err)
{
        CLEANUP(buf_release) struct buf list = BUF_INIT(HF_ERROR_MAX);
        int r;

        r = join_names(&list, e->failed, e->n_failed);
        if (r < 0)
                return r;
        (void)snprintf(err, n_err, "no models found%s%s%s%s", e->n_failed ? ": [" : "",
                       e->n_failed ? buf_str(&list) : "", e->n_failed ? "]" : "",
                       buf_str(&e->causes));
        return -EIO;
}

/*
 * Step 2: the concrete names. Returns -EIO with err when a pattern is unsupported or when
 * wildcard patterns found nothing at all.
 */
static int expand_names(struct hf_client *cl, char ***ret, char *err, size_t n_err)
{
        struct expansion e = { .causes = BUF_INIT(HF_ERROR_MAX) };
        int r = 0;

        e.names = calloc(1, sizeof(*e.names));
        e.failed = calloc(1, sizeof(*e.failed));
        if (!e.names || !e.failed)
                r = -ENOMEM;
        for (char **p = cl->cfg->included; p && *p && r >= 0; p++)
                r = expand_pattern(cl, *p, &e, err, n_err);
        if (r >= 0 && e.n_wild > 0 && e.n == 0)
                r = no_models_found(&e, err, n_err);
        if (r >= 0)
                *ret = TAKE_PTR(e.names);
        catalog_strv_free(e.names);
        catalog_strv_free(e.failed);
        buf_release(&e.causes);
        return r < 0 ? r : 0;
}

/* GET /api/models/{id}: the info object. -EIO with err. */
static int fetch_info(struct hf_client *cl, const char *name, json_t **ret, char *err, size_t n_err)
{
        AUTOFREE char *url = NULL, *path = NULL, *esc = NULL;
        json_auto_t *info = NULL;
        const char *id;
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
        esc = path_escape(path);
        if (!esc || asprintf(&url, "%s/api/models/%s", cl->cfg->base_url, esc) < 0)
                return -ENOMEM;
        const struct hf_doc doc = { "failed to fetch model info for", "model",
                                    "failed to decode model info for", path, JSON_OBJECT };

        r = hf_get_json(cl, url, &doc, &info, /* ret_link= */ NULL, err, n_err);
        if (r < 0)
                return r;
        id = json_string_value(json_object_get(info, "id"));
        if ((!id || !id[0]) && json_object_set_new(info, "id", json_string(path)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(info);
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

static void hf_client_release(struct hf_client *cl)
{
        curl_easy_cleanup(cl->curl);
        cl->curl = NULL;
}

static int set_error(char **slot, const char *prefix, const char *msg)
{
        if (asprintf(slot, "%s%s", prefix, msg) < 0) {
                *slot = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* The models of step 3 so far, and the names that could not be fetched with their causes. */
struct fetched {
        struct catalog_models *data; /* owned */
        char **failed;               /* owned strv */
        size_t n_failed;
        struct buf causes; /* "; <cause>" ... */
};

/*
 * Step 3 for one name the globs allow: its info and card into f->data (unless the final name is
 * excluded or already there); a name that cannot be fetched goes to f->failed.
 */
static int fetch_model(struct hf_client *cl, const char *nm, int64_t now_ms, struct fetched *f)
{
        const struct catalog_hf_config *c = cl->cfg;
        CLEANUP(catalog_model_data_release) struct catalog_model_data d = { 0 };
        json_auto_t *info = NULL;
        AUTOFREE char *readme = NULL;
        char err[HF_ERROR_MAX];
        int r;

        if (!catalog_glob_included(c->included, c->excluded, nm))
                return 0;
        r = fetch_info(cl, nm, &info, err, sizeof(err));
        if (r == -EIO) {
                r = strv_push(&f->failed, &f->n_failed, nm);
                return r < 0 ? r : err_append(&f->causes, "; %s", err);
        }
        if (r < 0)
                return r;
        r = fetch_readme(cl, json_string_value(json_object_get(info, "id")), info, &readme);
        if (r >= 0)
                r = catalog_hf_model_from_info(info, nm, readme, now_ms, &d);
        if (r < 0)
                return r;
        /* the final name must pass the globs too, and names stay unique */
        for (size_t i = 0; i < f->data->n; i++)
                if (streq(f->data->v[i].name, d.name))
                        return 0;
        if (!catalog_glob_included(c->included, c->excluded, d.name))
                return 0;
        f->data->v[f->data->n++] = d;
        d = (struct catalog_model_data){ 0 }; /* moved into f->data */
        return 0;
}

/* "Failed to fetch some models, ... Failed models: [a b]; cause..." into *ret (owned). */
static int partial_error(const struct fetched *f, char **ret)
{
        CLEANUP(buf_release) struct buf list = BUF_INIT(HF_ERROR_MAX);
        int r;

        r = join_names(&list, f->failed, f->n_failed);
        if (r < 0)
                return r;
        if (asprintf(ret,
                     "Failed to fetch some models, ensure models exist and are accessible with "
                     "given credentials. Failed models: [%s]%s",
                     buf_str(&list), buf_str(&f->causes)) < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* Steps 3 and 4: every name into f (f->data with room for all of them). */
static int fetch_models(struct hf_client *cl, char *const *names, int64_t now_ms, struct fetched *f)
{
        int r;

        f->data = calloc(1, sizeof(*f->data));
        f->failed = calloc(1, sizeof(*f->failed));
        if (!f->data || !f->failed)
                return -ENOMEM;
        f->data->refs = 1;
        f->data->v = calloc(catalog_strv_length(names) + 1, sizeof(*f->data->v));
        if (!f->data->v)
                return -ENOMEM;
        for (char *const *nm = names; *nm; nm++) {
                r = fetch_model(cl, *nm, now_ms, f);
                if (r < 0)
                        return r;
        }
        return catalog_models_stamp(f->data, now_ms);
}

/*
 * Steps 1 to 3 with a client; the outcome (data and/or error) into *ret. Returns -ENOMEM or
 * -ECANCELED only.
 */
static int sync_with(struct hf_client *cl, struct catalog_hf_result *ret)
{
        CLEANUP(catalog_strv_freep) char **names = NULL;
        struct fetched f = { .causes = BUF_INIT(HF_ERROR_MAX) };
        int64_t now_ms = (int64_t)(now_realtime() / USEC_PER_MSEC);
        char err[HF_ERROR_MAX];
        int r = 0;

        if (cl->cfg->api_key) {
                r = validate_credentials(cl, err, sizeof(err));
                if (r == -EIO)
                        return set_error(&ret->error, "", err);
                if (r < 0)
                        return r;
        }
        r = expand_names(cl, &names, err, sizeof(err));
        if (r == -EIO)
                return set_error(&ret->error, "failed to expand model patterns: ", err);
        if (r >= 0)
                r = fetch_models(cl, names, now_ms, &f);
        if (r >= 0 && f.n_failed > 0)
                r = partial_error(&f, &ret->error);
        if (r >= 0 && (f.data->n > 0 || f.n_failed == 0))
                ret->data = TAKE_PTR(f.data);
        catalog_models_unref(f.data);
        catalog_strv_free(f.failed);
        buf_release(&f.causes);
        return r < 0 ? r : 0;
}

int catalog_hf_sync(const struct catalog_hf_config *c, const struct catalog_hf_opts *opts,
                    struct catalog_hf_result *ret)
{
        CLEANUP(hf_client_release) struct hf_client cl = { 0 };
        int r;

        *ret = (struct catalog_hf_result){ 0 };
        r = client_init(&cl, c, opts);
        if (r >= 0)
                r = sync_with(&cl, ret);
        if (r < 0)
                catalog_hf_result_release(ret);
        return r;
}

/* A preview's names for one pattern (upstream: a failing wildcard pattern is skipped). */
static int preview_pattern(struct hf_client *cl, const char *p, char ***names, size_t *n,
                           char *reterr, size_t n_reterr)
{
        AUTOFREE char *org = NULL, *prefix = NULL;
        enum catalog_hf_pattern type;
        json_auto_t *info = NULL;
        char cause[768];
        int r;

        r = parse_supported_pattern(p, &type, &org, &prefix, reterr, n_reterr);
        if (r < 0)
                return r;
        if (type != CATALOG_HF_PATTERN_EXACT) {
                r = list_by_author(cl, org, prefix, names, n, cause, sizeof(cause));
                return r == -EIO ? 0 : r;
        }
        /* an exact id that cannot be fetched keeps its own name */
        r = fetch_info(cl, p, &info, cause, sizeof(cause));
        if (r == -EIO)
                return strv_push(names, n, p);
        if (r < 0)
                return r;
        return strv_push(names, n, json_string_value(json_object_get(info, "id")));
}

int catalog_hf_preview_names(const struct catalog_hf_config *c, const struct catalog_hf_opts *opts,
                             char ***ret_names, char *reterr, size_t n_reterr)
{
        CLEANUP(hf_client_release) struct hf_client cl = { 0 };
        CLEANUP(catalog_strv_freep) char **names = NULL;
        size_t n = 0;
        int r;

        r = client_init(&cl, c, opts);
        if (r < 0)
                return r;
        names = calloc(1, sizeof(*names));
        if (!names)
                return -ENOMEM;
        if (c->api_key)
                r = validate_credentials(&cl, reterr, n_reterr);
        for (char **p = c->included; p && *p && r >= 0; p++)
                r = preview_pattern(&cl, *p, &names, &n, reterr, n_reterr);
        if (r == -EIO)
                return -EINVAL;
        if (r < 0)
                return r;
        *ret_names = TAKE_PTR(names);
        return 0;
}
