/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/hf.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog/limits.h"
#include "util/parse-util.h"

const char *const catalog_hf_readme_names[5] = { "README.md", "readme.md", "Readme.md", "README",
                                                 "readme" };

/* Our own catalog logo (a rounded square with a stylised hub), served as upstream serves its own. */
#define HF_LOGO                                                                                    \
        "data:image/svg+xml;base64,"                                                               \
        "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCA2NCA2NCI+PHJlY3Qg" \
        "d2lkdGg9IjY0IiBoZWlnaHQ9IjY0IiByeD0iMTIiIGZpbGw9IiMyZjVmOTgiLz48Y2lyY2xlIGN4PSIzMiIgY3k9" \
        "IjMyIiByPSIxMCIgZmlsbD0iI2ZmZiIvPjxjaXJjbGUgY3g9IjE0IiBjeT0iMTQiIHI9IjUiIGZpbGw9IiNmZmYi" \
        "Lz48Y2lyY2xlIGN4PSI1MCIgY3k9IjUwIiByPSI1IiBmaWxsPSIjZmZmIi8+PC9zdmc+"

void catalog_hf_config_release(struct catalog_hf_config *c)
{
        free(c->source_id);
        free(c->base_url);
        free(c->api_key);
        catalog_strv_free(c->included);
        catalog_strv_free(c->excluded);
        *c = (struct catalog_hf_config){ 0 };
}

/* A copy of v with "<org>/" before every pattern (NULL org: a plain copy). */
static int strv_prefixed(char *const *v, const char *org, char ***ret)
{
        size_t n = catalog_strv_length(v);
        CLEANUP(catalog_strv_freep) char **out = calloc(n + 1, sizeof(*out));

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (org ? asprintf(&out[i], "%s/%s", org, v[i]) < 0 : !(out[i] = strdup(v[i]))) {
                        out[i] = NULL;
                        return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(out);
        return 0;
}

static const char *real_getenv(const char *name)
{
        return getenv(name); /* NOLINT(concurrency-mt-unsafe): modelplane never calls setenv */
}

static const char *prop_string(const struct catalog_source_config *src, const char *key)
{
        const char *s = json_string_value(json_object_get(src->properties, key));

        return s && s[0] ? s : NULL;
}

/* source_id, base_url (property url, else $HF_ENDPOINT, else the hub; no trailing '/'), key. */
static int hf_config_endpoint(const struct catalog_source_config *src, catalog_getenv_fn getenv_fn,
                              struct catalog_hf_config *c)
{
        const char *url = prop_string(src, "url"), *env = prop_string(src, "apiKeyEnvVar");
        const char *key;
        size_t len;

        if (!url) {
                url = getenv_fn("HF_ENDPOINT");
                if (!url || !url[0])
                        url = CATALOG_HF_DEFAULT_URL;
        }
        c->source_id = strdup(src->id ? src->id : "");
        c->base_url = strdup(url);
        if (!c->source_id || !c->base_url)
                return -ENOMEM;
        len = strlen(c->base_url);
        while (len > 0 && c->base_url[len - 1] == '/')
                c->base_url[--len] = '\0';

        key = getenv_fn(env ? env : CATALOG_HF_DEFAULT_KEY_ENV);
        c->has_key = key && key[0];
        if (c->has_key && strneq(key, "hf_", 3)) {
                c->api_key = strdup(key);
                if (!c->api_key)
                        return -ENOMEM;
        }
        return 0;
}

/* maxModels (a number in 0..UINT32_MAX, -EINVAL otherwise) and syncInterval (at least 1 s). */
static int hf_config_limits(const struct catalog_source_config *src, struct catalog_hf_config *c,
                            char *reterr, size_t n_reterr)
{
        const char *sync = prop_string(src, "syncInterval");
        json_t *mm = json_object_get(src->properties, "maxModels");

        if (mm) {
                double d = json_number_value(mm);

                if (!json_is_number(mm) || d < 0 || d > UINT32_MAX) {
                        (void)snprintf(reterr, n_reterr, "maxModels must be a non-negative number");
                        return -EINVAL;
                }
                c->max_models = (uint32_t)d;
        }
        if (sync && parse_go_duration_usec(sync, &c->sync_interval) < 0)
                c->sync_interval = CATALOG_HF_DEFAULT_SYNC_USEC; /* upstream: a warning */
        if (c->sync_interval < USEC_PER_SEC)
                c->sync_interval = USEC_PER_SEC;
        return 0;
}

/*
 * includedModels and excludedModels under allowedOrganization ("<org>/" before each pattern;
 * "<org>/" "*" when nothing is included); -EINVAL when nothing is left to include.
 */
static int hf_config_patterns(const struct catalog_source_config *src, struct catalog_hf_config *c,
                              char *reterr, size_t n_reterr)
{
        const char *org = prop_string(src, "allowedOrganization");
        CLEANUP(catalog_strv_freep) char **excluded = NULL;
        int r;

        r = catalog_source_excluded(src, &excluded);
        if (r < 0)
                return r;
        if (org && catalog_strv_length(src->included) == 0) {
                c->included = calloc(2, sizeof(char *));
                if (!c->included)
                        return -ENOMEM;
                if (asprintf(&c->included[0], "%s/*", org) < 0) {
                        c->included[0] = NULL; /* undefined after a failure */
                        return -ENOMEM;
                }
        } else {
                r = strv_prefixed(src->included, org, &c->included);
                if (r < 0)
                        return r;
        }
        r = strv_prefixed(excluded, org, &c->excluded);
        if (r < 0)
                return r;
        if (catalog_strv_length(c->included) == 0) {
                (void)snprintf(reterr, n_reterr,
                               "includedModels cannot be empty for Hugging Face catalog");
                return -EINVAL;
        }
        return 0;
}

int catalog_hf_config_from_source(const struct catalog_source_config *src,
                                  catalog_getenv_fn getenv_fn, struct catalog_hf_config *ret,
                                  char *reterr, size_t n_reterr)
{
        CLEANUP(catalog_hf_config_release)
        struct catalog_hf_config c = { .max_models = CATALOG_HF_DEFAULT_MAX_MODELS,
                                       .sync_interval = CATALOG_HF_DEFAULT_SYNC_USEC };
        int r;

        r = hf_config_endpoint(src, getenv_fn ? getenv_fn : real_getenv, &c);
        if (r >= 0)
                r = hf_config_limits(src, &c, reterr, n_reterr);
        if (r >= 0)
                r = hf_config_patterns(src, &c, reterr, n_reterr);
        if (r < 0)
                return r;
        *ret = c;
        c = (struct catalog_hf_config){ 0 }; /* moved to *ret */
        return 0;
}

int catalog_hf_config_preview_key(const struct catalog_source_config *src,
                                  struct catalog_hf_config *c)
{
        const char *key = prop_string(src, "apiKey");
        char *copy = NULL;

        if (!key)
                return 0;
        if (strneq(key, "hf_", 3)) {
                copy = strdup(key);
                if (!copy)
                        return -ENOMEM;
        }
        free(c->api_key);
        c->api_key = copy;
        c->has_key = true;
        return 0;
}

char *catalog_hf_config_key(const struct catalog_hf_config *c)
{
        json_auto_t *o = json_pack("{s:s, s:s, s:s?, s:b, s:o, s:o, s:I, s:I}", "source",
                                   c->source_id, "url", c->base_url, "key", c->api_key, "hasKey",
                                   c->has_key, "included", catalog_strv_to_json(c->included),
                                   "excluded", catalog_strv_to_json(c->excluded), "maxModels",
                                   (json_int_t)c->max_models, "sync", (json_int_t)c->sync_interval);

        return o ? json_dumps(o, JSON_COMPACT) : NULL;
}

/* A copy of s without leading and trailing white space (upstream's strings.TrimSpace). */
static char *strdup_trimmed(const char *s)
{
        size_t len;

        while (*s && isspace((unsigned char)*s))
                s++;
        len = strlen(s);
        while (len > 0 && isspace((unsigned char)s[len - 1]))
                len--;
        return strndup(s, len);
}

static bool is_blank(const char *s)
{
        for (; *s; s++)
                if (!isspace((unsigned char)*s))
                        return false;
        return true;
}

/* "org/prefix*": the organization and the model name prefix (model is edited in place). */
static int pattern_org_prefix(const char *org, char *model, size_t len, char **ret_org,
                              char **ret_prefix)
{
        AUTOFREE char *o = NULL, *pfx = NULL;

        model[len - 1] = '\0';
        o = strdup(org);
        pfx = strdup(model);
        if (!o || !pfx)
                return -ENOMEM;
        *ret_org = TAKE_PTR(o);
        *ret_prefix = TAKE_PTR(pfx);
        return 0;
}

int catalog_hf_pattern_parse(const char *pattern, enum catalog_hf_pattern *ret_type, char **ret_org,
                             char **ret_prefix)
{
        AUTOFREE char *p = NULL;
        char *slash, *model;
        size_t len;
        int r;

        *ret_org = *ret_prefix = NULL;
        *ret_type = CATALOG_HF_PATTERN_INVALID;
        p = strdup_trimmed(pattern);
        if (!p)
                return -ENOMEM;
        len = strlen(p);
        if (streq(p, "*") || streq(p, "*/*") || strneq(p, "*/", 2))
                return 0;
        if (len >= 2 && streq(p + len - 2, "/*")) {
                p[len - 2] = '\0';
                if (is_blank(p))
                        return 0;
                *ret_org = strdup(p);
                if (!*ret_org)
                        return -ENOMEM;
                *ret_type = CATALOG_HF_PATTERN_ORG_ALL;
                return 0;
        }
        slash = strchr(p, '/');
        if (slash)
                *slash = '\0';
        if (p[0] == '\0' || strchr(p, '*'))
                return 0;
        model = slash ? slash + 1 : NULL;
        if (model && model[0] == '\0')
                return 0;
        if (model && (len = strlen(model)) > 1 && model[len - 1] == '*') {
                r = pattern_org_prefix(p, model, len, ret_org, ret_prefix);
                if (r < 0)
                        return r;
                *ret_type = CATALOG_HF_PATTERN_ORG_PREFIX;
                return 0;
        }
        *ret_type = CATALOG_HF_PATTERN_EXACT;
        return 0;
}

int catalog_hf_link_next_cursor(const char *link, char **ret)
{
        *ret = NULL;
        while (link && *link) {
                const char *end = strchr(link, ',');
                size_t n = end ? (size_t)(end - link) : strlen(link);
                AUTOFREE char *part = strndup(link, n);
                char *lt, *gt, *cur;

                if (!part)
                        return -ENOMEM;
                lt = strchr(part, '<');
                gt = lt ? strchr(lt, '>') : NULL;
                if (strstr(part, "rel=\"next\"") && lt && gt) {
                        *gt = '\0';
                        cur = strstr(lt + 1, "cursor=");
                        if (cur) {
                                cur += strlen("cursor=");
                                *ret = strndup(cur, strcspn(cur, "&"));
                                return *ret ? 0 : -ENOMEM;
                        }
                }
                link = end ? end + 1 : NULL;
        }
        return 0;
}

int catalog_hf_parse_time(const char *s, int64_t *ret_ms)
{
        usec_t u;
        const char *dot;
        int r = parse_rfc3339(s, &u);

        if (r < 0)
                return r;
        *ret_ms = (int64_t)(u / USEC_PER_MSEC);
        /* keep the milliseconds the hub sends ("...:00.123Z") even if the parser drops them */
        dot = strchr(s, '.');
        if (dot && *ret_ms % 1000 == 0 && isdigit((unsigned char)dot[1])) {
                int ms = 0, k = 0;

                for (const char *c = dot + 1; isdigit((unsigned char)*c) && k < 3; c++, k++)
                        ms = ms * 10 + (*c - '0');
                for (; k < 3; k++)
                        ms *= 10;
                *ret_ms += ms;
        }
        return 0;
}

static const char *const generative_tasks[] = {
        "text-generation",
        "summarization",
        "translation",
        "text-to-image",
        "unconditional-image-generation",
        "image-to-image",
        "text-to-speech",
        "audio-to-audio",
};

static const char *const predictive_tasks[] = {
        "text-classification",  "image-classification",     "zero-shot-classification",
        "audio-classification", "question-answering",       "document-question-answering",
        "object-detection",     "image-segmentation",       "keypoint-detection",
        "feature-extraction",   "image-feature-extraction", "fill-mask",
};

static bool in_list(const char *const *list, size_t n, const char *s)
{
        for (size_t i = 0; i < n; i++)
                if (streq(list[i], s))
                        return true;
        return false;
}

/* A task name trimmed and lower-cased into buf (n > 0; truncated to fit). */
static const char *task_normalized(const char *s, char *buf, size_t n)
{
        size_t k = 0;

        while (s && isspace((unsigned char)*s))
                s++;
        for (; s && *s && k + 1 < n; s++)
                buf[k++] = (char)tolower((unsigned char)*s);
        while (k > 0 && isspace((unsigned char)buf[k - 1]))
                k--;
        buf[k] = '\0';
        return buf;
}

/* upstream's heuristic: generative wins over predictive; nothing known is "unknown" */
static const char *model_type_of(const json_t *tasks)
{
        bool predictive = false;
        size_t i;
        json_t *t;

        json_array_foreach(tasks, i, t) {
                char buf[128];
                const char *s = task_normalized(json_string_value(t), buf, sizeof(buf));

                if (in_list(generative_tasks, ELEMENTSOF(generative_tasks), s))
                        return "generative";
                if (in_list(predictive_tasks, ELEMENTSOF(predictive_tasks), s))
                        predictive = true;
        }
        return predictive ? "predictive" : "unknown";
}

static int set_string(json_t *o, const char *k, const char *v)
{
        if (!v || !v[0])
                return 0;
        return json_object_set_new(o, k, json_string(v)) < 0 ? -ENOMEM : 0;
}

static int set_custom(json_t *custom, const char *k, const char *v)
{
        return json_object_set_new(custom, k,
                                   json_pack("{s:s, s:s}", "metadataType", "MetadataStringValue",
                                             "string_value", v)) < 0
                       ? -ENOMEM
                       : 0;
}

/* A JSON array of the strings of arr (others skipped) as compact text, as Go's json.Marshal. */
static char *strings_json(const json_t *arr, const char *skip_prefix)
{
        json_auto_t *a = json_array();
        size_t i;
        json_t *v;

        if (!a)
                return NULL;
        json_array_foreach(arr, i, v)
                if (json_is_string(v) && !(skip_prefix && strneq(json_string_value(v), skip_prefix,
                                                                 strlen(skip_prefix))))
                        if (json_array_append(a, v) < 0)
                                return NULL;
        if (json_array_size(a) == 0)
                return strdup("");
        return json_dumps(a, JSON_COMPACT);
}

/* m[key] = the hub time info[info_key] as milliseconds since the epoch (text), when it parses. */
static int set_time_ms(json_t *m, const char *key, const json_t *info, const char *info_key)
{
        const json_t *v = json_object_get(info, info_key);
        char stamp[32];
        int64_t ms;

        if (!json_is_string(v) || catalog_hf_parse_time(json_string_value(v), &ms) != 0)
                return 0;
        (void)snprintf(stamp, sizeof(stamp), "%" PRId64, ms);
        return set_string(m, key, stamp);
}

/* The license: the value of the first "license:" tag (the other tags become hf_tags). */
static const char *license_of(const json_t *tags)
{
        size_t i;
        json_t *v;

        json_array_foreach(tags, i, v) {
                const char *t = json_string_value(v);

                if (t && strneq(t, "license:", 8) && t[8])
                        return t + 8;
        }
        return NULL;
}

/* The model card (upstream reads it from cardData.data, sic): description, language, licenseLink. */
static int set_card_fields(json_t *m, const json_t *card)
{
        static const char *const link_keys[] = { "license_link", "licenseLink", "license_url",
                                                 "licenseUrl", "license" };
        json_auto_t *langs = json_array();
        size_t i;
        json_t *v;
        int r;

        if (!langs)
                return -ENOMEM;
        r = set_string(m, "description", json_string_value(json_object_get(card, "description")));
        json_array_foreach(json_object_get(card, "language"), i, v)
                if (r >= 0 && json_string_value(v) && json_string_value(v)[0])
                        r = json_array_append(langs, v) < 0 ? -ENOMEM : 0;
        if (r >= 0 && json_array_size(langs) > 0)
                r = json_object_set(m, "language", langs) < 0 ? -ENOMEM : 0;
        for (size_t k = 0; r >= 0 && k < ELEMENTSOF(link_keys); k++) {
                const char *l = json_string_value(json_object_get(card, link_keys[k]));

                if (l && (strneq(l, "http://", 7) || strneq(l, "https://", 8)))
                        return set_string(m, "licenseLink", l);
        }
        return r;
}

/* The tasks: task, then pipeline_tag when it differs; appended to tasks, set on m when any. */
static int set_tasks(json_t *m, json_t *tasks, const json_t *info)
{
        const char *task = json_string_value(json_object_get(info, "task"));
        const char *pipeline = json_string_value(json_object_get(info, "pipeline_tag"));

        if (task && task[0] && json_array_append_new(tasks, json_string(task)) < 0)
                return -ENOMEM;
        if (pipeline && pipeline[0] && !(task && streq(task, pipeline)) &&
            json_array_append_new(tasks, json_string(pipeline)) < 0)
                return -ENOMEM;
        if (json_array_size(tasks) > 0 && json_object_set(m, "tasks", tasks) < 0)
                return -ENOMEM;
        return 0;
}

/* The top-level fields of the model (everything but customProperties), in upstream's order. */
static int set_model_fields(json_t *m, const json_t *info, const char *id, const char *name,
                            const char *readme, json_t *tasks)
{
        const json_t *card = json_object_get(json_object_get(info, "cardData"), "data");
        int r;

        r = set_string(m, "name", name);
        if (r >= 0 && id && id[0])
                r = set_string(m, "externalId", id);
        if (r >= 0)
                r = set_time_ms(m, "createTimeSinceEpoch", info, "createdAt");
        if (r >= 0)
                r = set_time_ms(m, "lastUpdateTimeSinceEpoch", info, "lastModified");
        if (r >= 0)
                r = set_string(m, "license", license_of(json_object_get(info, "tags")));
        if (r >= 0 && readme)
                r = json_object_set_new(m, "readme", json_string(readme)) < 0 ? -ENOMEM : 0;
        if (r >= 0 && json_is_object(card))
                r = set_card_fields(m, card);
        if (r >= 0)
                r = set_string(m, "provider", json_string_value(json_object_get(info, "author")));
        if (r >= 0)
                r = set_string(m, "libraryName",
                               json_string_value(json_object_get(info, "library_name")));
        if (r >= 0)
                r = set_string(m, "logo", HF_LOGO);
        if (r >= 0)
                r = set_tasks(m, tasks, info);
        return r;
}

/* "true"/"false" for a boolean gated, the string itself for a string ("auto", "manual"), else "". */
static const char *gated_of(const json_t *v)
{
        if (json_is_boolean(v))
                return json_is_true(v) ? "true" : "false";
        return json_is_string(v) ? json_string_value(v) : "";
}

/* customProperties, all strings, as upstream. */
static int set_custom_fields(json_t *custom, const json_t *info, const json_t *tasks,
                             int64_t synced_ms)
{
        const json_t *cfg = json_object_get(info, "config");
        const char *hf_model_type = json_string_value(json_object_get(cfg, "model_type"));
        AUTOFREE char *tags_text = strings_json(json_object_get(info, "tags"), "license:");
        AUTOFREE char *arch_text = strings_json(json_object_get(cfg, "architectures"), NULL);
        char stamp[32];
        int r;

        if (!tags_text || !arch_text)
                return -ENOMEM;
        r = set_custom(custom, "model_type", model_type_of(tasks));
        if (r >= 0)
                r = set_custom(custom, "hf_private",
                               json_is_true(json_object_get(info, "private")) ? "true" : "false");
        if (r >= 0)
                r = set_custom(custom, "hf_gated", gated_of(json_object_get(info, "gated")));
        if (r >= 0 && tags_text[0])
                r = set_custom(custom, "hf_tags", tags_text);
        if (r >= 0 && arch_text[0])
                r = set_custom(custom, "hf_architectures", arch_text);
        if (r >= 0 && hf_model_type && hf_model_type[0])
                r = set_custom(custom, "hf_model_type", hf_model_type);
        (void)snprintf(stamp, sizeof(stamp), "%" PRId64, synced_ms);
        if (r >= 0)
                r = set_custom(custom, "last_synced", stamp);
        return r;
}

/* One model artifact hf://<id> (KServe's storage initializer), with the model's times. */
static int append_artifact(json_t *arts, const json_t *m, const char *id, const char *name)
{
        json_t *a = json_object();
        AUTOFREE char *uri = NULL, *aname = NULL;
        int r;

        if (!a || asprintf(&uri, "hf://%s", id) < 0 ||
            asprintf(&aname, "%s-hf-artifact", name) < 0 || json_array_append_new(arts, a) < 0) {
                json_decref(a);
                return -ENOMEM;
        }
        r = set_string(a, "artifactType", "model-artifact");
        if (r >= 0)
                r = set_string(a, "uri", uri);
        if (r >= 0)
                r = set_string(a, "name", aname);
        if (r >= 0)
                r = set_string(a, "externalId", id);
        if (r >= 0)
                r = set_string(a, "createTimeSinceEpoch",
                               json_string_value(json_object_get(m, "createTimeSinceEpoch")));
        if (r >= 0)
                r = set_string(a, "lastUpdateTimeSinceEpoch",
                               json_string_value(json_object_get(m, "lastUpdateTimeSinceEpoch")));
        if (r >= 0 && json_object_set_new(a, "customProperties", json_object()) < 0)
                r = -ENOMEM;
        return r;
}

int catalog_hf_model_from_info(const json_t *info, const char *fallback_name, const char *readme,
                               int64_t synced_ms, struct catalog_model_data *ret)
{
        const char *id = json_string_value(json_object_get(info, "id"));
        const char *name = id && id[0] ? id : json_string_value(json_object_get(info, "modelId"));
        json_auto_t *m = json_object(), *custom = json_object(), *tasks = json_array(),
                    *arts = json_array();
        int r;

        if (!json_is_object(info))
                return -EINVAL;
        if (!m || !custom || !tasks || !arts)
                return -ENOMEM;
        if (!name || !name[0])
                name = fallback_name;
        r = set_model_fields(m, info, id, name, readme, tasks);
        if (r >= 0)
                r = set_custom_fields(custom, info, tasks, synced_ms);
        if (r >= 0 && json_object_set(m, "customProperties", custom) < 0)
                r = -ENOMEM;
        if (r >= 0 && id && id[0])
                r = append_artifact(arts, m, id, name);
        if (r < 0)
                return r;
        /* the model's own "name" string: it lives as long as the model (then its record) */
        ret->name = json_string_value(json_object_get(m, "name"));
        if (!ret->name)
                return -ENOMEM;
        ret->model = TAKE_PTR(m);
        ret->artifacts_json = TAKE_PTR(arts);
        ret->line = 0;
        return 0;
}
