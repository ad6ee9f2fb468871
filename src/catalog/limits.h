/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Every externally controlled size in the catalog, in one place (house style 5.7).
 */

/* Largest sources file or YAML catalog file we read; bigger files are an error (-EFBIG). */
#define CATALOG_FILE_MAX (64U * 1024U * 1024U)
/* Sources across all model_catalogs/mcp_catalogs lists of all config files. */
#define CATALOG_SOURCES_MAX 256U
/* Models in one YAML catalog file. */
#define CATALOG_MODELS_PER_SOURCE_MAX 100000U
/* Artifacts of one model. */
#define CATALOG_ARTIFACTS_PER_MODEL_MAX 1024U
/* Glob patterns in one includedModels/excludedModels list. */
#define CATALOG_PATTERNS_MAX 1024U
/* Labels and named queries in all config files together. */
#define CATALOG_LABELS_MAX        1024U
#define CATALOG_NAMED_QUERIES_MAX 1024U
/* YAML nodes visited while converting one file (defends against alias "billion laughs"). */
#define CATALOG_YAML_NODES_MAX (16U * 1024U * 1024U)
/* Nesting depth of a YAML value converted to JSON (customProperties etc.). */
#define CATALOG_YAML_DEPTH_MAX 64U
/* Config files given with --catalogs-path. */
#define CATALOG_CONFIG_FILES_MAX 32U
/* Page sizes and query parameters. */
#define CATALOG_PAGE_SIZE_DEFAULT 10U
#define CATALOG_PAGE_SIZE_MAX     100000U
#define CATALOG_TOKEN_MAX         1024U
/* filterQuery: FILTERQ_QUERY_MAX, FILTERQ_DEPTH_MAX, FILTERQ_CMP_MAX, FILTERQ_IN_MAX (filterq/filterq.h). */
/* filter_options: string options only for properties with fewer distinct values, each this short. */
#define CATALOG_FILTER_OPTION_VALUES_MAX    50U
#define CATALOG_FILTER_OPTION_VALUE_LEN_MAX 100U
/* hf sources: largest hub response (model list page, model info), model card, list pages per pattern. */
#define CATALOG_HF_BODY_MAX   (16U * 1024U * 1024U)
#define CATALOG_HF_README_MAX (4U * 1024U * 1024U)
#define CATALOG_HF_PAGES_MAX  1000U
/* Parse time (CPU time of the parsing thread) of one YAML file (sources, catalog, preview data) before it is refused. */
#define CATALOG_PARSE_USEC_MAX (10ULL * 1000000ULL)
/* POST /sources/preview request body (config + catalogData). */
#define CATALOG_PREVIEW_BODY_MAX (2U * 1024U * 1024U)
