/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The Kubeflow Model Registry REST API v1alpha3 (spec Part B) over the store port. One
 * http_handler_fn serves every route: the readiness endpoints, the pure route table, strict
 * decoding, and the error body {"code","message"} of B.2.
 */

#include "http/server.h"
#include "store/store.h"
#include "util/macro.h"

#define REG_BASE_PATH "/api/model_registry/v1alpha3"
/* Also served: the same API under the /v1 prefix used by newer clients. */
#define REG_V1_PATH "/api/model_registry/v1"

/* For http_server_config.too_large_json: the 413 reply in the registry's error shape. */
#define REG_TOO_LARGE_JSON \
        "{\"code\":\"Request Entity Too Large\",\"message\":\"request body too large\"}\n"

struct registry;

/* store is borrowed and must outlive the registry. */
_warn_unused_result_ int registry_new(struct store *store, struct registry **ret);
struct registry *registry_free(struct registry *r);
DEFINE_CLEANUP_FUNC(struct registry *, registry_free)

/* The http_handler_fn for http_server_config.handler; userdata is the struct registry. */
int registry_handle(void *userdata, struct http_req *req, struct http_resp *resp);
