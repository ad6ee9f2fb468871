/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * struct quantity: an exact Kubernetes resource.Quantity (apimachinery v0.34.5 semantics, spec
 * trainedmodel.md §5). Pure value type: no allocation, copy it with `=`.
 *
 * Invariants (fields are read-only outside quantity.c):
 *  - the value is (negative ? -1 : 1) * mag * 10^-9, exactly: every quantity is a whole number of
 *    nano units (parsing rounds finer values up in magnitude, as Kubernetes does);
 *  - mag is a little-endian array of base-10^9 limbs, n of them used, no leading zero limb;
 *    zero is n == 0 and negative == false;
 *  - cached is the verbatim input text when Kubernetes would keep it (§5.4), else "".
 *
 * Limits: magnitudes up to 10^(9*QUANTITY_LIMBS - 9) (10^135) are exact; anything larger, or an
 * exponent beyond ±QUANTITY_EXPONENT_MAX, is -ERANGE. Kubernetes itself accepts larger decimal
 * values, but no memory size comes near this bound. A cacheable input longer than
 * QUANTITY_CACHED_MAX - 1 bytes (only possible with many leading zeros) is printed canonically.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

#define QUANTITY_LIMBS        16
#define QUANTITY_CACHED_MAX   48
#define QUANTITY_EXPONENT_MAX 200
/* Enough for any quantity_to_string() result (sign, 144 digits, suffix, NUL). */
#define QUANTITY_STRING_MAX 192
/* Longest input text accepted by quantity_parse(). */
#define QUANTITY_INPUT_MAX 256

enum quantity_format {
        QUANTITY_DECIMAL_EXPONENT, /* "1e3" */
        QUANTITY_BINARY_SI,        /* "1Ki" */
        QUANTITY_DECIMAL_SI,       /* "1k" */
        QUANTITY_FORMAT__MAX,
        QUANTITY_FORMAT__INVALID = -EINVAL,
};

struct quantity {
        uint32_t mag[QUANTITY_LIMBS];
        unsigned n;
        bool negative;
        enum quantity_format format;
        char cached[QUANTITY_CACHED_MAX];
};

/* Sets *q to zero with the given format and no cached text. Never fails. */
void quantity_init_zero(struct quantity *q, enum quantity_format format);

/*
 * Parses the Kubernetes quantity grammar (§5.1): sign? number suffix?. Returns 0, -EINVAL for a
 * syntax error (empty, bad suffix, trailing garbage), -ERANGE beyond the limits above.
 */
_warn_unused_result_ int quantity_parse(const char *s, struct quantity *ret);

/*
 * Decodes a JSON value as Kubernetes' Quantity.UnmarshalJSON does: a string (surrounding spaces
 * trimmed), an integer (its decimal text), a real (printed with %.17g: its value is exact for
 * integers, the cached spelling may differ from the original JSON text), or null (zero,
 * DecimalSI). Other JSON types are -EINVAL.
 */
_warn_unused_result_ int quantity_from_json(const json_t *v, struct quantity *ret);

/* acc += y, exactly (apimachinery Add: cached text dropped, a zero acc takes y's format). */
_warn_unused_result_ int quantity_add(struct quantity *acc, const struct quantity *y);

/* Returns <0, 0, >0 as a is less than, equal to, greater than b (exact, formats ignored). */
int quantity_cmp(const struct quantity *a, const struct quantity *b);

bool quantity_is_zero(const struct quantity *q);

/*
 * The quantity as a whole number of units (bytes, for memory), rounded up: "1Gi" is 1073741824,
 * "100m" is 1. Returns 0, -ERANGE for a negative value or one beyond UINT64_MAX.
 */
_warn_unused_result_ int quantity_to_u64_ceil(const struct quantity *q, uint64_t *ret);
/* -1, 0 or 1. */
int quantity_sign(const struct quantity *q);

/*
 * Writes Kubernetes' String() form (§5.3/§5.4) into buf. Returns the length, or -ENOBUFS when
 * len is too small (QUANTITY_STRING_MAX always suffices).
 */
_warn_unused_result_ int quantity_to_string(const struct quantity *q, char *buf, size_t len);

/*
 * Like quantity_to_string() but ignores the cached input text: always the canonical form for
 * the quantity's format ("+1G" → "1G", "01G" → "1G", "1E3" → "1e3"). §10 W15.
 */
_warn_unused_result_ int quantity_to_canonical_string(const struct quantity *q, char *buf,
                                                      size_t len);

const char *quantity_format_to_string(enum quantity_format f);
