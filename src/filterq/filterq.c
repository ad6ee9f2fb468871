/* SPDX-License-Identifier: Apache-2.0 */
#include "filterq/filterq.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/buf.h"
#include "util/parse-util.h"

/* ---- tree ---- */

static void literal_release(struct filterq_literal *l)
{
        free(l->s);
        l->s = NULL;
}

struct filterq_node *filterq_free(struct filterq_node *n)
{
        if (!n)
                return NULL;
        for (size_t i = 0; i < n->n_kids; i++)
                filterq_free(n->kids[i]);
        free(n->kids);
        free(n->cmp.property);
        literal_release(&n->cmp.value);
        for (size_t i = 0; i < n->cmp.n_list; i++)
                literal_release(&n->cmp.list[i]);
        free(n->cmp.list);
        free(n);
        return NULL;
}

const struct filterq_literal *filterq_cmp_first_literal(const struct filterq_cmp *cmp)
{
        if (cmp->op != FILTERQ_OP_IN)
                return &cmp->value;
        return cmp->n_list > 0 ? &cmp->list[0] : NULL;
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
        unsigned cmps;    /* comparisons so far */
        unsigned depth;   /* open parentheses */
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
                (void)vsnprintf(p->err, p->n_err, fmt, ap);
                va_end(ap);
        }
        p->failed = true;
        return -EINVAL;
}

/*
 * The message quotes printable ASCII only: the text ends up in JSON error bodies, and a lone
 * byte of a multi-byte UTF-8 sequence would make them invalid.
 */
static int fail_char(struct parser *p, char c, size_t pos)
{
        if (c > 0x20 && c < 0x7f)
                return fail(p, "unexpected character '%c' at position %zu", c, pos);
        return fail(p, "unexpected byte 0x%02x at position %zu", (unsigned)(unsigned char)c, pos);
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

static size_t skip_blanks(const char *q, size_t i)
{
        for (;;) {
                while (isspace((unsigned char)q[i]))
                        i++;
                if (q[i] != '-' || q[i + 1] != '-')
                        return i;
                while (q[i] && q[i] != '\n')
                        i++;
        }
}

static int lex_quoted(struct parser *p, size_t *i)
{
        const char *q = p->q;
        char quote = q[*i];
        size_t s = (*i)++;

        while (q[*i] && q[*i] != quote) {
                if (q[*i] == '\\' && q[*i + 1])
                        (*i)++;
                (*i)++;
        }
        if (q[*i] != quote)
                return fail(p, "unterminated %s at position %zu",
                            quote == '`' ? "escaped identifier" : "string", s);
        (*i)++;
        p->tok.kind = quote == '`' ? TOK_ESCAPED : TOK_STRING;
        p->tok.len = *i - s;
        return 0;
}

static int lex_op(struct parser *p, size_t *i)
{
        const char *q = p->q;
        size_t n = 1;

        /* two-character operators: >= <= != <> */
        if (((q[*i] == '>' || q[*i] == '<' || q[*i] == '!') && q[*i + 1] == '=') ||
            (q[*i] == '<' && q[*i + 1] == '>'))
                n = 2;
        else if (q[*i] == '!')
                return fail(p, "unexpected character '!' at position %zu", *i);
        p->tok.kind = TOK_OP;
        p->tok.len = n;
        *i += n;
        return 0;
}

static int next_token(struct parser *p)
{
        const char *q = p->q;
        size_t i = skip_blanks(q, p->pos);
        int r = 0;

        p->tok = (struct token){ .p = q + i, .pos = i };
        if (q[i] == '\0') {
                p->tok.kind = TOK_EOF;
        } else if (is_ident_start(q[i])) {
                size_t s = i;

                while (is_ident_char(q[i]))
                        i++;
                p->tok.kind = TOK_IDENT;
                p->tok.len = i - s;
        } else if (q[i] == '\'' || q[i] == '"' || q[i] == '`') {
                r = lex_quoted(p, &i);
        } else if (isdigit((unsigned char)q[i]) || q[i] == '+' || q[i] == '-' ||
                   (q[i] == '.' && isdigit((unsigned char)q[i + 1]))) {
                enum tok_kind k = TOK_INT;
                size_t n = scan_number(q + i, &k);

                if (n == 0)
                        return fail_char(p, q[i], i);
                p->tok.kind = k;
                p->tok.len = n;
                i += n;
        } else if (strchr("<>!=", q[i])) {
                r = lex_op(p, &i);
        } else if (strchr("().,", q[i])) {
                p->tok.kind = q[i] == '('   ? TOK_LPAREN
                              : q[i] == ')' ? TOK_RPAREN
                              : q[i] == '.' ? TOK_DOT
                                            : TOK_COMMA;
                p->tok.len = 1;
                i++;
        } else
                return fail_char(p, q[i], i);
        p->pos = i;
        return r;
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

/* ---- parser ---- */

static enum filterq_suffix suffix_from(const char *s, size_t len)
{
        static const struct {
                const char *name;
                enum filterq_suffix s;
        } t[] = {
                { "string_value", FILTERQ_SUFFIX_STRING },
                { "double_value", FILTERQ_SUFFIX_DOUBLE },
                { "int_value", FILTERQ_SUFFIX_INT },
                { "bool_value", FILTERQ_SUFFIX_BOOL },
        };

        for (size_t i = 0; i < ELEMENTSOF(t); i++)
                if (len == strlen(t[i].name) && strncasecmp(s, t[i].name, len) == 0)
                        return t[i].s;
        return FILTERQ_SUFFIX_NONE;
}

/* Appends one dotted segment; sets *done when the segment was the type suffix. */
static int property_segment(struct parser *p, struct buf *b, struct filterq_cmp *c,
                            const struct token *seg, bool *done)
{
        int r;

        if (b->len > 0 && p->tok.kind != TOK_DOT) {
                enum filterq_suffix s = suffix_from(seg->p, seg->len);

                if (s != FILTERQ_SUFFIX_NONE) {
                        c->suffix = s;
                        *done = true;
                        return 0;
                }
        }
        if (b->len > 0) {
                r = buf_putc(b, '.');
                if (r < 0)
                        return r;
        }
        return buf_append(b, seg->p, seg->len);
}

static int parse_property(struct parser *p, struct filterq_cmp *c)
{
        struct buf b = BUF_INIT(FILTERQ_QUERY_MAX + 1);
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
                struct token seg = p->tok;
                bool done = false;

                r = next_token(p);
                if (r >= 0)
                        r = property_segment(p, &b, c, &seg, &done);
                if (r < 0 || done || p->tok.kind != TOK_DOT)
                        break;
                r = next_token(p);
                if (r < 0)
                        break;
                if (p->tok.kind != TOK_IDENT) {
                        r = fail(p, "expected a name after '.' at position %zu", p->tok.pos);
                        break;
                }
        }
        if (r >= 0) {
                c->property = buf_take(&b, NULL);
                r = c->property ? 0 : -ENOMEM;
        }
        buf_release(&b);
        return r;
}

static int parse_number(struct parser *p, struct filterq_literal *l)
{
        const struct token *t = &p->tok;

        l->s = strndup(t->p, t->len);
        if (!l->s)
                return -ENOMEM;
        if (t->kind == TOK_INT) {
                l->type = FILTERQ_LIT_INT;
                if (safe_atoi64(l->s[0] == '+' ? l->s + 1 : l->s, &l->i) < 0)
                        return fail(p, "integer out of range at position %zu", t->pos);
                l->f = (double)l->i;
                return 0;
        }
        l->type = FILTERQ_LIT_FLOAT;
        l->f = strtod(l->s, NULL);
        if (!isfinite(l->f))
                return fail(p, "number out of range at position %zu", t->pos);
        return 0;
}

static int parse_literal(struct parser *p, struct filterq_literal *l)
{
        const struct token *t = &p->tok;
        int r;

        switch (t->kind) {
        case TOK_STRING:
                l->type = FILTERQ_LIT_STRING;
                r = unquote(t, &l->s);
                break;
        case TOK_INT:
        case TOK_FLOAT:
                r = parse_number(p, l);
                break;
        case TOK_IDENT:
                if (!tok_is_keyword(t, "true") && !tok_is_keyword(t, "false"))
                        return fail(p, "expected a value at position %zu", t->pos);
                l->type = FILTERQ_LIT_BOOL;
                l->b = tok_is_keyword(t, "true");
                l->s = strndup(t->p, t->len);
                r = l->s ? 0 : -ENOMEM;
                break;
        default:
                return fail(p, "expected a value at position %zu", t->pos);
        }
        if (r < 0)
                return r;
        return next_token(p);
}

static int parse_op(struct parser *p, enum filterq_op *ret)
{
        const struct token *t = &p->tok;

        if (t->kind == TOK_OP) {
                if (t->len == 1)
                        *ret = t->p[0] == '='   ? FILTERQ_OP_EQ
                               : t->p[0] == '<' ? FILTERQ_OP_LT
                                                : FILTERQ_OP_GT;
                else if (t->p[0] == '!' || t->p[1] == '>')
                        *ret = FILTERQ_OP_NE;
                else
                        *ret = t->p[0] == '<' ? FILTERQ_OP_LE : FILTERQ_OP_GE;
        } else if (tok_is_keyword(t, "LIKE"))
                *ret = FILTERQ_OP_LIKE;
        else if (tok_is_keyword(t, "ILIKE"))
                *ret = FILTERQ_OP_ILIKE;
        else if (tok_is_keyword(t, "IN"))
                *ret = FILTERQ_OP_IN;
        else
                return fail(p, "expected an operator at position %zu", t->pos);
        return next_token(p);
}

static int parse_in_list(struct parser *p, struct filterq_cmp *c)
{
        int r;

        if (p->tok.kind != TOK_LPAREN)
                return fail(p, "expected '(' after IN at position %zu", p->tok.pos);
        r = next_token(p);
        if (r < 0)
                return r;
        while (p->tok.kind != TOK_RPAREN) {
                struct filterq_literal *l;

                if (c->n_list >= FILTERQ_IN_MAX)
                        return fail(p, "IN list too long (limit %u values)", FILTERQ_IN_MAX);
                l = reallocarray(c->list, c->n_list + 1, sizeof(*l));
                if (!l)
                        return -ENOMEM;
                c->list = l;
                l[c->n_list] = (struct filterq_literal){ 0 };
                r = parse_literal(p, &l[c->n_list]);
                c->n_list++;
                if (r < 0)
                        return r;
                if (p->tok.kind == TOK_COMMA) {
                        r = next_token(p);
                        if (r < 0)
                                return r;
                } else if (p->tok.kind != TOK_RPAREN)
                        return fail(p, "expected ',' or ')' at position %zu", p->tok.pos);
        }
        return next_token(p);
}

static int parse_comparison(struct parser *p, struct filterq_node **ret)
{
        CLEANUP(filterq_freep) struct filterq_node *n = NULL;
        int r;

        if (++p->cmps > FILTERQ_CMP_MAX)
                return fail(p, "too many comparisons (limit %u)", FILTERQ_CMP_MAX);
        n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        n->kind = FILTERQ_CMP;
        r = parse_property(p, &n->cmp);
        if (r < 0)
                return r;
        r = parse_op(p, &n->cmp.op);
        if (r < 0)
                return r;
        if (n->cmp.op == FILTERQ_OP_IN)
                r = parse_in_list(p, &n->cmp);
        else
                r = parse_literal(p, &n->cmp.value);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(n);
        return 0;
}

static int parse_or(struct parser *p, struct filterq_node **ret);

static int parse_term(struct parser *p, struct filterq_node **ret)
{
        CLEANUP(filterq_freep) struct filterq_node *n = NULL;
        int r;

        if (p->tok.kind != TOK_LPAREN)
                return parse_comparison(p, ret);
        if (++p->depth > FILTERQ_DEPTH_MAX)
                return fail(p, "parentheses nested too deep (limit %u)", FILTERQ_DEPTH_MAX);
        r = next_token(p);
        if (r < 0)
                return r;
        r = parse_or(p, &n);
        if (r < 0)
                return r;
        if (p->tok.kind != TOK_RPAREN)
                return fail(p, "expected ')' at position %zu", p->tok.pos);
        p->depth--;
        r = next_token(p);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(n);
        return 0;
}

/* Appends kid to the n-ary node n (taking it over; freed on failure). */
static int add_kid(struct filterq_node *n, struct filterq_node *kid)
{
        struct filterq_node **v = reallocarray(n->kids, n->n_kids + 1,
                                               sizeof(struct filterq_node *));

        if (!v) {
                filterq_free(kid);
                return -ENOMEM;
        }
        n->kids = v;
        n->kids[n->n_kids++] = kid;
        return 0;
}

/* sub ( kw sub )*: one operand alone, or one n-ary node of kind with all operands as kids. */
static int parse_chain(struct parser *p, const char *kw, enum filterq_node_kind kind,
                       int (*sub)(struct parser *, struct filterq_node **),
                       struct filterq_node **ret)
{
        CLEANUP(filterq_freep) struct filterq_node *first = NULL, *n = NULL;
        int r;

        r = sub(p, &first);
        if (r < 0)
                return r;
        while (tok_is_keyword(&p->tok, kw)) {
                struct filterq_node *kid = NULL;

                if (!n) {
                        n = calloc(1, sizeof(*n));
                        if (!n)
                                return -ENOMEM;
                        n->kind = kind;
                        r = add_kid(n, TAKE_PTR(first));
                        if (r < 0)
                                return r;
                }
                r = next_token(p);
                if (r < 0)
                        return r;
                r = sub(p, &kid);
                if (r < 0)
                        return r;
                r = add_kid(n, kid);
                if (r < 0)
                        return r;
        }
        *ret = n ? TAKE_PTR(n) : TAKE_PTR(first);
        return 0;
}

static int parse_and(struct parser *p, struct filterq_node **ret)
{
        return parse_chain(p, "AND", FILTERQ_AND, parse_term, ret);
}

static int parse_or(struct parser *p, struct filterq_node **ret)
{
        return parse_chain(p, "OR", FILTERQ_OR, parse_and, ret);
}

int filterq_parse(const char *q, struct filterq_node **ret, char *reterr, size_t n_reterr)
{
        struct parser p = { .q = q, .err = reterr, .n_err = n_reterr };
        CLEANUP(filterq_freep) struct filterq_node *n = NULL;
        int r;

        if (reterr && n_reterr > 0)
                reterr[0] = '\0';
        if (!q) {
                *ret = NULL;
                return 0;
        }
        if (strlen(q) > FILTERQ_QUERY_MAX)
                return fail(&p, "filter query too long (limit %u bytes)", FILTERQ_QUERY_MAX);
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
