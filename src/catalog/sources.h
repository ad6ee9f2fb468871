/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The sources configuration (spec C.3): which catalogs exist, whether they are enabled, their
 * labels and model globs, plus the free-form labels list and the named queries. Parsed strictly:
 * an unknown or duplicate key, a missing or duplicate id, an invalid glob or named query rejects
 * the whole file with an error naming the file and line.
 *
 * Several files merge per source id, field by field: a later file overrides each field it sets
 * (name, enabled, labels, type, properties, includedModels, excludedModels); assetType of a model
 * source stays as first defined. Relative properties.yamlCatalogPath values resolve against the
 * directory of the file that set properties.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "catalog/yaml-util.h"
#include "util/macro.h"

enum catalog_asset_type {
        CATALOG_ASSET_MODELS,
        CATALOG_ASSET_MCP_SERVERS,
        CATALOG_ASSET__MAX,
        CATALOG_ASSET__INVALID = -EINVAL,
};

const char *catalog_asset_type_to_string(enum catalog_asset_type t);
enum catalog_asset_type catalog_asset_type_from_string(const char *s);

struct catalog_source_config {
        char *id;           /* owned; never NULL */
        char *name;         /* owned; NULL until set */
        char *type;         /* owned; NULL until set ("yaml", "hf") */
        int enabled;        /* -1 unset, 0, 1 */
        char **labels;      /* owned strv; NULL unset */
        char **included;    /* owned strv; NULL unset (includedModels / includedServers) */
        char **excluded;    /* owned strv; NULL unset (excludedModels / excludedServers) */
        char *asset_type;   /* owned; NULL unset */
        json_t *properties; /* owned; NULL unset */
        char *base_dir;     /* owned; directory of the file that set properties */
        bool is_mcp;        /* listed under mcp_catalogs */
};

struct catalog_config {
        struct catalog_source_config *sources; /* owned array, in first-appearance order */
        size_t n_sources;
        json_t *labels; /* owned; array of objects, each with "name" (string or null) */
        json_t *named_queries; /* owned; object name -> {"assetType": s, "filters": {f: {operator, value}}} */
};

void catalog_config_release(struct catalog_config *c);

/*
 * Parses one sources file from memory (file names errors and is the base of relative paths).
 * Returns -EINVAL (err filled), -E2BIG past the limits, -ENOMEM.
 */
_warn_unused_result_ int catalog_config_parse(const char *file, const char *data, size_t len,
                                              struct catalog_config *ret, struct error_detail *err);
/* Reads (bounded by CATALOG_FILE_MAX) and parses one file; -EFBIG for an oversized file. */
_warn_unused_result_ int catalog_config_load_file(const char *path, struct catalog_config *ret,
                                                  struct error_detail *err);
/* Merges src into dst (later wins field by field). */
_warn_unused_result_ int catalog_config_merge(struct catalog_config *dst,
                                              const struct catalog_config *src,
                                              struct error_detail *err);
/* Loads and merges files[0..n) in order; then applies defaults (enabled true, labels []). A file
 * after the first that does not exist adds nothing (an optional ConfigMap not created yet). */
_warn_unused_result_ int catalog_config_load(char *const *files, size_t n,
                                             struct catalog_config *ret, struct error_detail *err);

/* Borrowed; NULL when absent. */
const struct catalog_source_config *catalog_config_find(const struct catalog_config *c,
                                                        const char *id);

/*
 * The catalog file of a yaml source: properties.yamlCatalogPath resolved against base_dir.
 * -ENOENT when the property is missing. Owned result.
 */
_warn_unused_result_ int catalog_source_yaml_path(const struct catalog_source_config *s,
                                                  char **ret);
/* Effective exclude patterns: excluded + legacy properties.excludedModels. Owned strv. */
_warn_unused_result_ int catalog_source_excluded(const struct catalog_source_config *s,
                                                 char ***ret);

/*
 * Parses a standalone source definition (the "config" part of POST /sources/preview): type,
 * includedModels, excludedModels, properties ... without id. Strict like the sources file.
 */
_warn_unused_result_ int catalog_source_parse_preview(const char *file, const char *data,
                                                      size_t len, struct catalog_source_config *ret,
                                                      struct error_detail *err);
void catalog_source_config_release(struct catalog_source_config *s);
