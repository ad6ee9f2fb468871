/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The batcher's pure core: which requests can be merged, the merged request, and the model
 * server's answer split back per caller, in order.
 *
 * V1 (KServe's batcher, ":predict" paths): {"instances":[...]} requests are concatenated into one
 * {"instances":[...]}; the answer's "predictions" array must have one entry per instance and each
 * caller gets {"predictions":[its entries],"batchId":...,"message":""} as KServe's agent answers.
 * V2 ("/infer" paths; KServe's batcher does not batch these, this is modelplane's addition):
 * {"inputs":[{"name","shape":[n,...],"datatype","data":[flat]}...]} requests whose inputs agree on
 * everything but the first dimension (names, order, datatypes, the other dimensions, parameters)
 * are merged along it; each output of the answer must have the summed first dimension and is cut
 * back into the callers' rows.
 */

#include <errno.h>
#include <stddef.h>

#include "util/macro.h"

struct json_t;

enum batch_kind {
        BATCH_V1,
        BATCH_V2,
        BATCH_KIND__MAX,
        BATCH_KIND__INVALID = -EINVAL,
};

/* The protocol of a request path: V1 for ".../models/NAME:predict", V2 for
 * ".../models/NAME[/versions/V]/infer", else BATCH_KIND__INVALID (passed through). */
enum batch_kind batch_kind_of_path(const char *path);

/* One parsed request. Read-only outside batch.c. */
struct batch_req {
        enum batch_kind kind;
        size_t rows;  /* instances (V1) or the first dimension (V2) */
        char *key;    /* what must agree for two requests to merge (owned) */
        char *req_id; /* V2 "id", echoed in the caller's answer (owned, may be NULL) */
        struct json_t *body;
};

/*
 * Parses a request body. Returns 0, -EBADMSG (not JSON, no or empty "instances"/"inputs", shapes
 * that do not match the data), -EMEDIUMTYPE (V2: well-formed but not mergeable: nested data, no
 * shape, top-level fields other than id/inputs/parameters; pass it through unbatched), -EINVAL
 * (@kind is neither) or -ENOMEM.
 */
_warn_unused_result_ int batch_req_parse(enum batch_kind kind, const char *body, size_t len,
                                         struct batch_req *ret);
void batch_req_release(struct batch_req *r);

/* The merged request body of @n requests with the same key. Owned JSON text, NULL on OOM. */
char *batch_merge(const struct batch_req *reqs, size_t n);

/*
 * Splits the model server's 200 answer to a merged request into one answer per request.
 * @batch_id is the V1 "batchId". On success ret[i] (owned JSON text) is request i's answer.
 * Returns 0, -EBADMSG with @err set (not JSON, counts that do not add up) or -ENOMEM.
 */
_warn_unused_result_ int batch_split(const struct batch_req *reqs, size_t n, const char *resp,
                                     size_t resp_len, const char *batch_id, char **ret, char *err,
                                     size_t err_size);
