/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/repo.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/string-util.h"
#include "util/buf.h"

#define REPO_BODY_MAX ((size_t)64 * 1024 * 1024)

struct repo_client {
        CURL *curl;
        char *base;
        long timeout_sec;
};

void repo_index_release(struct repo_index *ix)
{
        for (size_t i = 0; i < ix->n; i++) {
                free(ix->items[i].name);
                free(ix->items[i].reason);
        }
        free(ix->items);
        *ix = (struct repo_index){ 0 };
}

int repo_index_set(struct repo_index *ix, const char *name, enum server_state state)
{
        bool found;
        size_t pos = sorted_find(ix->items, ix->n, sizeof(*ix->items), name, &found);
        struct repo_entry *v;
        char *copy;

        if (found) {
                ix->items[pos].state = state;
                free(ix->items[pos].reason);
                ix->items[pos].reason = NULL;
                return 0;
        }
        copy = strdup(name);
        v = copy ? reallocarray(ix->items, ix->n + 1, sizeof(*v)) : NULL;
        if (!v) {
                free(copy);
                return -ENOMEM;
        }
        ix->items = v;
        memmove(&v[pos + 1], &v[pos], (ix->n - pos) * sizeof(*v));
        v[pos] = (struct repo_entry){ .name = copy, .state = state };
        ix->n++;
        return 0;
}

int repo_client_new(const char *base_url, long timeout_sec, struct repo_client **ret)
{
        struct repo_client *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->curl = curl_easy_init();
        c->base = strdup(base_url);
        c->timeout_sec = timeout_sec;
        if (!c->curl || !c->base) {
                repo_client_free(c);
                return -ENOMEM;
        }
        for (size_t n = strlen(c->base); n > 0 && c->base[n - 1] == '/'; n--)
                c->base[n - 1] = 0;
        *ret = c;
        return 0;
}

struct repo_client *repo_client_free(struct repo_client *c)
{
        if (!c)
                return NULL;
        if (c->curl)
                curl_easy_cleanup(c->curl);
        free(c->base);
        free(c);
        return NULL;
}

/* POSTs {} to base+path; returns the HTTP code (>0) with the body in @body, or -EIO. */
static int post(struct repo_client *c, const char *path, struct buf *body, char *reterr, size_t len)
{
        AUTOFREE char *url = NULL;
        struct curl_slist *h = NULL;
        char curlerr[CURL_ERROR_SIZE] = "";
        CURLcode cc;
        long code = 0;

        if (asprintf(&url, "%s%s", c->base, path) < 0)
                return -ENOMEM;
        h = curl_slist_append(h, "Content-Type: application/json");
        curl_easy_reset(c->curl);
        curl_easy_setopt(c->curl, CURLOPT_URL, url);
        curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, "{}");
        curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, 5L);
        curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, c->timeout_sec);
        curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, buf_write_cb);
        curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, body);
        curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, curlerr);
        cc = curl_easy_perform(c->curl);
        curl_slist_free_all(h);
        if (cc != CURLE_OK) {
                snprintf(reterr, len, "POST %s: %s", url,
                         *curlerr ? curlerr : curl_easy_strerror(cc));
                return -EIO;
        }
        curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
        return (int)code;
}

static const char *str_field(json_t *o, const char *k)
{
        return json_string_value(json_object_get(o, k));
}

static int cmp_entry(const void *a, const void *b)
{
        return strcmp(((const struct repo_entry *)a)->name, ((const struct repo_entry *)b)->name);
}

int repo_index(struct repo_client *c, struct repo_index *ret, char *reterr, size_t len)
{
        struct buf body = BUF_INIT(REPO_BODY_MAX);
        struct repo_index ix = { 0 };
        json_t *arr, *v;
        json_error_t je;
        size_t i;
        int r;

        r = post(c, "/v2/repository/index", &body, reterr, len);
        if (r != 200) {
                if (r > 0)
                        snprintf(reterr, len, "repository index: HTTP %d %.200s", r,
                                 buf_str(&body));
                buf_release(&body);
                return r < 0 ? r : -EIO;
        }
        arr = json_loadb(buf_str(&body), body.len, JSON_REJECT_DUPLICATES, &je);
        buf_release(&body);
        if (!json_is_array(arr)) {
                json_decref(arr);
                snprintf(reterr, len, "repository index: not a JSON array");
                return -EBADMSG;
        }
        ix.items = calloc(json_array_size(arr) + 1, sizeof(*ix.items));
        if (!ix.items) {
                json_decref(arr);
                return -ENOMEM;
        }
        json_array_foreach(arr, i, v) {
                const char *name = str_field(v, "name"), *reason = str_field(v, "reason");
                if (!name)
                        continue;
                struct repo_entry *e = &ix.items[ix.n];
                e->name = strdup(name);
                e->reason = reason && *reason ? strdup(reason) : NULL;
                e->state = server_state_from_string(str_field(v, "state"));
                if (!e->name) {
                        json_decref(arr);
                        repo_index_release(&ix);
                        return -ENOMEM;
                }
                ix.n++;
        }
        json_decref(arr);
        qsort(ix.items, ix.n, sizeof(*ix.items), cmp_entry);
        *ret = ix;
        return 0;
}

/* A Python server's 500 body may be a traceback: its last line names the exception. */
static const char *last_line_of_traceback(const char *body, int *ret_len)
{
        const char *end, *start;

        if (!strstr(body, "Traceback (most recent call last)"))
                return NULL;
        end = body + strlen(body);
        while (end > body && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
                end--;
        start = end;
        while (start > body && start[-1] != '\n')
                start--;
        if (!*start || start >= end)
                return NULL;
        *ret_len = end - start < 1000 ? (int)(end - start) : 1000;
        return start;
}

static int model_call(struct repo_client *c, const char *name, const char *verb, char *reterr,
                      size_t len)
{
        struct buf body = BUF_INIT((size_t)1024 * 1024);
        AUTOFREE char *path = NULL, *esc = NULL;
        int r, n = 1000; /* at most this much of the server's answer */
        char *e;

        e = curl_easy_escape(c->curl, name, 0);
        if (!e)
                return -ENOMEM;
        esc = strdup(e);
        curl_free(e);
        if (!esc || asprintf(&path, "/v2/repository/models/%s/%s", esc, verb) < 0)
                return -ENOMEM;
        r = post(c, path, &body, reterr, len);
        if (r >= 200 && r < 300) {
                r = 0;
        } else if (r > 0) {
                json_t *j = json_loadb(buf_str(&body), body.len, 0, NULL);
                const char *msg = json_string_value(json_object_get(j, "error"));
                if (!msg)
                        msg = json_string_value(json_object_get(j, "detail"));
                if (!msg)
                        msg = last_line_of_traceback(buf_str(&body), &n);
                snprintf(reterr, len, "%s %s: HTTP %d: %.*s", verb, name, r, n,
                         msg ? msg : buf_str(&body));
                json_decref(j);
                r = r == 404 ? -ENOENT : -EIO;
        }
        buf_release(&body);
        return r;
}

int repo_load(struct repo_client *c, const char *name, char *reterr, size_t len)
{
        return model_call(c, name, "load", reterr, len);
}

int repo_unload(struct repo_client *c, const char *name, char *reterr, size_t len)
{
        return model_call(c, name, "unload", reterr, len);
}
