/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * POST /sources/preview (spec C.6): the model names a source config would include, from a
 * multipart/form-data body (part "config", and for a yaml source optionally "catalogData"; or
 * the yamlCatalogPath of a configured source), paged, with the included/excluded summary. hf
 * sources ask the hub for the names of their patterns. Bad configs are 422.
 */

#include "catalog/reply.h"

/* A catalog route handler (catalog/handlers.c routes to it). */
int catalog__handle_preview(struct catalog__ctx *c, struct http_req *req, struct http_resp *resp);
