/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The model an inference request is for, from its request target (KServe's V1 and V2 REST
 * protocols); what the proxy routes on under placement (docs/placement.md). Pure.
 *
 *   V1: /v1/models/<m>, /v1/models/<m>:predict, /v1/models/<m>:explain (any ":<verb>")
 *   V2: /v2/models/<m>, /v2/models/<m>/<rest> (infer, ready, generate, ...),
 *       /v2/models/<m>/versions/<v>[/<rest>]
 *
 * The query and fragment are ignored; an absolute-form target ("http://host:port/v2/...") is
 * read from its path. The name is not percent-decoded (model names are Kubernetes names).
 */

#include <stddef.h>

/* The longest name returned: a Kubernetes object name (DNS-1123 subdomain). */
#define INFER_PATH_MODEL_MAX 253

/*
 * Copies the model that target[0..len) names into @name (INFER_PATH_MODEL_MAX + 1 bytes,
 * NUL-terminated) and returns its length; returns 0 (name "") when the target names none: another
 * path, an empty name, a name over INFER_PATH_MODEL_MAX bytes or with a byte outside visible
 * ASCII.
 */
size_t infer_path_model(const char *target, size_t len, char *name);
