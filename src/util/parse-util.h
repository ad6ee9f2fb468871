/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Number parsing that checks everything strtoull() leaves to the caller: errno, trailing garbage,
 * leading whitespace and sign, and the range of the target type. All return 0 or -EINVAL/-ERANGE
 * and write *ret only on success.
 */

#include <stdbool.h>
#include <stdint.h>

#include "util/macro.h"

_warn_unused_result_ int safe_atou64(const char *s, uint64_t *ret);
_warn_unused_result_ int safe_atoi64(const char *s, int64_t *ret);
_warn_unused_result_ int safe_atou32(const char *s, uint32_t *ret);
_warn_unused_result_ int safe_atoi32(const char *s, int32_t *ret);
_warn_unused_result_ int safe_atou16(const char *s, uint16_t *ret);
/* Parses "true"/"false"/"1"/"0"/"yes"/"no" (case-insensitive). */
_warn_unused_result_ int parse_boolean(const char *s, bool *ret);
/* Parses a duration such as "500ms", "10s", "2m", "1h" or a plain number of seconds, into usec. */
_warn_unused_result_ int parse_duration_usec(const char *s, uint64_t *ret);
/* Go's time.ParseDuration for the units ns, us, µs, ms, s, m, h (no sign; "0" alone needs no
 * unit), as KServe's and the catalog's flags take it, into usec; -EINVAL. */
_warn_unused_result_ int parse_go_duration_usec(const char *s, uint64_t *ret);
