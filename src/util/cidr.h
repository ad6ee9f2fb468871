/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Address ranges (CIDR) and lists of them: the console's trusted proxies (ui/auth.h) and the
 * HTTP servers' exemption from the per-address connection limit (http/server.h). No I/O.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
struct sockaddr; /* <sys/socket.h>; only pointers here */

#include "util/macro.h"

#define CIDRS_MAX 64U /* ranges in one list */

struct cidr {
        int family; /* AF_INET or AF_INET6 */
        uint8_t addr[16];
        unsigned prefix;
};

/* Parses "10.0.0.0/8", "127.0.0.1" (a /32), "::1", "fd00::/8". Returns 0 or -EINVAL. */
_warn_unused_result_ int cidr_parse(const char *s, struct cidr *ret);
/* Parses a comma-separated list (spaces allowed) into a new array (owned; NULL with *ret_n 0 for
 * an empty list). -EINVAL names nothing: the caller prints the list; -E2BIG past CIDRS_MAX. */
_warn_unused_result_ int cidr_list_parse(const char *list, struct cidr **ret, size_t *ret_n);
/* True when sa (AF_INET, AF_INET6; IPv4-mapped IPv6 counts as IPv4) is inside one of cidrs. */
bool cidr_match(const struct cidr *cidrs, size_t n, const struct sockaddr *sa);
