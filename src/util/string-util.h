/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Small string helpers. */

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

/*
 * Copies an optional string: *ret = NULL for s == NULL, else an owned copy. Returns 0 or
 * -ENOMEM (then *ret is NULL).
 */
_warn_unused_result_ int strdup_opt(const char *s, char **ret);

/* The value of one hexadecimal digit (either case), or -EINVAL. */
int unhexchar(char c);

/* Decodes the %XX escapes of s[0..len) into a new string ('+' stays '+'): -EINVAL for a bad
 * escape or %00, -ENOMEM. */
_warn_unused_result_ int percent_decode(const char *s, size_t len, char **ret);
/* As percent_decode(), and '+' is a space (application/x-www-form-urlencoded, a query string). */
_warn_unused_result_ int percent_decode_form(const char *s, size_t len, char **ret);

/*
 * Binary search of @n elements of @size bytes at @base, sorted by strcmp() of the string each one
 * begins with (a struct whose first member is its name, or an array of char *). Returns the
 * position of @name, or where it would be inserted to keep the order (*ret_found false).
 */
size_t sorted_find(const void *base, size_t n, size_t size, const char *name, bool *ret_found);
