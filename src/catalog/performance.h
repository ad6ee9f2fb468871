/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Performance artifacts (GET .../artifacts/performance): the properties computed for a target
 * request rate and the "recommendations" filter, as upstream computes them. Pure functions over
 * CatalogMetricsArtifact wire objects (jansson); the index does the listing and paging.
 *
 * targetRPS > 0 adds two custom properties to every artifact:
 *   replicas                  = ceil(targetRPS / rps), clamped to [1, INT32_MAX] (MetadataIntValue)
 *   total_requests_per_second = replicas * rps                                (MetadataDoubleValue)
 * where rps is the artifact's rpsProperty double_value (1 when absent, not a double, or <= 0).
 *
 * recommendations=true (targetRPS defaults to 1 then) keeps, per hardware type (the
 * hardwareTypeProperty string_value; absent = one group ""), the cost/latency front:
 *   1. sort the group by latency (latencyProperty double_value; absent or <= 0 = +inf), ties by
 *      hardware count (hardwareCountProperty int_value; absent or <= 0 = INT32_MAX), then by input
 *      order;
 *   2. walk it keeping each artifact strictly cheaper than every one before it, where
 *      cost = hardware count (default 1) * replicas (default 1);
 *   3. walk the kept ones from cheapest to fastest and keep the cheapest, then each one whose
 *      latency improves on the last kept one by more than epsilon (relative): 5%, or 10% once a
 *      kept latency is <= 100.
 * The result keeps the input order (the list's orderBy order).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error-detail.h"
#include "util/macro.h"

#define CATALOG_PERF_RPS_DEFAULT      "requests_per_second"
#define CATALOG_PERF_LATENCY_DEFAULT  "ttft_p90"
#define CATALOG_PERF_HW_COUNT_DEFAULT "hardware_count"
#define CATALOG_PERF_HW_TYPE_DEFAULT  "hardware_type"

struct catalog_perf_params {
        int32_t target_rps; /* <= 0: no computed properties (unless recommendations) */
        bool recommendations;
        /* borrowed; NULL or "" = the upstream default name */
        const char *rps_property;
        const char *latency_property;
        const char *hw_count_property;
        const char *hw_type_property;
};

/* True when p asks for anything beyond a plain listing. */
bool catalog_perf_active(const struct catalog_perf_params *p);

/*
 * Every property name the caller gave explicitly must exist in at least one of the n artifacts
 * (an empty list passes). -EINVAL with "properties not found in any performance artifacts: [a b]".
 */
_warn_unused_result_ int catalog_perf_validate(json_t *const *artifacts, size_t n,
                                               const struct catalog_perf_params *p,
                                               struct error_detail *reterr);

/* Sets replicas and total_requests_per_second on artifact (a private copy) for target_rps > 0. */
_warn_unused_result_ int catalog_perf_add_target_rps(json_t *artifact, int32_t target_rps,
                                                     const char *rps_property);

/*
 * The recommendations filter: sets keep[i] for the artifacts that stay (keep has n entries).
 * Artifacts must already carry replicas when a target rate applies.
 */
_warn_unused_result_ int catalog_perf_recommend(json_t *const *artifacts, size_t n,
                                                const struct catalog_perf_params *p, bool *keep);
