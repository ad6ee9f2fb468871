/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * filterQuery (spec B.8), the one lexer and parser for the registry and the catalog. Pure: text
 * in, a tree out; no I/O, no logging. Two back ends consume the tree: filterq/sql.h lowers it to
 * the store's bound-parameter conditions (registry), filterq/eval.h evaluates it in memory
 * (catalog).
 *
 *   where      := or
 *   or         := and ( OR and )*
 *   and        := term ( AND term )*
 *   term       := "(" or ")" | property op value
 *   op         := = | != | <> | >= | <= | > | < | LIKE | ILIKE | IN
 *   property   := `escaped` | ident ( "." ident )* [ "." (string_value|double_value|int_value|bool_value) ]
 *   value      := 'str' | "str" | int | float | true | false | "(" [ value ( "," value )* ] ")"
 *
 * Keywords are case-insensitive; `--` starts a comment up to the end of the line; a backslash
 * in a quoted string takes the next character literally (the backslash itself is dropped).
 * `<>` means "not equal" (upstream evaluates it as `=` by accident; documented deviation).
 *
 * Invariants of a parsed tree: AND/OR nodes have n_kids >= 2 and a chain `a AND b AND c` is one
 * node with three kids (so depth grows only with parentheses); there are at most
 * FILTERQ_CMP_MAX comparisons, each IN list has at most FILTERQ_IN_MAX values, and integer
 * literals fit int64_t, float literals are finite.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

/* The one set of limits (docs/registry.md, docs/catalog.md). */
#define FILTERQ_QUERY_MAX 16384U /* bytes of query text */
#define FILTERQ_DEPTH_MAX 32U    /* nesting of parentheses */
#define FILTERQ_CMP_MAX   256U   /* comparisons in one query */
#define FILTERQ_IN_MAX    256U   /* values in one IN list */

enum filterq_op {
        FILTERQ_OP_EQ,
        FILTERQ_OP_NE,
        FILTERQ_OP_LT,
        FILTERQ_OP_LE,
        FILTERQ_OP_GT,
        FILTERQ_OP_GE,
        FILTERQ_OP_LIKE,
        FILTERQ_OP_ILIKE,
        FILTERQ_OP_IN,
};

/* The explicit type suffix of a property, if any. */
enum filterq_suffix {
        FILTERQ_SUFFIX_NONE,
        FILTERQ_SUFFIX_STRING,
        FILTERQ_SUFFIX_DOUBLE,
        FILTERQ_SUFFIX_INT,
        FILTERQ_SUFFIX_BOOL,
};

enum filterq_literal_type {
        FILTERQ_LIT_STRING,
        FILTERQ_LIT_INT,
        FILTERQ_LIT_FLOAT,
        FILTERQ_LIT_BOOL,
};

struct filterq_literal {
        enum filterq_literal_type type;
        char *s;   /* owned; FILTERQ_LIT_STRING (unescaped), else the literal's text */
        int64_t i; /* INT */
        double f;  /* FLOAT, and INT as a double */
        bool b;    /* BOOL */
};

struct filterq_cmp {
        char *property; /* owned; dotted path without the type suffix */
        enum filterq_suffix suffix;
        enum filterq_op op;
        struct filterq_literal value; /* all ops except IN */
        struct filterq_literal *list; /* owned; IN (n_list may be 0) */
        size_t n_list;
};

enum filterq_node_kind {
        FILTERQ_AND,
        FILTERQ_OR,
        FILTERQ_CMP,
};

struct filterq_node {
        enum filterq_node_kind kind;
        struct filterq_node **kids; /* owned, each owned; AND/OR */
        size_t n_kids;
        struct filterq_cmp cmp; /* FILTERQ_CMP */
};

/* Frees the tree; accepts NULL; returns NULL. */
struct filterq_node *filterq_free(struct filterq_node *n);
DEFINE_CLEANUP_FUNC(struct filterq_node *, filterq_free)

/*
 * Parses q. NULL, an empty or a whitespace/comment-only query yields *ret = NULL (no filter).
 * A syntax error or an exceeded limit returns -EINVAL and writes a message naming what was
 * wrong and where ("unterminated string at position 7", "parentheses nested too deep (limit
 * 32)", "too many comparisons (limit 256)") into reterr (size n_reterr; may be NULL/0).
 * -ENOMEM. *ret is set only on success.
 */
_warn_unused_result_ int filterq_parse(const char *q, struct filterq_node **ret, char *reterr,
                                       size_t n_reterr);

/* The literal that decides a comparison's type: the value, or the first IN value (NULL: empty IN). */
const struct filterq_literal *filterq_cmp_first_literal(const struct filterq_cmp *cmp);
