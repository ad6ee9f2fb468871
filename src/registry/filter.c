/* SPDX-License-Identifier: Apache-2.0 */
#include "registry/filter.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/buf.h"
#include "util/parse-util.h"

enum tok_type {
        TOK_EOF,
        TOK_IDENT,
        TOK_EIDENT,
        TOK_INT,
        TOK_FLOAT,
        TOK_STRING,
        TOK_OP,
        TOK_LPAREN,
        TOK_RPAREN,
        TOK_DOT,
        TOK_COMMA,
};

struct tok {
        enum tok_type type;
        char *text; /* owned; unescaped for strings/escaped identifiers */
        size_t pos;
};

struct parser {
        const char *s;
        size_t pos;
        struct tok cur;
        const struct reg_kind *kind;
        struct reg_error *err;
        unsigned terms;
};

static int perr(struct parser *p, const char *what)
{
        return reg_error_set(p->err, REG_ERR_INVALID, -EINVAL,
                             "invalid filter query: %s at position %zu: bad request", what,
                             p->cur.pos);
}

static void tok_done(struct tok *t)
{
        free(t->text);
        t->text = NULL;
}

static int lex_quoted(struct parser *p, char quote, enum tok_type type)
{
        struct buf b = BUF_INIT(REG_FILTER_MAX_LEN + 1);
        size_t i = p->pos + 1;

        for (;;) {
                char c = p->s[i];
                int r;

                if (c == 0) {
                        buf_release(&b);
                        return perr(p, "unterminated literal");
                }
                if (c == quote) {
                        i++;
                        break;
                }
                if (c == '\\' && p->s[i + 1]) {
                        c = p->s[i + 1];
                        i += 2;
                } else
                        i++;
                r = buf_putc(&b, c);
                if (r < 0) {
                        buf_release(&b);
                        return reg_error_set(p->err, REG_ERR_INVALID, r, "filter query too long");
                }
        }
        p->cur.type = type;
        p->cur.text = buf_take(&b, NULL);
        p->pos = i;
        return p->cur.text ? 0 : reg_error_set(p->err, REG_ERR_INTERNAL, -ENOMEM, "out of memory");
}

static int next(struct parser *p)
{
        const char *s = p->s;
        size_t start;

        tok_done(&p->cur);
        for (;;) {
                while (isspace((unsigned char)s[p->pos]))
                        p->pos++;
                if (s[p->pos] == '-' && s[p->pos + 1] == '-') {
                        while (s[p->pos] && s[p->pos] != '\n')
                                p->pos++;
                        continue;
                }
                break;
        }
        start = p->pos;
        p->cur.pos = start;
        if (!s[start]) {
                p->cur.type = TOK_EOF;
                return 0;
        }
        if (s[start] == '\'' || s[start] == '"')
                return lex_quoted(p, s[start], TOK_STRING);
        if (s[start] == '`')
                return lex_quoted(p, '`', TOK_EIDENT);
        if (isalpha((unsigned char)s[start]) || s[start] == '_') {
                size_t i = start;
                while (isalnum((unsigned char)s[i]) || s[i] == '_')
                        i++;
                p->cur.type = TOK_IDENT;
                p->cur.text = strndup(s + start, i - start);
                p->pos = i;
                return p->cur.text ? 0 : reg_error_set(p->err, REG_ERR_INTERNAL, -ENOMEM, "out of memory");
        }
        {
                size_t i = start;
                bool digits = false, frac = false, exp = false;

                if (s[i] == '+' || s[i] == '-')
                        i++;
                while (isdigit((unsigned char)s[i])) {
                        i++;
                        digits = true;
                }
                if (s[i] == '.' && isdigit((unsigned char)s[i + 1])) {
                        i++;
                        while (isdigit((unsigned char)s[i]))
                                i++;
                        frac = true;
                }
                if ((digits || frac) && (s[i] == 'e' || s[i] == 'E')) {
                        size_t j = i + 1;
                        if (s[j] == '+' || s[j] == '-')
                                j++;
                        if (isdigit((unsigned char)s[j])) {
                                while (isdigit((unsigned char)s[j]))
                                        j++;
                                i = j;
                                exp = true;
                        }
                }
                if (digits || frac) {
                        p->cur.type = (frac || exp) ? TOK_FLOAT : TOK_INT;
                        p->cur.text = strndup(s + start, i - start);
                        p->pos = i;
                        return p->cur.text ? 0
                                           : reg_error_set(p->err, REG_ERR_INTERNAL, -ENOMEM, "out of memory");
                }
        }
        {
                static const char *const ops[] = { ">=", "<=", "!=", "<>", "=", ">", "<" };
                for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                        if (strneq(s + start, ops[i], strlen(ops[i]))) {
                                p->cur.type = TOK_OP;
                                p->cur.text = strdup(ops[i]);
                                p->pos += strlen(ops[i]);
                                return p->cur.text ? 0
                                                   : reg_error_set(p->err, REG_ERR_INTERNAL, -ENOMEM,
                                                                   "out of memory");
                        }
        }
        switch (s[start]) {
        case '(':
                p->cur.type = TOK_LPAREN;
                break;
        case ')':
                p->cur.type = TOK_RPAREN;
                break;
        case '.':
                p->cur.type = TOK_DOT;
                break;
        case ',':
                p->cur.type = TOK_COMMA;
                break;
        default:
                return perr(p, "unexpected character");
        }
        p->pos++;
        return 0;
}

static bool is_kw(const struct parser *p, const char *kw)
{
        return p->cur.type == TOK_IDENT && strcasecmp(p->cur.text, kw) == 0;
}

/* ---- literals ---- */

enum lit_type { LIT_STRING, LIT_INT, LIT_FLOAT, LIT_BOOL };

struct lit {
        enum lit_type type;
        const char *text;
        int64_t i;
        double d;
        bool b;
};

static int parse_single(struct parser *p, struct lit *ret, char **ret_owned)
{
        struct lit l = { 0 };
        int r;

        switch (p->cur.type) {
        case TOK_STRING:
                l.type = LIT_STRING;
                break;
        case TOK_INT:
                l.type = LIT_INT;
                if (safe_atoi64(p->cur.text[0] == '+' ? p->cur.text + 1 : p->cur.text, &l.i) < 0)
                        return perr(p, "integer out of range");
                l.d = (double)l.i;
                break;
        case TOK_FLOAT:
                l.type = LIT_FLOAT;
                l.d = strtod(p->cur.text, NULL);
                break;
        case TOK_IDENT:
                if (is_kw(p, "true") || is_kw(p, "false")) {
                        l.type = LIT_BOOL;
                        l.b = is_kw(p, "true");
                        break;
                }
                return perr(p, "expected a value");
        default:
                return perr(p, "expected a value");
        }
        *ret_owned = TAKE_PTR(p->cur.text);
        l.text = *ret_owned;
        r = next(p);
        if (r < 0)
                return r;
        *ret = l;
        return 0;
}

/* ---- resolution ---- */

struct target {
        bool is_column;
        enum store_column column;
        const char *prop;
        bool custom;
        bool explicit_vcol;
        enum store_vcol vcol;
        bool artifact_state;
};

static const struct {
        const char *json;
        enum store_column col;
        enum store_vcol vcol;
} columns[] = {
        { "id", STORE_COL_ID, STORE_VCOL_INT },
        { "name", STORE_COL_NAME, STORE_VCOL_STRING },
        { "externalId", STORE_COL_EXTERNAL_ID, STORE_VCOL_STRING },
        { "createTimeSinceEpoch", STORE_COL_CREATE, STORE_VCOL_INT },
        { "lastUpdateTimeSinceEpoch", STORE_COL_UPDATE, STORE_VCOL_INT },
};

static void resolve(const struct reg_kind *k, const char *name, struct target *t)
{
        const struct reg_field *f;

        for (size_t i = 0; i < ELEMENTSOF(columns); i++)
                if (streq(name, columns[i].json)) {
                        t->is_column = true;
                        t->column = columns[i].col;
                        t->vcol = columns[i].vcol;
                        return;
                }
        if (streq(name, "description")) {
                t->prop = "description";
                t->vcol = STORE_VCOL_STRING;
                return;
        }
        f = reg_kind_field(k, name);
        if (f) {
                t->prop = f->prop;
                switch (f->type) {
                case REG_F_ID:
                case REG_F_MS:
                case REG_F_INT:
                        t->vcol = STORE_VCOL_INT;
                        break;
                case REG_F_DOUBLE:
                        t->vcol = STORE_VCOL_DOUBLE;
                        break;
                default:
                        t->vcol = STORE_VCOL_STRING;
                        break;
                }
                t->artifact_state = k->artifact_type && streq(name, "state");
                return;
        }
        t->custom = true;
        t->prop = name;
}

/* Converts a literal for the target column type; false when it cannot match. */
static bool convert(const struct target *t, enum store_vcol vcol, const struct lit *l,
                    struct store_val *ret)
{
        switch (vcol) {
        case STORE_VCOL_STRING:
                if (l->type == LIT_BOOL)
                        return false;
                if (t->artifact_state && l->type == LIT_INT) {
                        if (l->i < 0 || l->i > 6)
                                return false;
                        *ret = SV_TEXT(strdup(reg_artifact_states[l->i]));
                } else
                        *ret = SV_TEXT(strdup(l->text));
                return true;
        case STORE_VCOL_INT:
        case STORE_VCOL_INT_OR_DOUBLE:
                if (l->type == LIT_INT)
                        *ret = SV_INT(l->i);
                else if (l->type == LIT_FLOAT)
                        *ret = SV_DOUBLE(l->d);
                else if (l->type == LIT_STRING) {
                        int64_t i;
                        if (safe_atoi64(l->text, &i) < 0)
                                return false;
                        *ret = SV_INT(i);
                } else
                        return false;
                return true;
        case STORE_VCOL_DOUBLE:
                if (l->type == LIT_INT || l->type == LIT_FLOAT)
                        *ret = SV_DOUBLE(l->d);
                else if (l->type == LIT_STRING) {
                        char *end = NULL;
                        double d = strtod(l->text, &end);
                        if (!*l->text || !end || *end)
                                return false;
                        *ret = SV_DOUBLE(d);
                } else
                        return false;
                return true;
        case STORE_VCOL_BOOL:
                if (l->type != LIT_BOOL)
                        return false;
                *ret = SV_INT(l->b ? 1 : 0);
                return true;
        }
        return false;
}

static struct store_cond *cond_false(void)
{
        struct store_cond *c = calloc(1, sizeof(*c));
        if (c)
                c->kind = STORE_COND_FALSE;
        return c;
}

static int parse_or(struct parser *p, unsigned depth, struct store_cond **ret);

static int parse_property(struct parser *p, struct target *t, char **ret_name)
{
        struct buf b = BUF_INIT(1024);
        int r;

        if (p->cur.type == TOK_EIDENT) {
                r = buf_puts(&b, p->cur.text);
                if (r < 0)
                        goto toolong;
                r = next(p);
                if (r < 0)
                        goto fail;
        } else if (p->cur.type == TOK_IDENT) {
                for (;;) {
                        static const char *const suffixes[] = { "string_value", "double_value",
                                                                "int_value", "bool_value" };
                        static const enum store_vcol vcols[] = { STORE_VCOL_STRING, STORE_VCOL_DOUBLE,
                                                                 STORE_VCOL_INT, STORE_VCOL_BOOL };
                        bool suffix = false;

                        if (b.len > 0) {
                                for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                                        if (strcasecmp(p->cur.text, suffixes[i]) == 0) {
                                                t->explicit_vcol = true;
                                                t->vcol = vcols[i];
                                                suffix = true;
                                        }
                        }
                        if (!suffix) {
                                if (b.len > 0 && buf_putc(&b, '.') < 0)
                                        goto toolong;
                                if (buf_puts(&b, p->cur.text) < 0)
                                        goto toolong;
                        }
                        r = next(p);
                        if (r < 0)
                                goto fail;
                        if (suffix || p->cur.type != TOK_DOT)
                                break;
                        r = next(p);
                        if (r < 0)
                                goto fail;
                        if (p->cur.type != TOK_IDENT) {
                                r = perr(p, "expected an identifier after '.'");
                                goto fail;
                        }
                }
        } else {
                r = perr(p, "expected a property name");
                goto fail;
        }
        *ret_name = buf_take(&b, NULL);
        if (!*ret_name)
                return reg_error_set(p->err, REG_ERR_INTERNAL, -ENOMEM, "out of memory");
        return 0;
toolong:
        r = reg_error_set(p->err, REG_ERR_INVALID, -EINVAL, "invalid filter query: property name too long");
fail:
        buf_release(&b);
        return r;
}

static int parse_comparison(struct parser *p, struct store_cond **ret)
{
        AUTOFREE char *name = NULL;
        struct target t = { 0 };
        enum store_op op;
        struct lit lits[REG_FILTER_MAX_TERMS];
        char *owned[REG_FILTER_MAX_TERMS] = { 0 };
        size_t n = 0;
        struct store_cond *c = NULL;
        enum store_vcol vcol;
        int r;

        if (++p->terms > REG_FILTER_MAX_TERMS)
                return reg_error_set(p->err, REG_ERR_INVALID, -EINVAL, "invalid filter query: too many terms");
        r = parse_property(p, &t, &name);
        if (r < 0)
                return r;
        bool explicit_vcol = t.explicit_vcol;
        enum store_vcol evcol = t.vcol;
        resolve(p->kind, name, &t);
        if (t.custom && explicit_vcol) {
                t.explicit_vcol = true;
                t.vcol = evcol;
        }

        if (p->cur.type == TOK_OP) {
                const char *o = p->cur.text;
                op = streq(o, "=")    ? STORE_OP_EQ
                     : streq(o, "!=") ? STORE_OP_NE
                     : streq(o, "<>") ? STORE_OP_NE
                     : streq(o, "<")  ? STORE_OP_LT
                     : streq(o, "<=") ? STORE_OP_LE
                     : streq(o, ">")  ? STORE_OP_GT
                                      : STORE_OP_GE;
        } else if (is_kw(p, "LIKE"))
                op = STORE_OP_LIKE;
        else if (is_kw(p, "ILIKE"))
                op = STORE_OP_ILIKE;
        else if (is_kw(p, "IN"))
                op = STORE_OP_IN;
        else
                return perr(p, "expected an operator");
        r = next(p);
        if (r < 0)
                return r;

        if (op == STORE_OP_IN) {
                if (p->cur.type != TOK_LPAREN)
                        return perr(p, "expected '(' after IN");
                r = next(p);
                if (r < 0)
                        return r;
                while (p->cur.type != TOK_RPAREN) {
                        if (n > 0) {
                                if (p->cur.type != TOK_COMMA) {
                                        r = perr(p, "expected ',' or ')'");
                                        goto out;
                                }
                                r = next(p);
                                if (r < 0)
                                        goto out;
                        }
                        if (n >= REG_FILTER_MAX_TERMS) {
                                r = reg_error_set(p->err, REG_ERR_INVALID, -EINVAL,
                                                  "invalid filter query: IN list too long");
                                goto out;
                        }
                        r = parse_single(p, &lits[n], &owned[n]);
                        if (r < 0)
                                goto out;
                        n++;
                }
                r = next(p);
                if (r < 0)
                        goto out;
        } else {
                r = parse_single(p, &lits[0], &owned[0]);
                if (r < 0)
                        goto out;
                n = 1;
        }

        /* Pick the typed column. */
        if (t.is_column || !t.custom || t.explicit_vcol)
                vcol = t.vcol;
        else
                switch (lits[0].type) {
                case LIT_STRING:
                        vcol = STORE_VCOL_STRING;
                        break;
                case LIT_FLOAT:
                        vcol = STORE_VCOL_DOUBLE;
                        break;
                case LIT_BOOL:
                        vcol = STORE_VCOL_BOOL;
                        break;
                default:
                        vcol = STORE_VCOL_INT_OR_DOUBLE;
                        break;
                }
        if ((op == STORE_OP_LIKE || op == STORE_OP_ILIKE) &&
            (vcol != STORE_VCOL_STRING || lits[0].type != LIT_STRING)) {
                c = cond_false();
                goto done;
        }

        c = calloc(1, sizeof(*c));
        if (!c)
                goto oom;
        c->kind = STORE_COND_CMP;
        c->is_column = t.is_column;
        c->column = t.column;
        c->custom = t.custom;
        c->vcol = vcol;
        c->op = op;
        if (!t.is_column) {
                c->prop = strdup(t.prop);
                if (!c->prop)
                        goto oom;
        }
        c->vals = calloc(n ? n : 1, sizeof(*c->vals));
        if (!c->vals)
                goto oom;
        for (size_t i = 0; i < n; i++) {
                struct store_val v;
                enum store_vcol want = vcol;

                if (vcol == STORE_VCOL_INT_OR_DOUBLE && lits[i].type != LIT_INT)
                        want = STORE_VCOL_DOUBLE;
                if (!convert(&t, want, &lits[i], &v))
                        continue;
                if (v.type == STORE_TEXT && !v.s)
                        goto oom;
                c->vals[c->n_vals++] = v;
        }
        if (c->n_vals == 0) {
                store_cond_free(c);
                c = cond_false();
        }
done:
        if (!c)
                goto oom;
        *ret = c;
        r = 0;
        goto out;
oom:
        store_cond_free(c);
        r = reg_error_set(p->err, REG_ERR_INTERNAL, -ENOMEM, "out of memory");
out:
        for (size_t i = 0; i < ELEMENTSOF(owned); i++)
                free(owned[i]);
        return r;
}

static int parse_term(struct parser *p, unsigned depth, struct store_cond **ret)
{
        int r;

        if (p->cur.type == TOK_LPAREN) {
                struct store_cond *c = NULL;

                if (depth >= REG_FILTER_MAX_DEPTH)
                        return reg_error_set(p->err, REG_ERR_INVALID, -EINVAL,
                                             "invalid filter query: nesting too deep");
                r = next(p);
                if (r < 0)
                        return r;
                r = parse_or(p, depth + 1, &c);
                if (r < 0)
                        return r;
                if (p->cur.type != TOK_RPAREN) {
                        store_cond_free(c);
                        return perr(p, "expected ')'");
                }
                r = next(p);
                if (r < 0) {
                        store_cond_free(c);
                        return r;
                }
                *ret = c;
                return 0;
        }
        return parse_comparison(p, ret);
}

static int combine(enum store_cond_kind kind, struct store_cond *l, struct store_cond *r,
                   struct store_cond **ret)
{
        struct store_cond *c = calloc(1, sizeof(*c));

        if (!c) {
                store_cond_free(l);
                store_cond_free(r);
                return -ENOMEM;
        }
        c->kind = kind;
        c->left = l;
        c->right = r;
        *ret = c;
        return 0;
}

static int parse_and(struct parser *p, unsigned depth, struct store_cond **ret)
{
        struct store_cond *left = NULL, *right = NULL;
        int r;

        r = parse_term(p, depth, &left);
        if (r < 0)
                return r;
        while (is_kw(p, "AND")) {
                r = next(p);
                if (r >= 0)
                        r = parse_term(p, depth, &right);
                if (r < 0) {
                        store_cond_free(left);
                        return r;
                }
                r = combine(STORE_COND_AND, left, right, &left);
                if (r < 0)
                        return reg_error_set(p->err, REG_ERR_INTERNAL, r, "out of memory");
        }
        *ret = left;
        return 0;
}

static int parse_or(struct parser *p, unsigned depth, struct store_cond **ret)
{
        struct store_cond *left = NULL, *right = NULL;
        int r;

        r = parse_and(p, depth, &left);
        if (r < 0)
                return r;
        while (is_kw(p, "OR")) {
                r = next(p);
                if (r >= 0)
                        r = parse_and(p, depth, &right);
                if (r < 0) {
                        store_cond_free(left);
                        return r;
                }
                r = combine(STORE_COND_OR, left, right, &left);
                if (r < 0)
                        return reg_error_set(p->err, REG_ERR_INTERNAL, r, "out of memory");
        }
        *ret = left;
        return 0;
}

int reg_filter_compile(const struct reg_kind *k, const char *query, struct store_cond **ret,
                       struct reg_error *err)
{
        struct parser p = { .s = query, .kind = k, .err = err };
        struct store_cond *c = NULL;
        int r;

        if (!query) {
                *ret = NULL;
                return 0;
        }
        if (strlen(query) > REG_FILTER_MAX_LEN)
                return reg_error_set(err, REG_ERR_INVALID, -EINVAL, "invalid filter query: too long");
        r = next(&p);
        if (r < 0)
                goto out;
        if (p.cur.type == TOK_EOF) {
                *ret = NULL;
                goto out;
        }
        r = parse_or(&p, 0, &c);
        if (r < 0)
                goto out;
        if (p.cur.type != TOK_EOF) {
                store_cond_free(c);
                r = perr(&p, "unexpected token");
                goto out;
        }
        *ret = c;
out:
        tok_done(&p.cur);
        return r;
}
