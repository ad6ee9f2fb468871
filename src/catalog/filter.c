/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/filter.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "catalog/limits.h"
#include "util/buf.h"
#include "util/parse-util.h"

/* ---- tree ---- */

static void literal_release(struct filter_literal *l)
{
        free(l->s);
        l->s = NULL;
}

struct filter_node *filter_free(struct filter_node *n)
{
        if (!n)
                return NULL;
        filter_free(n->left);
        filter_free(n->right);
        free(n->cmp.property);
        literal_release(&n->cmp.value);
        for (size_t i = 0; i < n->cmp.n_list; i++)
                literal_release(&n->cmp.list[i]);
        free(n->cmp.list);
        free(n);
        return NULL;
}

/* ---- lexer ---- */

enum tok_kind {
        TOK_EOF,
        TOK_IDENT,
        TOK_ESCAPED,
        TOK_STRING,
        TOK_INT,
        TOK_FLOAT,
        TOK_OP,
        TOK_LPAREN,
        TOK_RPAREN,
        TOK_DOT,
        TOK_COMMA,
};

struct token {
        enum tok_kind kind;
        const char *p; /* borrowed; start in the query */
        size_t len;
        size_t pos; /* byte offset, for messages */
};

struct parser {
        const char *q;
        size_t pos;
        struct token tok; /* current lookahead */
        size_t nodes;
        unsigned depth;
        char *err;
        size_t n_err;
        bool failed;
};

static int fail(struct parser *p, const char *fmt, ...) _printf_(2, 3);
static int fail(struct parser *p, const char *fmt, ...)
{
        va_list ap;

        if (!p->failed && p->err && p->n_err > 0) {
                va_start(ap, fmt);
                vsnprintf(p->err, p->n_err, fmt, ap);
                va_end(ap);
        }
        p->failed = true;
        return -EINVAL;
}

static bool is_ident_start(char c)
{
        return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident_char(char c)
{
        return isalnum((unsigned char)c) || c == '_';
}

/* Scans a number at s; returns its length and kind, 0 when s does not start a number. */
static size_t scan_number(const char *s, enum tok_kind *kind)
{
        size_t i = 0, digits = 0, frac = 0;
        bool is_float = false;

        if (s[i] == '+' || s[i] == '-')
                i++;
        while (isdigit((unsigned char)s[i])) {
                i++;
                digits++;
        }
        if (s[i] == '.' && isdigit((unsigned char)s[i + 1])) {
                i++;
                while (isdigit((unsigned char)s[i])) {
                        i++;
                        frac++;
                }
                is_float = true;
        }
        if (digits == 0 && frac == 0)
                return 0;
        if ((s[i] == 'e' || s[i] == 'E') &&
            (isdigit((unsigned char)s[i + 1]) ||
             ((s[i + 1] == '+' || s[i + 1] == '-') && isdigit((unsigned char)s[i + 2])))) {
                i += 2;
                while (isdigit((unsigned char)s[i]))
                        i++;
                is_float = true;
        }
        *kind = is_float ? TOK_FLOAT : TOK_INT;
        return i;
}

static int next_token(struct parser *p)
{
        const char *q = p->q;
        size_t i = p->pos;

        for (;;) {
                while (isspace((unsigned char)q[i]))
                        i++;
                if (q[i] == '-' && q[i + 1] == '-') {
                        while (q[i] && q[i] != '\n')
                                i++;
                        continue;
                }
                break;
        }
        p->tok = (struct token){ .p = q + i, .pos = i };
        if (q[i] == '\0') {
                p->tok.kind = TOK_EOF;
                p->pos = i;
                return 0;
        }
        if (is_ident_start(q[i])) {
                size_t s = i;

                while (is_ident_char(q[i]))
                        i++;
                p->tok.kind = TOK_IDENT;
                p->tok.len = i - s;
        } else if (q[i] == '\'' || q[i] == '"' || q[i] == '`') {
                char quote = q[i];
                size_t s = i++;

                while (q[i] && q[i] != quote) {
                        if (q[i] == '\\' && q[i + 1])
                                i++;
                        i++;
                }
                if (q[i] != quote)
                        return fail(p, "unterminated %s at position %zu",
                                    quote == '`' ? "escaped identifier" : "string", s);
                i++;
                p->tok.kind = quote == '`' ? TOK_ESCAPED : TOK_STRING;
                p->tok.len = i - s;
        } else if (isdigit((unsigned char)q[i]) || q[i] == '+' || q[i] == '-' ||
                   (q[i] == '.' && isdigit((unsigned char)q[i + 1]))) {
                enum tok_kind k = TOK_INT;
                size_t n = scan_number(q + i, &k);

                if (n == 0)
                        return fail(p, "unexpected character '%c' at position %zu", q[i], i);
                p->tok.kind = k;
                p->tok.len = n;
                i += n;
        } else if (q[i] == '>' || q[i] == '<' || q[i] == '!' || q[i] == '=') {
                size_t n = 1;

                if ((q[i] == '>' || q[i] == '<' || q[i] == '!') && q[i + 1] == '=')
                        n = 2;
                else if (q[i] == '<' && q[i + 1] == '>')
                        n = 2;
                else if (q[i] == '!')
                        return fail(p, "unexpected character '!' at position %zu", i);
                p->tok.kind = TOK_OP;
                p->tok.len = n;
                i += n;
        } else if (q[i] == '(' || q[i] == ')' || q[i] == '.' || q[i] == ',') {
                p->tok.kind = q[i] == '(' ? TOK_LPAREN
                              : q[i] == ')' ? TOK_RPAREN
                              : q[i] == '.' ? TOK_DOT
                                            : TOK_COMMA;
                p->tok.len = 1;
                i++;
        } else
                return fail(p, "unexpected character '%c' at position %zu", q[i], i);
        p->pos = i;
        return 0;
}

static bool tok_is_keyword(const struct token *t, const char *kw)
{
        return t->kind == TOK_IDENT && t->len == strlen(kw) && strncasecmp(t->p, kw, t->len) == 0;
}

/* Copies the inside of a quoted token, resolving backslash escapes. */
static int unquote(const struct token *t, char **ret)
{
        char *out = malloc(t->len);
        size_t k = 0;

        if (!out)
                return -ENOMEM;
        for (size_t i = 1; i + 1 < t->len; i++) {
                if (t->p[i] == '\\' && i + 2 < t->len)
                        i++;
                out[k++] = t->p[i];
        }
        out[k] = '\0';
        *ret = out;
        return 0;
}

static enum filter_suffix suffix_from(const char *s, size_t len)
{
        static const struct {
                const char *name;
                enum filter_suffix s;
        } t[] = {
                { "string_value", FILTER_SUFFIX_STRING },
                { "double_value", FILTER_SUFFIX_DOUBLE },
                { "int_value", FILTER_SUFFIX_INT },
                { "bool_value", FILTER_SUFFIX_BOOL },
        };

        for (size_t i = 0; i < ELEMENTSOF(t); i++)
                if (len == strlen(t[i].name) && strncasecmp(s, t[i].name, len) == 0)
                        return t[i].s;
        return FILTER_SUFFIX_NONE;
}

static int parse_property(struct parser *p, struct filter_cmp *c)
{
        struct buf b = BUF_INIT(CATALOG_FILTER_QUERY_MAX + 1);
        int r;

        if (p->tok.kind == TOK_ESCAPED) {
                r = unquote(&p->tok, &c->property);
                if (r < 0)
                        return r;
                return next_token(p);
        }
        if (p->tok.kind != TOK_IDENT)
                return fail(p, "expected a property name at position %zu", p->tok.pos);
        for (;;) {
                const char *seg = p->tok.p;
                size_t len = p->tok.len;

                r = next_token(p);
                if (r < 0)
                        goto out;
                if (b.len > 0 && p->tok.kind != TOK_DOT) {
                        enum filter_suffix s = suffix_from(seg, len);

                        if (s != FILTER_SUFFIX_NONE) {
                                c->suffix = s;
                                break;
                        }
                }
                if (b.len > 0) {
                        r = buf_putc(&b, '.');
                        if (r < 0)
                                goto out;
                }
                r = buf_append(&b, seg, len);
                if (r < 0)
                        goto out;
                if (p->tok.kind != TOK_DOT)
                        break;
                r = next_token(p);
                if (r < 0)
                        goto out;
                if (p->tok.kind != TOK_IDENT) {
                        r = fail(p, "expected a name after '.' at position %zu", p->tok.pos);
                        goto out;
                }
        }
        c->property = buf_take(&b, NULL);
        r = c->property ? 0 : -ENOMEM;
out:
        buf_release(&b);
        return r;
}

static int parse_literal(struct parser *p, struct filter_literal *l)
{
        const struct token *t = &p->tok;
        char num[64];
        int r;

        switch (t->kind) {
        case TOK_STRING:
                l->type = FILTER_LIT_STRING;
                r = unquote(t, &l->s);
                if (r < 0)
                        return r;
                break;
        case TOK_INT:
                if (t->len >= sizeof(num))
                        return fail(p, "number too long at position %zu", t->pos);
                memcpy(num, t->p, t->len);
                num[t->len] = '\0';
                l->type = FILTER_LIT_INT;
                if (safe_atoi64(num[0] == '+' ? num + 1 : num, &l->i) < 0) {
                        /* out of int64: fall back to a float */
                        l->type = FILTER_LIT_FLOAT;
                        l->f = strtod(num, NULL);
                }
                break;
        case TOK_FLOAT:
                if (t->len >= sizeof(num))
                        return fail(p, "number too long at position %zu", t->pos);
                memcpy(num, t->p, t->len);
                num[t->len] = '\0';
                l->type = FILTER_LIT_FLOAT;
                l->f = strtod(num, NULL);
                if (!isfinite(l->f))
                        return fail(p, "number out of range at position %zu", t->pos);
                break;
        case TOK_IDENT:
                if (tok_is_keyword(t, "true") || tok_is_keyword(t, "false")) {
                        l->type = FILTER_LIT_BOOL;
                        l->b = tok_is_keyword(t, "true");
                        break;
                }
                return fail(p, "expected a value at position %zu", t->pos);
        default:
                return fail(p, "expected a value at position %zu", t->pos);
        }
        return next_token(p);
}

static int parse_op(struct parser *p, enum filter_op *ret)
{
        const struct token *t = &p->tok;

        if (t->kind == TOK_OP) {
                if (t->len == 1)
                        *ret = t->p[0] == '=' ? FILTER_OP_EQ
                               : t->p[0] == '<' ? FILTER_OP_LT
                                                : FILTER_OP_GT;
                else if (t->p[0] == '!' || t->p[1] == '>')
                        *ret = FILTER_OP_NE;
                else
                        *ret = t->p[0] == '<' ? FILTER_OP_LE : FILTER_OP_GE;
        } else if (tok_is_keyword(t, "LIKE"))
                *ret = FILTER_OP_LIKE;
        else if (tok_is_keyword(t, "ILIKE"))
                *ret = FILTER_OP_ILIKE;
        else if (tok_is_keyword(t, "IN"))
                *ret = FILTER_OP_IN;
        else
                return fail(p, "expected an operator at position %zu", t->pos);
        return next_token(p);
}

static int new_node(struct parser *p, enum filter_node_kind kind, struct filter_node **ret)
{
        struct filter_node *n;

        if (++p->nodes > CATALOG_FILTER_NODES_MAX)
                return fail(p, "filter too complex (limit %u terms)", CATALOG_FILTER_NODES_MAX);
        n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        n->kind = kind;
        *ret = n;
        return 0;
}

static int parse_or(struct parser *p, struct filter_node **ret);

static int parse_comparison(struct parser *p, struct filter_node **ret)
{
        CLEANUP(filter_freep) struct filter_node *n = NULL;
        int r;

        r = new_node(p, FILTER_CMP, &n);
        if (r < 0)
                return r;
        r = parse_property(p, &n->cmp);
        if (r < 0)
                return r;
        r = parse_op(p, &n->cmp.op);
        if (r < 0)
                return r;
        if (n->cmp.op == FILTER_OP_IN) {
                if (p->tok.kind != TOK_LPAREN)
                        return fail(p, "expected '(' after IN at position %zu", p->tok.pos);
                r = next_token(p);
                if (r < 0)
                        return r;
                while (p->tok.kind != TOK_RPAREN) {
                        struct filter_literal *l;

                        if (n->cmp.n_list >= CATALOG_FILTER_NODES_MAX)
                                return fail(p, "IN list too long");
                        l = reallocarray(n->cmp.list, n->cmp.n_list + 1, sizeof(*l));
                        if (!l)
                                return -ENOMEM;
                        n->cmp.list = l;
                        l[n->cmp.n_list] = (struct filter_literal){ 0 };
                        r = parse_literal(p, &l[n->cmp.n_list]);
                        n->cmp.n_list++;
                        if (r < 0)
                                return r;
                        if (p->tok.kind == TOK_COMMA) {
                                r = next_token(p);
                                if (r < 0)
                                        return r;
                        } else if (p->tok.kind != TOK_RPAREN)
                                return fail(p, "expected ',' or ')' at position %zu",
                                            p->tok.pos);
                }
                r = next_token(p);
                if (r < 0)
                        return r;
        } else {
                r = parse_literal(p, &n->cmp.value);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(n);
        return 0;
}

static int parse_term(struct parser *p, struct filter_node **ret)
{
        int r;

        if (p->tok.kind != TOK_LPAREN)
                return parse_comparison(p, ret);
        if (++p->depth > 64)
                return fail(p, "parentheses nested too deeply");
        r = next_token(p);
        if (r < 0)
                return r;
        r = parse_or(p, ret);
        if (r < 0)
                return r;
        if (p->tok.kind != TOK_RPAREN) {
                *ret = filter_free(*ret);
                return fail(p, "expected ')' at position %zu", p->tok.pos);
        }
        p->depth--;
        r = next_token(p);
        if (r < 0)
                *ret = filter_free(*ret);
        return r;
}

static int parse_binary(struct parser *p, const char *kw, enum filter_node_kind kind,
                        int (*sub)(struct parser *, struct filter_node **),
                        struct filter_node **ret)
{
        CLEANUP(filter_freep) struct filter_node *left = NULL;
        int r;

        r = sub(p, &left);
        if (r < 0)
                return r;
        while (tok_is_keyword(&p->tok, kw)) {
                struct filter_node *n = NULL, *right = NULL;

                r = next_token(p);
                if (r < 0)
                        return r;
                r = sub(p, &right);
                if (r < 0)
                        return r;
                r = new_node(p, kind, &n);
                if (r < 0) {
                        filter_free(right);
                        return r;
                }
                n->left = TAKE_PTR(left);
                n->right = right;
                left = n;
        }
        *ret = TAKE_PTR(left);
        return 0;
}

static int parse_and(struct parser *p, struct filter_node **ret)
{
        return parse_binary(p, "AND", FILTER_AND, parse_term, ret);
}

static int parse_or(struct parser *p, struct filter_node **ret)
{
        return parse_binary(p, "OR", FILTER_OR, parse_and, ret);
}

int filter_parse(const char *q, struct filter_node **ret, char *reterr, size_t n_reterr)
{
        struct parser p = { .q = q, .err = reterr, .n_err = n_reterr };
        CLEANUP(filter_freep) struct filter_node *n = NULL;
        int r;

        if (reterr && n_reterr > 0)
                reterr[0] = '\0';
        if (!q) {
                *ret = NULL;
                return 0;
        }
        if (strlen(q) > CATALOG_FILTER_QUERY_MAX)
                return fail(&p, "filter query too long (limit %u bytes)",
                            CATALOG_FILTER_QUERY_MAX);
        r = next_token(&p);
        if (r < 0)
                return r;
        if (p.tok.kind == TOK_EOF) {
                *ret = NULL;
                return 0;
        }
        r = parse_or(&p, &n);
        if (r < 0)
                return r;
        if (p.tok.kind != TOK_EOF)
                return fail(&p, "unexpected token at position %zu", p.tok.pos);
        *ret = TAKE_PTR(n);
        return 0;
}

/* ---- evaluation ---- */

bool filter_eval(const struct filter_node *n, filter_match_fn fn, void *userdata)
{
        if (!n)
                return true;
        switch (n->kind) {
        case FILTER_AND:
                return filter_eval(n->left, fn, userdata) && filter_eval(n->right, fn, userdata);
        case FILTER_OR:
                return filter_eval(n->left, fn, userdata) || filter_eval(n->right, fn, userdata);
        case FILTER_CMP:
                return fn(userdata, &n->cmp);
        }
        return false;
}

static int fold(char c)
{
        return tolower((unsigned char)c);
}

bool filter_like(const char *pattern, const char *s, bool ci)
{
        const char *p = pattern;
        const char *star = NULL, *resume = NULL;

        while (*s) {
                if (*p == '%') {
                        star = ++p;
                        resume = s;
                        continue;
                }
                if (*p == '_' || (*p == '\\' && p[1] && (ci ? fold(p[1]) == fold(*s) : p[1] == *s)) ||
                    (*p && *p != '\\' && (ci ? fold(*p) == fold(*s) : *p == *s))) {
                        p += *p == '\\' ? 2 : 1;
                        s++;
                        continue;
                }
                if (!star)
                        return false;
                p = star;
                s = ++resume;
        }
        while (*p == '%')
                p++;
        return *p == '\0';
}

static int cmp_numbers(double a, double b)
{
        return a < b ? -1 : a > b ? 1 : 0;
}

static bool op_result(enum filter_op op, int c)
{
        switch (op) {
        case FILTER_OP_EQ:
        case FILTER_OP_IN:
                return c == 0;
        case FILTER_OP_NE:
                return c != 0;
        case FILTER_OP_LT:
                return c < 0;
        case FILTER_OP_LE:
                return c <= 0;
        case FILTER_OP_GT:
                return c > 0;
        case FILTER_OP_GE:
                return c >= 0;
        default:
                return false;
        }
}

static bool match_literal(enum filter_op op, const struct filter_literal *l, const json_t *actual)
{
        switch (l->type) {
        case FILTER_LIT_STRING:
                if (!json_is_string(actual))
                        return false;
                if (op == FILTER_OP_LIKE)
                        return filter_like(l->s, json_string_value(actual), false);
                if (op == FILTER_OP_ILIKE)
                        return filter_like(l->s, json_string_value(actual), true);
                return op_result(op, strcmp(json_string_value(actual), l->s));
        case FILTER_LIT_INT:
                if (json_is_integer(actual)) {
                        json_int_t a = json_integer_value(actual);

                        return op_result(op, a < l->i ? -1 : a > l->i ? 1 : 0);
                }
                if (json_is_real(actual))
                        return op_result(op, cmp_numbers(json_real_value(actual), (double)l->i));
                return false;
        case FILTER_LIT_FLOAT:
                if (!json_is_number(actual))
                        return false;
                return op_result(op, cmp_numbers(json_number_value(actual), l->f));
        case FILTER_LIT_BOOL:
                if (!json_is_boolean(actual) || (op != FILTER_OP_EQ && op != FILTER_OP_NE &&
                                                 op != FILTER_OP_IN))
                        return false;
                return op_result(op, json_is_true(actual) == l->b ? 0 : 1);
        }
        return false;
}

bool filter_match_value(const struct filter_cmp *cmp, const json_t *actual)
{
        if (!actual || json_is_null(actual))
                return false;
        if (cmp->op == FILTER_OP_IN) {
                for (size_t i = 0; i < cmp->n_list; i++)
                        if (match_literal(FILTER_OP_EQ, &cmp->list[i], actual))
                                return true;
                return false;
        }
        if ((cmp->op == FILTER_OP_LIKE || cmp->op == FILTER_OP_ILIKE) &&
            cmp->value.type != FILTER_LIT_STRING)
                return false;
        return match_literal(cmp->op, &cmp->value, actual);
}

static enum filter_literal_type cmp_literal_type(const struct filter_cmp *cmp)
{
        if (cmp->op == FILTER_OP_IN)
                return cmp->n_list > 0 ? cmp->list[0].type : FILTER_LIT_STRING;
        return cmp->value.type;
}

bool filter_match_metadata(const struct filter_cmp *cmp, const json_t *mv)
{
        const char *type = json_string_value(json_object_get(mv, "metadataType"));
        enum filter_suffix want = cmp->suffix;
        json_t *v;

        if (!type)
                return false;
        if (want == FILTER_SUFFIX_NONE)
                switch (cmp_literal_type(cmp)) {
                case FILTER_LIT_STRING:
                        want = FILTER_SUFFIX_STRING;
                        break;
                case FILTER_LIT_FLOAT:
                        want = FILTER_SUFFIX_DOUBLE;
                        break;
                case FILTER_LIT_BOOL:
                        want = FILTER_SUFFIX_BOOL;
                        break;
                case FILTER_LIT_INT:
                        /* integer literals compare with int_value OR double_value */
                        want = streq(type, "MetadataDoubleValue") ? FILTER_SUFFIX_DOUBLE
                                                                  : FILTER_SUFFIX_INT;
                        break;
                }
        switch (want) {
        case FILTER_SUFFIX_STRING:
                if (!streq(type, "MetadataStringValue"))
                        return false;
                return filter_match_value(cmp, json_object_get(mv, "string_value"));
        case FILTER_SUFFIX_DOUBLE:
                if (!streq(type, "MetadataDoubleValue"))
                        return false;
                return filter_match_value(cmp, json_object_get(mv, "double_value"));
        case FILTER_SUFFIX_BOOL:
                if (!streq(type, "MetadataBoolValue"))
                        return false;
                return filter_match_value(cmp, json_object_get(mv, "bool_value"));
        case FILTER_SUFFIX_INT: {
                int64_t i;
                json_auto_t *iv = NULL;

                if (!streq(type, "MetadataIntValue"))
                        return false;
                v = json_object_get(mv, "int_value");
                if (!json_is_string(v) || safe_atoi64(json_string_value(v), &i) < 0)
                        return false;
                iv = json_integer(i);
                return filter_match_value(cmp, iv);
        }
        case FILTER_SUFFIX_NONE:
                break;
        }
        return false;
}
