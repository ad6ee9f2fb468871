/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The YAML catalog data file of a `yaml` source (spec C.4): `source:` plus `models:`, each model
 * with its artifacts. Parsed strictly: unknown keys, a model without name, a duplicate name, an
 * artifact without uri or with an unknown artifactType reject the whole file (file and line in
 * the error). MCP data files (`mcp_servers:`) are accepted as raw JSON objects.
 *
 * The result is wire-shaped and immutable once built: each model and each artifact a compact
 * record (catalog/record.h) of shared jansson values, so the index can hand out references
 * without copying.
 */

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/record.h"
#include "catalog/yaml-util.h"
#include "util/macro.h"

struct catalog_model_data {
        /* borrowed: the text of the "name" member (of model, then of rec: the same string value) */
        const char *name;
        /* owned; CatalogModel fields except id/source_id; full customProperties: the tree a
         * producer (the YAML parser, the hf conversion) builds, which catalog_models_stamp()
         * moves into rec (NULL afterwards) */
        json_t *model;
        struct catalog_record *rec; /* owned; the same members, compact (catalog/record.h) */
        /* owned; an array of CatalogArtifact objects a producer (the hf conversion) builds, which
         * catalog_models_stamp() moves into artifacts (NULL afterwards) */
        json_t *artifacts_json;
        /* owned: an array of n_artifacts references; the members of each CatalogArtifact
         * without id, compact (equal artifacts are one shared record) */
        struct catalog_record **artifacts;
        size_t n_artifacts;
        unsigned line; /* where the model starts in its file */
};

/* Drops what d owns and zeroes it. */
void catalog_model_data_release(struct catalog_model_data *d);

/* Refcounted and immutable after load: shared between successive index snapshots. */
struct catalog_models {
        unsigned refs;
        struct catalog_model_data *v; /* owned array */
        size_t n;
        json_t *mcp_servers; /* owned; array (MCP data files), NULL for model files */
};

struct catalog_models *catalog_models_ref(struct catalog_models *m);
struct catalog_models *catalog_models_unref(struct catalog_models *m);
DEFINE_CLEANUP_FUNC(struct catalog_models *, catalog_models_unref)

/*
 * Gives every model and artifact without createTimeSinceEpoch/lastUpdateTimeSinceEpoch the load
 * time (epoch ms as a string), as upstream stores them, so CREATE_TIME/LAST_UPDATE_TIME orderings
 * always have a value, and moves each model's and artifact's tree into its compact record (what
 * the index reads). catalog_models_parse() builds its models and artifacts so, with the current time (the
 * same stamp for all of one parse); every other producer of a struct catalog_models calls this
 * last.
 */
_warn_unused_result_ int catalog_models_stamp(struct catalog_models *m, int64_t load_ms);

/* Parses a catalog file from memory; -EINVAL with err, -E2BIG past the limits, -ENOMEM. */
_warn_unused_result_ int catalog_models_parse(const char *file, const char *data, size_t len,
                                              struct catalog_models **ret,
                                              struct error_detail *err);
/* Reads (bounded by CATALOG_FILE_MAX, -EFBIG) and parses. */
_warn_unused_result_ int catalog_models_load_file(const char *path, struct catalog_models **ret,
                                                  struct error_detail *err);
