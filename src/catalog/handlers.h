/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * HTTP handlers of the model catalog API (base /api/model_catalog/v1alpha1, spec C.6) and the MCP
 * catalog API (/api/mcp_catalog/v1alpha1, C.9). Each
 * request takes one reference on the current index snapshot and answers entirely from it.
 * Errors use the upstream body {"code": "<reason phrase>", "message": "..."}: invalid query
 * parameters are 400, unknown models 404 (400 on the artifact routes, as upstream), bad preview
 * configs 422. Unknown paths get chi's text/plain "404 page not found"; known paths with another
 * method 405.
 */

#include "catalog/service.h"
#include "http/server.h"
#include "util/macro.h"

#define CATALOG_API_BASE     "/api/model_catalog/v1alpha1"
#define CATALOG_MCP_API_BASE "/api/mcp_catalog/v1alpha1"

/* An http_handler_fn; userdata is the struct catalog_service (borrowed). */
int catalog_http_handle(void *userdata, struct http_req *req, struct http_resp *resp);
