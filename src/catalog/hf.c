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
        return getenv(name);
}

static const char *prop_string(const struct catalog_source_config *src, const char *key)
{
        const char *s = json_string_value(json_object_get(src->properties, key));

        return s && s[0] ? s : NULL;
}

int catalog_hf_config_from_source(const struct catalog_source_config *src,
                                  catalog_getenv_fn getenv_fn, struct catalog_hf_config *ret,
                                  char *reterr, size_t n_reterr)
{
        struct catalog_hf_config c = { .max_models = CATALOG_HF_DEFAULT_MAX_MODELS,
                                       .sync_interval = CATALOG_HF_DEFAULT_SYNC_USEC };
        const char *url = prop_string(src, "url"), *env = prop_string(src, "apiKeyEnvVar");
        const char *org = prop_string(src, "allowedOrganization");
        const char *sync = prop_string(src, "syncInterval"), *key;
        json_t *mm = json_object_get(src->properties, "maxModels");
        CLEANUP(catalog_strv_freep) char **excluded = NULL;
        size_t len;
        int r;

        if (!getenv_fn)
                getenv_fn = real_getenv;
        if (!url) {
                url = getenv_fn("HF_ENDPOINT");
                if (!url || !url[0])
                        url = CATALOG_HF_DEFAULT_URL;
        }
        c.source_id = strdup(src->id ? src->id : "");
        c.base_url = strdup(url);
        if (!c.source_id || !c.base_url) {
                catalog_hf_config_release(&c);
                return -ENOMEM;
        }
        len = strlen(c.base_url);
        while (len > 0 && c.base_url[len - 1] == '/')
                c.base_url[--len] = '\0';

        key = getenv_fn(env ? env : CATALOG_HF_DEFAULT_KEY_ENV);
        c.has_key = key && key[0];
        if (c.has_key && strneq(key, "hf_", 3)) {
                c.api_key = strdup(key);
                if (!c.api_key) {
                        catalog_hf_config_release(&c);
                        return -ENOMEM;
                }
        }
        if (mm) {
                double d = json_number_value(mm);

                if (!json_is_number(mm) || d < 0 || d > UINT32_MAX) {
                        snprintf(reterr, n_reterr, "maxModels must be a non-negative number");
                        catalog_hf_config_release(&c);
                        return -EINVAL;
                }
                c.max_models = (uint32_t)d;
        }
        if (sync && catalog_parse_go_duration(sync, &c.sync_interval) < 0)
                c.sync_interval = CATALOG_HF_DEFAULT_SYNC_USEC; /* upstream: a warning */
        if (c.sync_interval < USEC_PER_SEC)
                c.sync_interval = USEC_PER_SEC;

        r = catalog_source_excluded(src, &excluded);
        if (r >= 0) {
                if (org && catalog_strv_length(src->included) == 0) {
                        c.included = calloc(2, sizeof(char *));
                        if (!c.included || asprintf(&c.included[0], "%s/*", org) < 0)
                                r = -ENOMEM;
                } else
                        r = strv_prefixed(src->included, org, &c.included);
        }
        if (r >= 0)
                r = strv_prefixed(excluded, org, &c.excluded);
        if (r < 0) {
                catalog_hf_config_release(&c);
                return r;
        }
        if (catalog_strv_length(c.included) == 0) {
                snprintf(reterr, n_reterr,
                         "includedModels cannot be empty for Hugging Face catalog");
                catalog_hf_config_release(&c);
                return -EINVAL;
        }
        *ret = c;
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

int catalog_hf_pattern_parse(const char *pattern, enum catalog_hf_pattern *ret_type, char **ret_org,
                             char **ret_prefix)
{
        AUTOFREE char *p = NULL;
        char *slash, *model;
        size_t len;

        *ret_org = *ret_prefix = NULL;
        *ret_type = CATALOG_HF_PATTERN_INVALID;
        /* trim spaces as upstream's strings.TrimSpace */
        while (*pattern && isspace((unsigned char)*pattern))
                pattern++;
        p = strdup(pattern);
        if (!p)
                return -ENOMEM;
        len = strlen(p);
        while (len > 0 && isspace((unsigned char)p[len - 1]))
                p[--len] = '\0';
        if (streq(p, "*") || streq(p, "*/*") || strneq(p, "*/", 2))
                return 0;
        if (len >= 2 && streq(p + len - 2, "/*")) {
                p[len - 2] = '\0';
                for (char *c = p; *c; c++)
                        if (!isspace((unsigned char)*c)) {
                                *ret_org = strdup(p);
                                if (!*ret_org)
                                        return -ENOMEM;
                                *ret_type = CATALOG_HF_PATTERN_ORG_ALL;
                                return 0;
                        }
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
                model[len - 1] = '\0';
                *ret_org = strdup(p);
                *ret_prefix = strdup(model);
                if (!*ret_org || !*ret_prefix) {
                        free(*ret_org);
                        free(*ret_prefix);
                        *ret_org = *ret_prefix = NULL;
                        return -ENOMEM;
                }
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

int catalog_parse_go_duration(const char *s, usec_t *ret)
{
        static const struct {
                const char *unit;
                double usec;
        } units[] = {
                { "ns", 1e-3 }, { "us", 1 },  { "\xc2\xb5s", 1 }, { "\xce\xbcs", 1 },
                { "ms", 1e3 },  { "s", 1e6 }, { "m", 60e6 },      { "h", 3600e6 },
        };
        double total = 0;

        if (!s || !*s)
                return -EINVAL;
        if (streq(s, "0")) {
                *ret = 0;
                return 0;
        }
        while (*s) {
                char *end;
                double v;
                size_t best = 0, best_len = 0;

                if (!isdigit((unsigned char)*s) && *s != '.')
                        return -EINVAL;
                errno = 0;
                v = strtod(s, &end);
                if (errno != 0 || end == s)
                        return -EINVAL;
                s = end;
                for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                        size_t l = strlen(units[i].unit);

                        if (strneq(s, units[i].unit, l) && l > best_len) {
                                best = i;
                                best_len = l;
                        }
                }
                if (best_len == 0)
                        return -EINVAL;
                total += v * units[best].usec;
                s += best_len;
        }
        if (!(total < 1.8e19))
                return -EINVAL;
        *ret = (usec_t)total;
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

/* upstream's heuristic: generative wins over predictive; nothing known is "unknown" */
static const char *model_type_of(const json_t *tasks)
{
        bool predictive = false;
        size_t i;
        json_t *t;

        json_array_foreach(tasks, i, t) {
                char buf[128];
                const char *s = json_string_value(t);
                size_t k = 0;

                while (s && isspace((unsigned char)*s))
                        s++;
                for (; s && *s && k + 1 < sizeof(buf); s++)
                        buf[k++] = (char)tolower((unsigned char)*s);
                while (k > 0 && isspace((unsigned char)buf[k - 1]))
                        k--;
                buf[k] = '\0';
                if (in_list(generative_tasks, ELEMENTSOF(generative_tasks), buf))
                        return "generative";
                if (in_list(predictive_tasks, ELEMENTSOF(predictive_tasks), buf))
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

int catalog_hf_model_from_info(const json_t *info, const char *fallback_name, const char *readme,
                               int64_t synced_ms, struct catalog_model_data *ret)
{
        const char *id = json_string_value(json_object_get(info, "id"));
        const char *name = id && id[0] ? id : json_string_value(json_object_get(info, "modelId"));
        const json_t *tags = json_object_get(info, "tags"), *card, *v;
        const json_t *cfg = json_object_get(info, "config");
        const char *task = json_string_value(json_object_get(info, "task"));
        const char *pipeline = json_string_value(json_object_get(info, "pipeline_tag"));
        json_auto_t *m = json_object(), *custom = json_object(), *tasks = json_array(),
                    *arts = json_array();
        AUTOFREE char *tags_text = NULL, *arch_text = NULL;
        const char *license = NULL, *gated;
        char stamp[32];
        int64_t ms;
        size_t i;
        int r = 0;

        if (!json_is_object(info))
                return -EINVAL;
        if (!m || !custom || !tasks || !arts)
                return -ENOMEM;
        if (!name || !name[0])
                name = fallback_name;
        r = set_string(m, "name", name);
        if (r >= 0 && id && id[0])
                r = set_string(m, "externalId", id);
        v = json_object_get(info, "createdAt");
        if (r >= 0 && json_is_string(v) && catalog_hf_parse_time(json_string_value(v), &ms) == 0) {
                snprintf(stamp, sizeof(stamp), "%" PRId64, ms);
                r = set_string(m, "createTimeSinceEpoch", stamp);
        }
        v = json_object_get(info, "lastModified");
        if (r >= 0 && json_is_string(v) && catalog_hf_parse_time(json_string_value(v), &ms) == 0) {
                snprintf(stamp, sizeof(stamp), "%" PRId64, ms);
                r = set_string(m, "lastUpdateTimeSinceEpoch", stamp);
        }
        /* license: the first "license:" tag; the other tags become hf_tags */
        json_array_foreach(tags, i, v) {
                const char *t = json_string_value(v);

                if (!license && t && strneq(t, "license:", 8) && t[8])
                        license = t + 8;
        }
        if (r >= 0)
                r = set_string(m, "license", license);
        if (r >= 0 && readme)
                r = json_object_set_new(m, "readme", json_string(readme)) < 0 ? -ENOMEM : 0;
        /* upstream reads the card from cardData.data (sic) */
        card = json_object_get(json_object_get(info, "cardData"), "data");
        if (r >= 0 && json_is_object(card)) {
                static const char *const link_keys[] = { "license_link", "licenseLink",
                                                         "license_url", "licenseUrl", "license" };
                json_auto_t *langs = json_array();

                r = langs ? set_string(m, "description",
                                       json_string_value(json_object_get(card, "description")))
                          : -ENOMEM;
                json_array_foreach(json_object_get(card, "language"), i, v)
                        if (r >= 0 && json_string_value(v) && json_string_value(v)[0])
                                r = json_array_append(langs, (json_t *)v) < 0 ? -ENOMEM : 0;
                if (r >= 0 && json_array_size(langs) > 0)
                        r = json_object_set(m, "language", langs) < 0 ? -ENOMEM : 0;
                for (size_t k = 0; r >= 0 && k < ELEMENTSOF(link_keys); k++) {
                        const char *l = json_string_value(json_object_get(card, link_keys[k]));

                        if (l && (strneq(l, "http://", 7) || strneq(l, "https://", 8))) {
                                r = set_string(m, "licenseLink", l);
                                break;
                        }
                }
        }
        if (r >= 0)
                r = set_string(m, "provider", json_string_value(json_object_get(info, "author")));
        if (r >= 0)
                r = set_string(m, "libraryName",
                               json_string_value(json_object_get(info, "library_name")));
        if (r >= 0)
                r = set_string(m, "logo", HF_LOGO);
        if (r >= 0 && task && task[0])
                r = json_array_append_new(tasks, json_string(task)) < 0 ? -ENOMEM : 0;
        if (r >= 0 && pipeline && pipeline[0] && !(task && streq(task, pipeline)))
                r = json_array_append_new(tasks, json_string(pipeline)) < 0 ? -ENOMEM : 0;
        if (r >= 0 && json_array_size(tasks) > 0)
                r = json_object_set(m, "tasks", tasks) < 0 ? -ENOMEM : 0;

        /* custom properties, all strings, as upstream */
        if (r >= 0)
                r = set_custom(custom, "model_type", model_type_of(tasks));
        if (r >= 0)
                r = set_custom(custom, "hf_private",
                               json_is_true(json_object_get(info, "private")) ? "true" : "false");
        v = json_object_get(info, "gated");
        if (json_is_boolean(v))
                gated = json_is_true(v) ? "true" : "false";
        else
                gated = json_is_string(v) ? json_string_value(v) : "";
        if (r >= 0)
                r = set_custom(custom, "hf_gated", gated);
        tags_text = strings_json(tags, "license:");
        arch_text = strings_json(json_object_get(cfg, "architectures"), NULL);
        if (!tags_text || !arch_text)
                return -ENOMEM;
        if (r >= 0 && tags_text[0])
                r = set_custom(custom, "hf_tags", tags_text);
        if (r >= 0 && arch_text[0])
                r = set_custom(custom, "hf_architectures", arch_text);
        v = json_object_get(cfg, "model_type");
        if (r >= 0 && json_string_value(v) && json_string_value(v)[0])
                r = set_custom(custom, "hf_model_type", json_string_value(v));
        snprintf(stamp, sizeof(stamp), "%" PRId64, synced_ms);
        if (r >= 0)
                r = set_custom(custom, "last_synced", stamp);
        if (r >= 0)
                r = json_object_set(m, "customProperties", custom) < 0 ? -ENOMEM : 0;

        /* one model artifact hf://<id> (KServe's storage initializer), with the model's times */
        if (r >= 0 && id && id[0]) {
                json_t *a = json_object();
                AUTOFREE char *uri = NULL, *aname = NULL;

                if (!a || asprintf(&uri, "hf://%s", id) < 0 ||
                    asprintf(&aname, "%s-hf-artifact", name) < 0 ||
                    json_array_append_new(arts, a) < 0) {
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
                                       json_string_value(
                                               json_object_get(m, "createTimeSinceEpoch")));
                if (r >= 0)
                        r = set_string(a, "lastUpdateTimeSinceEpoch",
                                       json_string_value(
                                               json_object_get(m, "lastUpdateTimeSinceEpoch")));
                if (r >= 0)
                        r = json_object_set_new(a, "customProperties", json_object()) < 0 ? -ENOMEM
                                                                                          : 0;
        }
        if (r < 0)
                return r;
        ret->name = strdup(name);
        if (!ret->name)
                return -ENOMEM;
        ret->model = TAKE_PTR(m);
        ret->artifacts = TAKE_PTR(arts);
        ret->line = 0;
        return 0;
}
