/* SPDX-License-Identifier: Apache-2.0 */
#include "util/cidr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/parse-util.h"

int cidr_parse(const char *s, struct cidr *ret)
{
        char addr[INET6_ADDRSTRLEN + 1];
        const char *slash = strchr(s, '/');
        size_t n = slash ? (size_t)(slash - s) : strlen(s);
        struct cidr c = { 0 };
        unsigned max;

        if (n == 0 || n >= sizeof(addr))
                return -EINVAL;
        memcpy(addr, s, n);
        addr[n] = '\0';
        if (inet_pton(AF_INET, addr, c.addr) == 1) {
                c.family = AF_INET;
                max = 32;
        } else if (inet_pton(AF_INET6, addr, c.addr) == 1) {
                c.family = AF_INET6;
                max = 128;
        } else
                return -EINVAL;
        c.prefix = max;
        if (slash) {
                uint32_t p;

                if (safe_atou32(slash + 1, &p) < 0 || p > max)
                        return -EINVAL;
                c.prefix = p;
        }
        *ret = c;
        return 0;
}

/* The next item of the comma-separated list at *cursor, blanks around it dropped: *ret_item and
 * its length (0 for an empty item); *cursor moves past the comma, to NULL after the last item. */
static size_t item_next(const char **cursor, const char **ret_item)
{
        const char *p = *cursor;
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);

        while (n > 0 && (*p == ' ' || *p == '\t')) {
                p++;
                n--;
        }
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
                n--;
        *cursor = e ? e + 1 : NULL;
        *ret_item = p;
        return n;
}

int cidr_list_parse(const char *list, struct cidr **ret, size_t *ret_n)
{
        AUTOFREE struct cidr *v = NULL;
        size_t n = 0;
        const char *cur = list;

        while (cur && *cur) {
                const char *p;
                size_t len = item_next(&cur, &p);
                struct cidr *t;
                char item[64];

                if (len == 0)
                        continue;
                if (len >= sizeof(item))
                        return -EINVAL;
                if (n >= CIDRS_MAX)
                        return -E2BIG;
                memcpy(item, p, len);
                item[len] = '\0';
                t = reallocarray(v, n + 1, sizeof(*v));
                if (!t)
                        return -ENOMEM;
                v = t;
                if (cidr_parse(item, &v[n]) < 0)
                        return -EINVAL;
                n++;
        }
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned bits)
{
        unsigned bytes = bits / 8, rest = bits % 8;

        if (memcmp(a, b, bytes) != 0)
                return false;
        if (rest == 0)
                return true;
        return ((a[bytes] ^ b[bytes]) & (uint8_t)(0xffU << (8 - rest))) == 0;
}

bool cidr_match(const struct cidr *cidrs, size_t n, const struct sockaddr *sa)
{
        static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        uint8_t a4[4], a6[16];
        bool has4 = false, has6 = false;

        if (!sa)
                return false;
        if (sa->sa_family == AF_INET) {
                memcpy(a4, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
                has4 = true;
        } else if (sa->sa_family == AF_INET6) {
                memcpy(a6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
                has6 = true;
                if (memcmp(a6, mapped, sizeof(mapped)) == 0) {
                        memcpy(a4, a6 + 12, 4);
                        has4 = true;
                }
        } else
                return false;
        for (size_t i = 0; i < n; i++) {
                if (cidrs[i].family == AF_INET && has4 &&
                    prefix_equal(cidrs[i].addr, a4, cidrs[i].prefix))
                        return true;
                if (cidrs[i].family == AF_INET6 && has6 &&
                    prefix_equal(cidrs[i].addr, a6, cidrs[i].prefix))
                        return true;
        }
        return false;
}
