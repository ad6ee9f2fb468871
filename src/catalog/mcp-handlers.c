/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/mcp-handlers.h"

#include <errno.h>
#include <stdio.h>

#include "catalog/index.h"
#include "catalog/reply.h"
#include "util/buf.h"
#include "util/parse-util.h"

static int append_literal(struct buf *b, const json_t *v)
{
        if (json_is_string(v)) {
                int r = buf_putc(b, '\'');

                for (const char *c = json_string_value(v); r >= 0 && *c; c++) {
                        if (*c == '\'' || *c == '\\')
                                r = buf_putc(b, '\\');
                        if (r >= 0)
                                r = buf_putc(b, *c);
                }
                return r < 0 ? r : buf_putc(b, '\'');
        }
        if (json_is_boolean(v))
                return buf_puts(b, json_is_true(v) ? "true" : "false");
        if (json_is_integer(v))
                return buf_printf(b, "%lld", (long long)json_integer_value(v));
        if (json_is_real(v))
                return buf_printf(b, "%.17g", json_real_value(v));
        return -EINVAL;
}

/* One filter's value: a literal, or "(a, b)" for a list (IN). */
static int append_filter_value(struct buf *b, const json_t *val)
{
        size_t i;
        json_t *e;
        int r;

        if (!json_is_array(val))
                return append_literal(b, val);
        r = buf_putc(b, '(');
        json_array_foreach(val, i, e) {
                if (r >= 0 && i > 0)
                        r = buf_puts(b, ", ");
                if (r >= 0)
                        r = append_literal(b, e);
        }
        return r < 0 ? r : buf_putc(b, ')');
}

/* Turns a named query's {field: {operator, value}} into filterQuery text. */
static int named_query_text(const json_t *filters, struct buf *b)
{
        const char *field;
        json_t *f;
        bool first = true;
        int r = 0;

        json_object_foreach((json_t *)filters, field, f) {
                r = buf_printf(b, "%s`%s` %s ", first ? "" : " AND ", field,
                               json_string_value(json_object_get(f, "operator")));
                first = false;
                if (r >= 0)
                        r = append_filter_value(b, json_object_get(f, "value"));
                if (r < 0)
                        return r;
        }
        return r;
}

static int parse_mcp_tools(const struct http_req *req, bool *include, uint32_t *limit,
                           struct http_resp *resp)
{
        const char *it = http_req_query(req, "includeTools");
        const char *tl = http_req_query(req, "toolLimit");
        int32_t n;

        *include = false;
        *limit = 10;
        if (it && it[0] && parse_boolean(it, include) < 0) {
                catalog__reply_error(resp, 400, "invalid includeTools '%s': bad request", it);
                return -EINVAL;
        }
        if (tl && tl[0]) {
                if (safe_atoi32(tl, &n) < 0 || n < 0 || n > 100) {
                        catalog__reply_error(resp, 400,
                                             "invalid toolLimit '%s' (0 to 100): bad request", tl);
                        return -EINVAL;
                }
                *limit = (uint32_t)n;
        }
        return 0;
}

static int parse_mcp_order(const char *ob, enum catalog_order *ret)
{
        if (!ob || !ob[0] || streq(ob, "ID"))
                *ret = CATALOG_ORDER_ID;
        else if (streq(ob, "NAME"))
                *ret = CATALOG_ORDER_NAME;
        else if (streq(ob, "CREATE_TIME"))
                *ret = CATALOG_ORDER_CREATE_TIME;
        else if (streq(ob, "LAST_UPDATE_TIME"))
                *ret = CATALOG_ORDER_LAST_UPDATE_TIME;
        else
                return -EINVAL;
        return 0;
}

/*
 * The filterQuery text of an MCP listing: the named query's filters, AND (filterQuery) when
 * both are given. Answers 400 (500) itself and returns < 0.
 */
static int mcp_filter_text(struct catalog__ctx *c, const char *nq, const char *fq, struct buf *text,
                           struct http_resp *resp)
{
        int r;

        if (nq && nq[0]) {
                const json_t *named = json_object_get(catalog_index_config(c->idx)->named_queries,
                                                      nq);

                if (!named ||
                    !streq(json_string_value(json_object_get(named, "assetType")), "mcp_servers")) {
                        catalog__reply_error(resp, 400, "unknown named query '%s': bad request",
                                             nq);
                        return -EINVAL;
                }
                r = named_query_text(json_object_get(named, "filters"), text);
                if (r < 0) {
                        catalog__reply_errno(resp, r);
                        return r;
                }
        }
        if (fq && fq[0]) {
                r = text->len > 0 ? buf_printf(text, " AND (%s)", fq) : buf_puts(text, fq);
                if (r < 0) {
                        catalog__reply_error(resp, 400, "filter query too long: bad request");
                        return -EINVAL;
                }
        }
        return 0;
}

int catalog__handle_mcp_servers(struct catalog__ctx *c, struct http_req *req,
                                struct http_resp *resp)
{
        struct catalog_mcp_query q = { 0 };
        CLEANUP(catalog_strv_freep) char **labels = NULL;
        CLEANUP(filterq_freep) struct filterq_node *filter = NULL;
        CLEANUP(buf_release) struct buf text = BUF_INIT(2 * (size_t)FILTERQ_QUERY_MAX);
        const char *lbl = http_req_query(req, "sourceLabel");
        const char *ob = http_req_query(req, "orderBy");
        struct error_detail err = { 0 };
        json_t *out = NULL;
        int r;

        if (catalog__parse_page(req, &q.page, resp) < 0 ||
            parse_mcp_tools(req, &q.include_tools, &q.tool_limit, resp) < 0)
                return 0;
        if (parse_mcp_order(ob, &q.order) < 0)
                return catalog__reply_error(resp, 400,
                                            "unsupported order by field '%s': bad request", ob);
        if (lbl && lbl[0]) {
                r = catalog__split_csv(lbl, &labels);
                if (r < 0)
                        return catalog__reply_errno(resp, r);
                q.source_labels = labels;
        }
        if (mcp_filter_text(c, http_req_query(req, "namedQuery"),
                            http_req_query(req, "filterQuery"), &text, resp) < 0 ||
            catalog__parse_filter(buf_str(&text), false, &filter, resp) < 0)
                return 0;
        q.filter = filter;
        q.name = http_req_query(req, "name");
        q.q = http_req_query(req, "q");
        r = catalog_index_list_mcp(c->idx, &q, &out, &err);
        if (r == -EINVAL)
                return catalog__reply_error(resp, 400, "%s: bad request", err.message);
        if (r < 0)
                return catalog__reply_errno(resp, r);
        return catalog__reply_json(resp, out);
}

int catalog__handle_mcp_filter_options(struct catalog__ctx *c, struct http_req *req,
                                       struct http_resp *resp)
{
        (void)req;
        return catalog__reply_json(resp, catalog_index_mcp_filter_options(c->idx));
}

int catalog__handle_mcp_server(struct catalog__ctx *c, struct http_req *req, struct http_resp *resp)
{
        const char *id = http_req_param(req, "server_id");
        uint32_t limit;
        bool include;
        json_t *out = NULL;
        int r;

        if (parse_mcp_tools(req, &include, &limit, resp) < 0)
                return 0;
        r = catalog_index_get_mcp(c->idx, id, include, limit, &out);
        if (r == -ENOENT)
                return catalog__reply_error(resp, 404, "MCP server '%s' not found", id);
        if (r < 0)
                return catalog__reply_errno(resp, r);
        return catalog__reply_json(resp, out);
}

int catalog__handle_mcp_tools(struct catalog__ctx *c, struct http_req *req, struct http_resp *resp)
{
        const char *id = http_req_param(req, "server_id");
        CLEANUP(filterq_freep) struct filterq_node *filter = NULL;
        struct catalog_page page = { 0 };
        json_t *out = NULL;
        int r;

        if (catalog__parse_page(req, &page, resp) < 0 ||
            catalog__parse_filter(http_req_query(req, "filterQuery"), false, &filter, resp) < 0)
                return 0;
        r = catalog_index_list_mcp_tools(c->idx, id, &page, filter, &out);
        if (r == -ENOENT)
                return catalog__reply_error(resp, 404, "MCP server '%s' not found", id);
        if (r < 0)
                return catalog__reply_errno(resp, r);
        return catalog__reply_json(resp, out);
}

int catalog__handle_mcp_tool(struct catalog__ctx *c, struct http_req *req, struct http_resp *resp)
{
        const char *id = http_req_param(req, "server_id");
        const char *tool = http_req_param(req, "tool_name");
        json_t *out = NULL;
        int r;

        r = catalog_index_get_mcp_tool(c->idx, id, tool, &out);
        if (r == -ENOENT)
                return catalog__reply_error(resp, 404, "tool '%s' not found on MCP server '%s'",
                                            tool, id);
        if (r < 0)
                return catalog__reply_errno(resp, r);
        return catalog__reply_json(resp, out);
}
