/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The catalog's source configurations for administrators (docs/ui.md, "Settings"), upstream's
 * /api/v1/settings/model_catalog/source_configs: the catalog's sources live in two ConfigMaps of
 * its namespace, each with a `sources.yaml` (the catalog's --catalogs-path reads the default one,
 * then the user one, a later file overriding an earlier one field by field per source id):
 *
 *   model-catalog-default-sources  shipped with the catalog; read here, never written
 *   model-catalog-sources          the administrators' sources and their overrides of the
 *                                  defaults; each yaml source's catalog under the key <id>.yaml
 *
 * A Hugging Face source's API key goes into the Secret catalog-<id, '_' as '-'>-apikey (key
 * apiKey, labelled as upstream labels it), named by the entry's properties.apiKey.
 *
 * Pure: the ConfigMaps' data in, the views and the user ConfigMap's next data (and the Secret to
 * write or delete) out. Upstream's rules: ids of [a-z0-9_] with a letter or digit, at most 238
 * bytes; name and type required; type yaml (with the catalog's YAML) or hf (with
 * allowedOrganization); a default source cannot be deleted, and an override of one may change
 * only enabled, includedModels, excludedModels and allowedOrganization; no source changes type.
 */

#include <jansson.h>
#include <stddef.h>

#include "util/error-detail.h"
#include "util/macro.h"

#define UI_CATALOG_DEFAULT_SOURCES_CM "model-catalog-default-sources"
#define UI_CATALOG_SOURCES_CM         "model-catalog-sources"
#define UI_CATALOG_SOURCES_KEY        "sources.yaml"
#define UI_CATALOG_ID_MAX             238U
/* One source's YAML catalog (a ConfigMap holds at most 1 MiB in all). */
#define UI_CATALOG_YAML_MAX ((size_t)1024 * 1024)

/* The two ConfigMaps' data (borrowed; NULL when the ConfigMap does not exist). */
struct ui_catalog_cms {
        const json_t *defaults;
        const json_t *user;
};

enum ui_catalog_secret_action {
        UI_CATALOG_SECRET_NONE,
        UI_CATALOG_SECRET_PUT,    /* create or replace secret_name with api_key */
        UI_CATALOG_SECRET_DELETE, /* delete secret_name (a missing one is fine) */
};

/* What a change writes: the user ConfigMap's new data, and the Secret first. */
struct ui_catalog_change {
        json_t *user_data; /* owned */
        enum ui_catalog_secret_action secret;
        char secret_name[254];
        char source_label[64]; /* the hub.kubeflow.org/hf-source label's value */
        char *api_key;         /* owned; UI_CATALOG_SECRET_PUT */
};

void ui_catalog_change_done(struct ui_catalog_change *c);

/*
 * Upstream's CatalogSourceConfigList {catalogs: [...]} of both ConfigMaps, merged per id and
 * sorted by id; each with isDefault, never an API key. Returns 0 with *ret a new reference,
 * -EINVAL with the reason in err (a sources.yaml that does not parse), -ENOMEM. Every function
 * here fills err (may be NULL) when it refuses.
 */
_warn_unused_result_ int ui_catalog_sources_list(const struct ui_catalog_cms *cms, json_t **ret,
                                                 struct error_detail *err);

/* One source, merged, with its yamlCatalogPath and yaml for a yaml source. -ENOENT when no
 * ConfigMap has it, -EINVAL as above. */
_warn_unused_result_ int ui_catalog_source_get(const struct ui_catalog_cms *cms, const char *id,
                                               json_t **ret, struct error_detail *err);

/*
 * A new source from upstream's CatalogSourceConfigPayload (borrowed). -EINVAL (400) for an
 * invalid payload or an id that exists already, with the reason in err; -ENOMEM.
 */
_warn_unused_result_ int ui_catalog_source_create(const struct ui_catalog_cms *cms,
                                                  const json_t *payload,
                                                  struct ui_catalog_change *ret,
                                                  struct error_detail *err);

/*
 * The source id changed by the payload's fields (a PATCH: only what it sets). -ENOENT, -EPERM
 * (403: a type change, or a field a default source keeps), -EINVAL (400), -ENOMEM. An apiKey of
 * "" removes the key (its Secret is deleted).
 */
_warn_unused_result_ int ui_catalog_source_update(const struct ui_catalog_cms *cms, const char *id,
                                                  const json_t *payload,
                                                  struct ui_catalog_change *ret,
                                                  struct error_detail *err);

/* The source id removed with its YAML catalog and its Secret. -ENOENT, -EPERM (a default source),
 * -ENOMEM. *ret_view (optional) is what was removed, as ui_catalog_source_get() shows it. */
_warn_unused_result_ int ui_catalog_source_delete(const struct ui_catalog_cms *cms, const char *id,
                                                  struct ui_catalog_change *ret, json_t **ret_view,
                                                  struct error_detail *err);

/* The longest Secret name (a DNS subdomain) and API key read from a Secret. */
#define UI_CATALOG_SECRET_NAME_MAX 253U
#define UI_CATALOG_KEY_MAX         4096U

/*
 * The Secret a preview reads its key from (upstream's BFF does): data (upstream's
 * CatalogSourcePreviewRequest, borrowed) of type hf that names a configured source by its "id" and
 * carries no properties.apiKey. Returns 1 with the Secret's name (the source's properties.apiKey,
 * its user entry's, else its default's) in ret_name, which has UI_CATALOG_SECRET_NAME_MAX + 1
 * bytes; 0 when the preview reads none (another type, no id, a key in the request, a source
 * without a key); -ENOENT (no such source), -EINVAL (the id names a source of another type, a
 * sources.yaml that does not parse, a key property that is no Secret name), -ENOMEM; err says why.
 */
_warn_unused_result_ int ui_catalog_preview_secret(const struct ui_catalog_cms *cms,
                                                   const json_t *data, char *ret_name,
                                                   struct error_detail *err);

/*
 * The API key of a Secret (the object as the API server answers it, borrowed): its data.apiKey,
 * base64-decoded, at most UI_CATALOG_KEY_MAX bytes, no NUL. 0 with *ret (owned; the caller wipes
 * and frees it), -EINVAL in words (no apiKey in it, not base64, too long), -ENOMEM.
 */
_warn_unused_result_ int ui_catalog_secret_key(const json_t *secret, char **ret,
                                               struct error_detail *err);

/*
 * Upstream's CatalogSourcePreviewRequest (data, borrowed) as the catalog's POST /sources/preview
 * body, multipart/form-data with boundary, as upstream's BFF sends it: the part "config"
 * (config.json: type, includedModels, excludedModels, and properties: allowedOrganization and
 * apiKey of an hf source, yamlCatalogPath of a yaml source without yaml) and, for a yaml source
 * with properties.yaml, the part "catalogData" (catalog.yaml). api_key (borrowed; NULL: none)
 * is an hf source's key read from its Secret (ui_catalog_preview_secret()), sent in place of the
 * request's. Returns 0 with *ret (owned, NUL
 * terminated) and *ret_len; -EINVAL (400) with the reason in err; -EEXIST when the boundary
 * occurs in the content (choose another); -ENOMEM.
 */
_warn_unused_result_ int ui_catalog_preview_body(const json_t *data, const char *api_key,
                                                 const char *boundary, char **ret, size_t *ret_len,
                                                 struct error_detail *err);
