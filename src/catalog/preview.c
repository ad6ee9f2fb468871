/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/preview.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/glob.h"
#include "catalog/hf-sync.h"
#include "catalog/index.h"
#include "catalog/limits.h"
#include "catalog/multipart.h"
#include "catalog/reply.h"
#include "catalog/service.h"

/*
 * A preview path: only the catalog file of a configured source (absolute, or relative to the
 * first sources file's directory), compared after resolving symlinks; -EPERM for anything else.
 */
static int preview_path(struct catalog__ctx *c, const char *p, char **ret)
{
        const struct catalog_config *cfg = catalog_index_config(c->idx);
        AUTOFREE char *joined = NULL, *want = NULL;

        if (p[0] == '/')
                joined = strdup(p);
        else if (asprintf(&joined, "%s/%s", catalog_service_base_dir(c->svc), p) < 0)
                joined = NULL;
        if (!joined)
                return -ENOMEM;
        want = realpath(joined, NULL);
        if (!want)
                return errno == ENOMEM ? -ENOMEM : -EPERM;
        for (size_t i = 0; i < cfg->n_sources; i++) {
                AUTOFREE char *sp = NULL, *real = NULL;

                if (cfg->sources[i].is_mcp || catalog_source_yaml_path(&cfg->sources[i], &sp) < 0)
                        continue;
                real = realpath(sp, NULL);
                if (real && streq(real, want)) {
                        *ret = TAKE_PTR(want);
                        return 0;
                }
        }
        return -EPERM;
}

/*
 * The model names of a yaml preview source (catalogData, or its yamlCatalogPath) with their
 * include decision. Answers 422 itself (returns -EINVAL) for bad data.
 */
static int preview_yaml_names(struct catalog__ctx *c, struct catalog_source_config *src,
                              const char *cat_data, size_t cat_len, struct http_resp *resp,
                              char ***ret_names, bool **ret_included)
{
        CLEANUP(catalog_models_unrefp) struct catalog_models *models = NULL;
        CLEANUP(catalog_strv_freep) char **excluded = NULL, **names = NULL;
        struct error_detail err = { 0 };
        AUTOFREE bool *included = NULL;
        char msg[1200];
        int r;

        if (cat_data)
                r = catalog_models_parse("catalogData", cat_data, cat_len, &models, &err);
        else {
                const char *p = json_string_value(
                        json_object_get(src->properties, "yamlCatalogPath"));
                AUTOFREE char *path = NULL;

                if (!p) {
                        catalog__reply_error(
                                resp, 422,
                                "config needs properties.yamlCatalogPath or a catalogData part");
                        return -EINVAL;
                }
                r = preview_path(c, p, &path);
                if (r == -EPERM) {
                        catalog__reply_error(resp, 422, "yamlCatalogPath '%s' is not allowed", p);
                        return -EINVAL;
                }
                if (r >= 0)
                        r = catalog_models_load_file(path, &models, &err);
        }
        if (r >= 0)
                r = catalog_source_excluded(src, &excluded);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                catalog__reply_error(resp, 422, "invalid catalog data: %s",
                                     error_detail_format(&err, msg, sizeof(msg)));
                return -EINVAL;
        }
        names = calloc(models->n + 1, sizeof(*names));
        included = calloc(models->n + 1, sizeof(*included));
        if (!names || !included)
                return -ENOMEM;
        for (size_t i = 0; i < models->n; i++) {
                names[i] = strdup(models->v[i].name);
                if (!names[i])
                        return -ENOMEM;
                included[i] = catalog_glob_included(src->included, excluded, names[i]);
        }
        *ret_names = TAKE_PTR(names);
        *ret_included = TAKE_PTR(included);
        return 0;
}

/* The same for an hf preview source: the names the hub has for its patterns (upstream). */
static int preview_hf_names(struct catalog_source_config *src, struct http_resp *resp,
                            char ***ret_names, bool **ret_included)
{
        struct catalog_hf_config cfg = { 0 };
        CLEANUP(catalog_strv_freep) char **names = NULL;
        AUTOFREE bool *included = NULL;
        char err[1024];
        size_t n;
        int r;

        /* A preview's config comes from whoever can reach this API: its hub is this catalog's
         * own (HF_ENDPOINT, else huggingface.co), as upstream strips the address, so no preview
         * sends a request, or this catalog's key, to a host the caller names. */
        (void)json_object_del(src->properties, "url");
        r = catalog_hf_config_from_source(src, NULL, &cfg, err, sizeof(err));
        if (r == -EINVAL) {
                catalog__reply_error(resp, 422, "invalid source config: %s", err);
                return r;
        }
        if (r >= 0)
                r = catalog_hf_config_preview_key(src, &cfg);
        if (r < 0) {
                catalog_hf_config_release(&cfg);
                return r;
        }
        r = catalog_hf_preview_names(&cfg, NULL, &names, err, sizeof(err));
        if (r == -EINVAL)
                catalog__reply_error(resp, 422, "%s", err);
        if (r < 0) {
                catalog_hf_config_release(&cfg);
                return r;
        }
        n = catalog_strv_length(names);
        included = calloc(n + 1, sizeof(*included));
        if (!included) {
                catalog_hf_config_release(&cfg);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                included[i] = catalog_glob_included(cfg.included, cfg.excluded, names[i]);
        catalog_hf_config_release(&cfg);
        *ret_names = TAKE_PTR(names);
        *ret_included = TAKE_PTR(included);
        return 0;
}

enum preview_filter {
        PREVIEW_ALL,
        PREVIEW_INCLUDED,
        PREVIEW_EXCLUDED,
};

/* filterStatus: all (default), included or excluded. Answers 400 itself. */
static int parse_filter_status(const struct http_req *req, enum preview_filter *ret,
                               struct http_resp *resp)
{
        const char *fs = http_req_query(req, "filterStatus");

        *ret = PREVIEW_ALL;
        if (!fs || !fs[0] || streq(fs, "all"))
                return 0;
        if (streq(fs, "included"))
                *ret = PREVIEW_INCLUDED;
        else if (streq(fs, "excluded"))
                *ret = PREVIEW_EXCLUDED;
        else {
                catalog__reply_error(
                        resp, 400,
                        "invalid filterStatus '%s' (expected all, included or excluded): bad "
                        "request",
                        fs);
                return -EINVAL;
        }
        return 0;
}

/*
 * The model names of the source that the multipart body describes (part config, and for a yaml
 * source optionally catalogData) with their include decisions. Answers 400/422 itself and
 * returns -EINVAL for bad input.
 */
static int preview_source_names(struct catalog__ctx *c, struct http_req *req,
                                struct http_resp *resp, char ***ret_names, bool **ret_included)
{
        const char *ct = http_req_header(req, "Content-Type");
        const char *body = buf_str(&req->body);
        const char *cfg_data = NULL, *cat_data = NULL;
        size_t cfg_len = 0, cat_len = 0;
        CLEANUP(catalog_source_config_release)
        struct catalog_source_config src = { .enabled = -1 };
        struct error_detail err = { 0 };
        char msg[1200];
        int r;

        r = catalog_multipart_find(ct, body, req->body.len, "config", &cfg_data, &cfg_len);
        if (r < 0) {
                catalog__reply_error(resp, 400,
                                     "missing required multipart field 'config': bad request");
                return -EINVAL;
        }
        r = catalog_multipart_find(ct, body, req->body.len, "catalogData", &cat_data, &cat_len);
        if (r == -EINVAL) {
                catalog__reply_error(resp, 400, "malformed multipart body: bad request");
                return -EINVAL;
        }
        r = catalog_source_parse_preview("config", cfg_data, cfg_len, &src, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                catalog__reply_error(resp, 422, "invalid source config: %s",
                                     error_detail_format(&err, msg, sizeof(msg)));
                return -EINVAL;
        }
        if (src.type && streq(src.type, "yaml"))
                return preview_yaml_names(c, &src, cat_data, cat_len, resp, ret_names,
                                          ret_included);
        if (src.type && (streq(src.type, "hf") || streq(src.type, "huggingface")))
                return preview_hf_names(&src, resp, ret_names, ret_included);
        catalog__reply_error(resp, 422, "unsupported source type '%s'", src.type ? src.type : "");
        return -EINVAL;
}

/* Answers the page of names that want keeps, with the summary of all of them. */
static int reply_preview(struct http_resp *resp, char **names, const bool *all_included,
                         enum preview_filter want, const struct catalog_page *page)
{
        size_t total = catalog_strv_length(names), n_incl = 0, n = 0, start, end;
        AUTOFREE char **values = calloc(total + 1, sizeof(*values));
        AUTOFREE bool *included = calloc(total + 1, sizeof(*included));
        AUTOFREE char *next = NULL;
        json_auto_t *items = json_array();
        int r;

        if (!values || !included || !items)
                return catalog__reply_errno(resp, -ENOMEM);
        for (size_t i = 0; i < total; i++) {
                bool inc = all_included[i];

                n_incl += inc;
                if ((want == PREVIEW_INCLUDED && !inc) || (want == PREVIEW_EXCLUDED && inc))
                        continue;
                values[n] = names[i];
                included[n++] = inc;
        }
        r = catalog_page_memory(values, values, n, page, &start, &end, &next);
        if (r < 0)
                return catalog__reply_errno(resp, r);
        for (size_t i = start; i < end; i++)
                if (json_array_append_new(items, json_pack("{s:s, s:b}", "name", values[i],
                                                           "included", included[i])) < 0)
                        return catalog__reply_errno(resp, -ENOMEM);
        return catalog__reply_json(resp,
                                   json_pack("{s:O, s:{s:I, s:I, s:I}, s:s, s:I, s:I}", "items",
                                             items, "summary", "totalModels", (json_int_t)total,
                                             "includedModels", (json_int_t)n_incl, "excludedModels",
                                             (json_int_t)(total - n_incl), "nextPageToken",
                                             next ? next : "", "pageSize",
                                             (json_int_t)page->page_size, "size",
                                             (json_int_t)json_array_size(items)));
}

int catalog__handle_preview(struct catalog__ctx *c, struct http_req *req, struct http_resp *resp)
{
        CLEANUP(catalog_strv_freep) char **names = NULL;
        AUTOFREE bool *included = NULL;
        struct catalog_page page = { 0 };
        enum preview_filter want;
        int r;

        if (req->body.len > (size_t)CATALOG_PREVIEW_BODY_MAX)
                return catalog__reply_error(resp, 413, "request body too large (limit %u bytes)",
                                            CATALOG_PREVIEW_BODY_MAX);
        if (catalog__parse_page(req, &page, resp) < 0 || parse_filter_status(req, &want, resp) < 0)
                return 0;
        r = preview_source_names(c, req, resp, &names, &included);
        if (r == -EINVAL)
                return 0;
        if (r < 0)
                return catalog__reply_errno(resp, r);
        return reply_preview(resp, names, included, want, &page);
}
