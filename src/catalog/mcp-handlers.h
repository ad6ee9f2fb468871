/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The MCP catalog API (/api/mcp_catalog/v1alpha1, spec C.9): MCP servers (filterQuery, named
 * queries of assetType mcp_servers, sourceLabel, orderBy, includeTools/toolLimit), their filter
 * options, one server, and its tools. Route handlers for catalog/handlers.c.
 */

#include "catalog/reply.h"

int catalog__handle_mcp_servers(struct catalog__ctx *c, struct http_req *req,
                                struct http_resp *resp);
int catalog__handle_mcp_filter_options(struct catalog__ctx *c, struct http_req *req,
                                       struct http_resp *resp);
int catalog__handle_mcp_server(struct catalog__ctx *c, struct http_req *req,
                               struct http_resp *resp);
int catalog__handle_mcp_tools(struct catalog__ctx *c, struct http_req *req, struct http_resp *resp);
int catalog__handle_mcp_tool(struct catalog__ctx *c, struct http_req *req, struct http_resp *resp);
