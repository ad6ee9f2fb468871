/* SPDX-License-Identifier: Apache-2.0 */
#include "loopback.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/macro.h"

int loopback_listen(uint16_t *ret_port)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        cr_assert_geq(fd, 0);
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        cr_assert_eq(listen(fd, 16), 0);
        cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
        *ret_port = ntohs(a.sin_port);
        return fd;
}

int loopback_dial(uint16_t port)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        cr_assert_geq(fd, 0);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0, "connect: %d", errno);
        return fd;
}

void loopback_send_all(int fd, const char *data)
{
        size_t n = strlen(data);

        cr_assert_eq(send(fd, data, n, MSG_NOSIGNAL), (ssize_t)n, "send: %d", errno);
}

/* Whether buf[0..n) (a whole head ending at body) holds the whole request. */
static bool request_complete(const char *buf, const char *body, size_t n)
{
        const char *cl = strcasestr(buf, "\r\nContent-Length:");
        const char *te = strcasestr(buf, "\r\nTransfer-Encoding: chunked");

        if (te && te < body)
                return strstr(body - 1, "\n0\r\n") && n >= 4 && streq(buf + n - 4, "\r\n\r\n");
        if (cl && cl < body)
                return n >=
                       (size_t)(body - buf) + strtoul(cl + strlen("\r\nContent-Length:"), NULL, 10);
        return true;
}

size_t loopback_read_request(int fd, char *buf, size_t size)
{
        size_t n = 0;

        for (;;) {
                const char *end;
                ssize_t k;

                if (n == size - 1)
                        return n;
                k = recv(fd, buf + n, size - 1 - n, 0);
                if (k <= 0)
                        return 0;
                n += (size_t)k;
                buf[n] = '\0';
                end = strstr(buf, "\r\n\r\n");
                if (end && request_complete(buf, end + 4, n))
                        return n;
        }
}

size_t loopback_read_until(int fd, char *buf, size_t size, const char *needle, int timeout_ms)
{
        size_t n = 0;

        buf[0] = '\0';
        while (n < size - 1) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t k;

                if (poll(&p, 1, timeout_ms) != 1)
                        return 0;
                k = recv(fd, buf + n, size - 1 - n, 0);
                if (k <= 0)
                        return 0;
                n += (size_t)k;
                buf[n] = '\0';
                if (strstr(buf, needle))
                        return n;
        }
        return 0;
}
