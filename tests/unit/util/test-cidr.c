/* SPDX-License-Identifier: Apache-2.0 */
/* util/cidr: address ranges, the console's trusted proxies and the servers' exemption from the
 * per-address connection limit. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cidr.h"

static struct sockaddr_in v4(const char *a)
{
        struct sockaddr_in s = { .sin_family = AF_INET };

        cr_assert_eq(inet_pton(AF_INET, a, &s.sin_addr), 1);
        return s;
}

static struct sockaddr_in6 v6(const char *a)
{
        struct sockaddr_in6 s = { .sin6_family = AF_INET6 };

        cr_assert_eq(inet_pton(AF_INET6, a, &s.sin6_addr), 1);
        return s;
}

Test(cidr, parse_and_match)
{
        struct cidr *c = NULL;
        size_t n = 0;
        struct sockaddr_in a = v4("10.1.2.3"), b = v4("11.0.0.1"), lo = v4("127.0.0.1");
        struct sockaddr_in6 l6 = v6("::1"), m = v6("::ffff:10.9.9.9"), f = v6("fd00::5");

        cr_assert_eq(cidr_list_parse(" 10.0.0.0/8, 127.0.0.1 ,fd00::/8", &c, &n), 0);
        cr_assert_eq(n, 3);
        cr_assert(cidr_match(c, n, (struct sockaddr *)&a));
        cr_assert_not(cidr_match(c, n, (struct sockaddr *)&b));
        cr_assert(cidr_match(c, n, (struct sockaddr *)&lo));
        cr_assert_not(cidr_match(c, n, (struct sockaddr *)&l6), "::1 is not 127.0.0.1");
        cr_assert(cidr_match(c, n, (struct sockaddr *)&m), "IPv4-mapped counts as IPv4");
        cr_assert(cidr_match(c, n, (struct sockaddr *)&f));
        cr_assert_not(cidr_match(c, n, NULL));
        free(c);
}

Test(cidr, odd_prefixes)
{
        struct cidr c;
        struct sockaddr_in in = v4("192.168.1.200"), out = v4("192.168.1.100");

        cr_assert_eq(cidr_parse("192.168.1.128/25", &c), 0);
        cr_assert(cidr_match(&c, 1, (struct sockaddr *)&in));
        cr_assert_not(cidr_match(&c, 1, (struct sockaddr *)&out));
        cr_assert_eq(cidr_parse("0.0.0.0/0", &c), 0);
        cr_assert(cidr_match(&c, 1, (struct sockaddr *)&out));
}

Test(cidr, refuses_garbage)
{
        static const char *const bad[] = {
                "10.0.0.0/33", "::/129",    "10.0.0/8",    "abc",
                "/8",          "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/8x"
        };
        struct cidr c, *v = NULL;
        size_t n;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                cr_assert_eq(cidr_parse(bad[i], &c), -EINVAL, "%s", bad[i]);
        cr_assert_eq(cidr_list_parse("10.0.0.0/8,bogus", &v, &n), -EINVAL);
        cr_assert_null(v);
}

Test(cidr, list_limit)
{
        char list[64 * 16];
        struct cidr *v = NULL;
        size_t n, off = 0;

        for (unsigned i = 0; i <= CIDRS_MAX; i++)
                off += (size_t)snprintf(list + off, sizeof(list) - off, "10.0.%u.0/24,", i);
        cr_assert_eq(cidr_list_parse(list, &v, &n), -E2BIG);
}
