/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The catalog index: one immutable, refcounted snapshot of everything the API serves (merged
 * sources config, per-source status, models with stable ids, precomputed filter options). The
 * service builds a new snapshot aside on every reload and swaps it in whole; a request holds a
 * reference for its whole duration, so it is answered entirely from one snapshot.
 *
 * Queries are pure functions of (snapshot, query) returning wire JSON:
 *   - models/artifacts use the registry token format base64("<id>:<value>") with keyset
 *     semantics: the next page starts strictly after (value, id) in the current order, so pages
 *     never repeat or skip an item, even when a reload happened between two pages;
 *   - sources/labels use the in-memory format base64("<value>:<id>"); an unknown token restarts
 *     from the beginning (spec C.7).
 * Errors: -EINVAL with a message for the 400 body; -ENOENT (get) for 404; -ENOMEM.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/performance.h"
#include "filterq/eval.h"
#include "catalog/sources.h"
#include "catalog/yaml-catalog.h"
#include "util/buf.h"
#include "util/error-detail.h"
#include "util/macro.h"

enum catalog_source_state {
        CATALOG_SOURCE_AVAILABLE,
        CATALOG_SOURCE_PARTIALLY_AVAILABLE,
        CATALOG_SOURCE_ERROR,
        CATALOG_SOURCE_DISABLED,
        CATALOG_SOURCE__MAX,
        CATALOG_SOURCE__INVALID = -EINVAL,
};

const char *catalog_source_state_to_string(enum catalog_source_state s);

/* What the loader found for one configured source (input of catalog_index_build()). */
struct catalog_source_load {
        enum catalog_source_state state;
        char *error;                 /* owned; NULL unless there is an error message */
        struct catalog_models *data; /* owned reference; NULL when nothing can be served */
};

void catalog_source_load_release(struct catalog_source_load *l);

/*
 * Stable ids across snapshots: (source id, model name) and (model, artifact index) keep their
 * numeric ids as long as they keep existing. Owned by the service, used only by the builder
 * (not thread-safe; one reload at a time).
 */
struct catalog_ids;
struct catalog_ids *catalog_ids_new(void);
struct catalog_ids *catalog_ids_free(struct catalog_ids *ids);
DEFINE_CLEANUP_FUNC(struct catalog_ids *, catalog_ids_free)

struct catalog_index;

/*
 * Builds a snapshot. Takes ownership of *config (reset to empty) and of the loads array contents
 * (n_loads == config->n_sources, same order; each load is reset). ids is updated.
 */
_warn_unused_result_ int catalog_index_build(struct catalog_config *config,
                                             struct catalog_source_load *loads, size_t n_loads,
                                             struct catalog_ids *ids, struct catalog_index **ret);
struct catalog_index *catalog_index_ref(struct catalog_index *idx);
struct catalog_index *catalog_index_unref(struct catalog_index *idx);
DEFINE_CLEANUP_FUNC(struct catalog_index *, catalog_index_unref)

size_t catalog_index_n_models(const struct catalog_index *idx);
/* Borrowed config of the snapshot. */
const struct catalog_config *catalog_index_config(const struct catalog_index *idx);
/* Borrowed data of a source in the snapshot (NULL if none) and its state. */
struct catalog_models *catalog_index_source_data(const struct catalog_index *idx, const char *id);
enum catalog_source_state catalog_index_source_state(const struct catalog_index *idx,
                                                     const char *id);

enum catalog_order {
        CATALOG_ORDER_ID,
        CATALOG_ORDER_NAME,
        CATALOG_ORDER_CREATE_TIME,
        CATALOG_ORDER_LAST_UPDATE_TIME,
        CATALOG_ORDER_ACCURACY,
        CATALOG_ORDER_PROPERTY, /* order_property + order_suffix */
};

/* Common list parameters. All strings borrowed. */
struct catalog_page {
        uint32_t page_size; /* >= 1 */
        bool desc;
        const char *token; /* NULL or "" for the first page */
};

struct catalog_model_query {
        struct catalog_page page;
        char **sources;       /* borrowed strv; NULL = all */
        char **source_labels; /* borrowed strv; NULL = all; "null" = sources without labels */
        const char *q;        /* NULL = no search */
        const struct filterq_node *filter; /* borrowed; NULL = no filter */
        enum catalog_order order;
        const char *order_property; /* CATALOG_ORDER_PROPERTY: "provider", "artifacts.x" */
        enum filterq_suffix order_suffix;
};

/*
 * Upstream answers a comparison whose typed property cannot take the literal
 * (`hardware_type.string_value = 5.0`, `x.int_value = 'a'`) with 400 however many entities exist:
 * -EDOM for such a tree. The list functions also return -EDOM when a value met during the scan
 * cannot be compared (filterq_compare_metadata()).
 */
_warn_unused_result_ int catalog_filter_check_types(const struct filterq_node *n);

/* Parses a models orderBy value ("NAME", "provider.string_value", "artifacts.x.double_value"). */
_warn_unused_result_ int catalog_order_parse_models(const char *s, enum catalog_order *ret_order,
                                                    char **ret_property,
                                                    enum filterq_suffix *ret_suffix);

_warn_unused_result_ int catalog_index_list_models(const struct catalog_index *idx,
                                                   const struct catalog_model_query *q,
                                                   json_t **ret, struct error_detail *reterr);

/*
 * The same page, serialized: appends the CatalogModelList JSON text to out (models are
 * serialized once per snapshot, so this is concatenation). -E2BIG when out's cap is reached.
 */
_warn_unused_result_ int catalog_index_list_models_text(const struct catalog_index *idx,
                                                        const struct catalog_model_query *q,
                                                        struct buf *out,
                                                        struct error_detail *reterr);

/* GET one model as JSON text: borrowed, valid while the caller holds its reference on idx. */
_warn_unused_result_ int catalog_index_get_model_text(const struct catalog_index *idx,
                                                      const char *source_id, const char *name,
                                                      const char **ret_text, size_t *ret_len);

/* GET one model: new reference to its wire JSON; -ENOENT. */
_warn_unused_result_ int catalog_index_get_model(const struct catalog_index *idx,
                                                 const char *source_id, const char *name,
                                                 json_t **ret);

struct catalog_artifact_query {
        struct catalog_page page;
        char **artifact_types; /* borrowed strv; NULL = all */
        bool performance_only; /* metricsType == performance-metrics */
        const struct filterq_node *filter;
        const char *order_by; /* NULL = ID; NAME, CREATE_TIME, LAST_UPDATE_TIME, <p>.<type>_value */
        const struct catalog_perf_params *perf; /* NULL = none; see catalog/performance.h */
};

/*
 * -ENOENT when the model does not exist (the handler turns that into 400, as upstream); -EINVAL
 * (reterr) for a bad token or orderBy, or perf property names that no selected artifact has.
 * With perf->recommendations the page is cut from the recommended list in orderBy order, after
 * the item whose id the token names (upstream: an undecodable token is the first page).
 */
_warn_unused_result_ int catalog_index_list_artifacts(const struct catalog_index *idx,
                                                      const char *source_id, const char *name,
                                                      const struct catalog_artifact_query *q,
                                                      json_t **ret, struct error_detail *reterr);

struct catalog_source_query {
        struct catalog_page page;
        const char *name;       /* case-insensitive substring; NULL = all */
        const char *asset_type; /* "models" (default) | "mcp_servers"; others -> empty list */
        bool order_by_name;     /* else ID */
};

_warn_unused_result_ int catalog_index_list_sources(const struct catalog_index *idx,
                                                    const struct catalog_source_query *q,
                                                    json_t **ret);

struct catalog_label_query {
        struct catalog_page page;
        const char *asset_type; /* validated by the caller */
        const char *order_by;   /* NULL = config order */
};

_warn_unused_result_ int catalog_index_list_labels(const struct catalog_index *idx,
                                                   const struct catalog_label_query *q,
                                                   json_t **ret);

/* New reference to the precomputed FilterOptionsList. */
json_t *catalog_index_filter_options(const struct catalog_index *idx);

/* ---- MCP catalog (C.9) ---- */

/* Borrowed array of MCPServer wire objects (with id, source_id, toolCount). */
json_t *catalog_index_mcp_servers(const struct catalog_index *idx);
/* New reference to the MCP FilterOptionsList. */
json_t *catalog_index_mcp_filter_options(const struct catalog_index *idx);

struct catalog_mcp_query {
        struct catalog_page page;
        const char *name;     /* SQL LIKE pattern on the name; NULL = all */
        const char *q;        /* substring of name, description, provider */
        char **source_labels; /* as for models */
        const struct filterq_node *filter;
        enum catalog_order order; /* ID, NAME, CREATE_TIME, LAST_UPDATE_TIME */
        bool include_tools;
        uint32_t tool_limit;
};

_warn_unused_result_ int catalog_index_list_mcp(const struct catalog_index *idx,
                                                const struct catalog_mcp_query *q, json_t **ret,
                                                struct error_detail *reterr);
/* -ENOENT when absent. */
_warn_unused_result_ int catalog_index_get_mcp(const struct catalog_index *idx, const char *id,
                                               bool include_tools, uint32_t tool_limit,
                                               json_t **ret);
_warn_unused_result_ int catalog_index_list_mcp_tools(const struct catalog_index *idx,
                                                      const char *id,
                                                      const struct catalog_page *page,
                                                      const struct filterq_node *filter,
                                                      json_t **ret);
_warn_unused_result_ int catalog_index_get_mcp_tool(const struct catalog_index *idx, const char *id,
                                                    const char *tool, json_t **ret);

/* In-memory list helpers shared with the preview endpoint. */
char *catalog_token_encode(const char *value, const char *id); /* base64("<value>:<id>"), owned */

/*
 * Pages over n in-memory items identified by ids[i] with sort values values[i] (already in
 * order): finds the start after token (0 when absent/unknown) and returns [*ret_start, *ret_end)
 * plus an owned next token (NULL when no more).
 */
_warn_unused_result_ int catalog_page_memory(char *const *values, char *const *ids, size_t n,
                                             const struct catalog_page *page, size_t *ret_start,
                                             size_t *ret_end, char **ret_next);
