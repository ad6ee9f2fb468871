/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * `hf` sources, the network part (libcurl): one sync of a source from the Hugging Face hub, and
 * the model names of a source preview, as upstream's hf provider does them:
 *
 *   1. an API key is checked first: GET /api/whoami-v2 (401/403: the sync fails);
 *   2. every includedModels pattern is expanded: exact ids as they are, "org/" "*" and
 *      "org/prefix" "*" through GET /api/models?author=org&limit=100[&search=prefix], following
 *      the Link rel="next" cursor, at most maxModels names per pattern (prefix matches are
 *      re-checked: the hub's search is fuzzy); a failing pattern is skipped unless nothing is
 *      left;
 *   3. every name the globs allow: GET /api/models/{id}, and the model card
 *      GET /{id}/raw/main/<README> when a README is among the siblings.
 * Models that fail make the result partial ("Failed to fetch some models, ... Failed models:
 * [a b]"); when none is left the sync fails. Messages name the cause (status, body excerpt,
 * libcurl error).
 *
 * Beyond upstream: a 429 is retried after its Retry-After (seconds or an HTTP date) when that is
 * at most opts.retry_wait_max, up to opts.retries times; every response body is bounded; every
 * request has a total timeout; opts.cancel stops a sync within a fraction of a second.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "catalog/hf.h"
#include "catalog/yaml-catalog.h"
#include "util/macro.h"
#include "util/time-util.h"

struct catalog_hf_opts {
        usec_t timeout;            /* per request, whole transfer; 0 = 30 s (upstream's client) */
        usec_t connect_timeout;    /* 0 = 10 s */
        unsigned retries;          /* retries after a 429; 0 = 3 */
        usec_t retry_wait_max;     /* longest Retry-After honoured; 0 = 60 s */
        const atomic_bool *cancel; /* optional: set to abort (the sync returns -ECANCELED) */
};

struct catalog_hf_result {
        struct catalog_models *data; /* owned; NULL when the sync failed */
        char *error;                 /* owned; NULL when everything was fetched */
};

void catalog_hf_result_release(struct catalog_hf_result *r);

/*
 * One sync. Returns 0 with the outcome in *ret (data and/or error), -ENOMEM, or -ECANCELED.
 */
_warn_unused_result_ int catalog_hf_sync(const struct catalog_hf_config *c,
                                         const struct catalog_hf_opts *opts,
                                         struct catalog_hf_result *ret);

/*
 * Source preview: the model names the patterns stand for (upstream: a failing pattern is
 * skipped, an exact id that cannot be fetched keeps its own name). -EINVAL with reterr for an
 * unsupported pattern or rejected credentials.
 */
_warn_unused_result_ int catalog_hf_preview_names(const struct catalog_hf_config *c,
                                                  const struct catalog_hf_opts *opts,
                                                  char ***ret_names, char *reterr, size_t n_reterr);
