/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * filterQuery: the registry's SQL-like filter grammar (spec B.8), evaluated in memory against
 * catalog entities. Pure: parse once per request into a tree, then evaluate per entity through a
 * caller-supplied resolver that maps a property to zero or more JSON values.
 *
 *   where      := or
 *   or         := and ( OR and )*
 *   and        := term ( AND term )*
 *   term       := "(" or ")" | property op value
 *   op         := = | != | <> | >= | <= | > | < | LIKE | ILIKE | IN
 *   property   := `escaped` | ident ( "." ident )* [ "." (string_value|double_value|int_value|bool_value) ]
 *   value      := 'str' | "str" | int | float | true | false | "(" [ value ( "," value )* ] ")"
 *
 * Deviation from upstream (documented in docs/catalog.md): `<>` means "not equal" (upstream
 * evaluates it as `=` by accident).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

enum filter_op {
        FILTER_OP_EQ,
        FILTER_OP_NE,
        FILTER_OP_LT,
        FILTER_OP_LE,
        FILTER_OP_GT,
        FILTER_OP_GE,
        FILTER_OP_LIKE,
        FILTER_OP_ILIKE,
        FILTER_OP_IN,
};

/* The explicit type suffix of a property, if any. */
enum filter_suffix {
        FILTER_SUFFIX_NONE,
        FILTER_SUFFIX_STRING,
        FILTER_SUFFIX_DOUBLE,
        FILTER_SUFFIX_INT,
        FILTER_SUFFIX_BOOL,
};

enum filter_literal_type {
        FILTER_LIT_STRING,
        FILTER_LIT_INT,
        FILTER_LIT_FLOAT,
        FILTER_LIT_BOOL,
};

struct filter_literal {
        enum filter_literal_type type;
        char *s; /* owned; FILTER_LIT_STRING */
        int64_t i;
        double f;
        bool b;
};

struct filter_cmp {
        char *property; /* owned; dotted path without the type suffix */
        enum filter_suffix suffix;
        enum filter_op op;
        struct filter_literal value;  /* all ops except IN */
        struct filter_literal *list; /* owned; IN */
        size_t n_list;
};

enum filter_node_kind {
        FILTER_AND,
        FILTER_OR,
        FILTER_CMP,
};

struct filter_node {
        enum filter_node_kind kind;
        struct filter_node *left, *right; /* owned; AND/OR */
        struct filter_cmp cmp;            /* FILTER_CMP */
};

struct filter_node *filter_free(struct filter_node *n);
DEFINE_CLEANUP_FUNC(struct filter_node *, filter_free)

/*
 * Parses q. An empty or whitespace-only query yields *ret = NULL (no filter). On a syntax error
 * returns -EINVAL and writes a message into reterr (size n_reterr).
 */
_warn_unused_result_ int filter_parse(const char *q, struct filter_node **ret, char *reterr,
                                      size_t n_reterr);

/*
 * Resolves one comparison against one entity: returns true when the entity matches. Typical
 * implementations look the property up and call filter_match_value() on each candidate value.
 */
typedef bool (*filter_match_fn)(void *userdata, const struct filter_cmp *cmp);

/* Evaluates the tree (NULL matches everything). */
bool filter_eval(const struct filter_node *n, filter_match_fn fn, void *userdata);

/*
 * Compares one actual value with the comparison's literal(s): strings compare as strings
 * (LIKE/ILIKE with % and _), numbers numerically, booleans with = and != only. A type mismatch
 * is "no match". NULL actual never matches.
 */
bool filter_match_value(const struct filter_cmp *cmp, const json_t *actual);

/*
 * Picks the typed value of a MetadataValue object (customProperties entry) for cmp: the explicit
 * suffix wins; otherwise the literal type decides (string -> string_value, float -> double_value,
 * bool -> bool_value, int -> int_value or double_value). Then compares. False for mismatches.
 */
bool filter_match_metadata(const struct filter_cmp *cmp, const json_t *metadata_value);

/* SQL LIKE: % any run, _ one character, backslash escapes; ci = ASCII case-insensitive. */
bool filter_like(const char *pattern, const char *s, bool ci);
