/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * `hf` (Hugging Face) sources, the pure part: the source's settings, includedModels patterns, the
 * list API's paging header, and the conversion of the hub's model info into a catalog model, as
 * upstream's hf provider defines them. The network part is catalog/hf-sync.
 *
 * Settings (properties of the source):
 *   url                  base URL of the hub; default $HF_ENDPOINT (trailing '/' dropped, as
 *                        huggingface_hub reads it), else https://huggingface.co
 *   apiKeyEnvVar         the environment variable holding the API key (default HF_API_KEY); a key
 *                        without the "hf_" prefix is not sent (upstream)
 *   allowedOrganization  prefixes every includedModels/excludedModels pattern with "<org>/"; with
 *                        no includedModels it means "<org>/" + "*"
 *   maxModels            models listed per wildcard pattern (default 500; 0 = no limit)
 *   syncInterval         Go duration ("30s", "1h30m"; default 24h; invalid = default)
 * includedModels is required: exact ids ("org/name"), "org/" + "*" or "org/prefix" + "*"; a
 * wildcard organization and patterns without an organization are refused.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/sources.h"
#include "catalog/yaml-catalog.h"
#include "util/macro.h"
#include "util/time-util.h"

#define CATALOG_HF_DEFAULT_URL        "https://huggingface.co"
#define CATALOG_HF_DEFAULT_KEY_ENV    "HF_API_KEY"
#define CATALOG_HF_DEFAULT_MAX_MODELS 500
#define CATALOG_HF_DEFAULT_SYNC_USEC  (24ULL * 3600ULL * USEC_PER_SEC)
/* The list API's page size (the hub's maximum). */
#define CATALOG_HF_LIST_LIMIT 100

struct catalog_hf_config {
        char *source_id;     /* owned */
        char *base_url;      /* owned; no trailing '/' */
        char *api_key;       /* owned; NULL when none is sent */
        bool has_key;        /* a key was configured (even one that is not sent) */
        char **included;     /* owned strv (after allowedOrganization) */
        char **excluded;     /* owned strv (after allowedOrganization); may be NULL */
        uint32_t max_models; /* per wildcard pattern; 0 = no limit */
        usec_t sync_interval;
};

void catalog_hf_config_release(struct catalog_hf_config *c);

/* Reads the environment variable (getenv(3) when NULL); borrowed result or NULL. */
typedef const char *(*catalog_getenv_fn)(const char *name);

/*
 * The settings of an hf source (or a preview config). -EINVAL with a message in reterr for an
 * empty includedModels (after allowedOrganization) or a property of the wrong type.
 */
_warn_unused_result_ int catalog_hf_config_from_source(const struct catalog_source_config *src,
                                                       catalog_getenv_fn getenv_fn,
                                                       struct catalog_hf_config *ret, char *reterr,
                                                       size_t n_reterr);

/*
 * A preview config's own key (properties.apiKey, upstream's preview request: the console sends the
 * key typed in its form, or the one it read from the source's Secret) in place of the catalog's
 * environment key; a key without "hf_" is not sent, as ever. 0 (nothing changed when the config
 * has none), -ENOMEM. Never for a configured source: there properties.apiKey names a Secret.
 */
_warn_unused_result_ int catalog_hf_config_preview_key(const struct catalog_source_config *src,
                                                       struct catalog_hf_config *c);

/* An identity of the settings (JSON text, owned): a change means the source must sync again. */
char *catalog_hf_config_key(const struct catalog_hf_config *c);

enum catalog_hf_pattern {
        CATALOG_HF_PATTERN_EXACT,      /* "org/name": fetched directly */
        CATALOG_HF_PATTERN_ORG_ALL,    /* "org/" "*": listed by author */
        CATALOG_HF_PATTERN_ORG_PREFIX, /* "org/prefix*": listed by author with search=prefix */
        CATALOG_HF_PATTERN_INVALID,    /* a wildcard organization, "x" "*", "org/" ... */
};

/* Classifies one includedModels pattern; *ret_org / *ret_prefix are owned (NULL when unused). */
_warn_unused_result_ int catalog_hf_pattern_parse(const char *pattern,
                                                  enum catalog_hf_pattern *ret_type, char **ret_org,
                                                  char **ret_prefix);

/*
 * The cursor of the rel="next" link of a list response's Link header (owned; NULL when there is
 * none): the value of its "cursor" query parameter, as the hub sent it (still URL-encoded).
 */
_warn_unused_result_ int catalog_hf_link_next_cursor(const char *link, char **ret);

/* RFC 3339 ("2024-05-01T10:00:00.000Z") to epoch ms; -EINVAL. */
_warn_unused_result_ int catalog_hf_parse_time(const char *s, int64_t *ret_ms);

/*
 * Converts the hub's model info (GET /api/models/{id}) into a catalog model: fields, the
 * upstream custom properties (model_type, hf_private, hf_gated, hf_tags, hf_architectures,
 * hf_model_type, last_synced) and one hf://<id> model artifact. readme (may be NULL) is the
 * model card. fallback_name names the model when the info has no id. -EINVAL when info is no
 * JSON object.
 */
_warn_unused_result_ int catalog_hf_model_from_info(const json_t *info, const char *fallback_name,
                                                    const char *readme, int64_t synced_ms,
                                                    struct catalog_model_data *ret);

/* The README file names upstream looks for among a model's siblings, in its order. */
extern const char *const catalog_hf_readme_names[5];
