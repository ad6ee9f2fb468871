/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http/server over real loopback sockets: the request deadline. A client that trickles a request
 * a byte at a time (each byte resets the idle timeout) is cut off without blocking others; a
 * keep-alive connection whose requests each complete in time, and a slow handler, are not.
 * The deadlines run on a fake clock (tests/fakes/fake-clock.h) that the tests advance, so the
 * outcome never depends on how busy the machine is.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake-clock.h"
#include "loopback.h"
#include "http/server.h"
#include "util/macro.h"

#define IDLE_S     1
#define DEADLINE_S 2

static struct fake_clock engine_clock;

static int handler(void *userdata, struct http_req *req, struct http_resp *resp)
{
        (void)userdata;
        if (streq(req->path, "/slow")) /* a handler that takes longer than the deadline */
                fake_clock_advance(&engine_clock, (DEADLINE_S + 1) * USEC_PER_SEC);
        if (streq(req->path, "/fail"))
                return -EIO;
        http_resp_set_text(resp, 200, "text/plain", "ok");
        return 0;
}

/* A server with the defaults and handler, its error shape, and (deadlines) the short timeouts. */
static struct http_server *start_with(bool deadlines, enum http_error_style style,
                                      json_t *(*body)(unsigned, const char *))
{
        struct http_server_config cfg = { HTTP_SERVER_CONFIG_DEFAULTS };
        struct http_server *s = NULL;

        fake_clock_init(&engine_clock, 1000 * USEC_PER_SEC);
        cfg.clock = &engine_clock.clock;
        if (deadlines) {
                cfg.connection_timeout = IDLE_S;
                cfg.request_timeout = DEADLINE_S;
        }
        cfg.handler = handler;
        cfg.error_style = style;
        cfg.error_body = body;
        cr_assert_eq(http_server_start(&cfg, &s), 0);
        return s;
}

static struct http_server *start(void)
{
        return start_with(true, HTTP_ERROR_NUMERIC, NULL);
}

static int dial(struct http_server *s)
{
        return loopback_dial(http_server_port(s));
}

/* Reads one response (up to the "ok" body); true when it is a 200. */
static bool read_ok(int fd)
{
        char buf[2048];

        return loopback_read_until(fd, buf, sizeof(buf), "\r\n\r\nok", 10000) > 0 &&
               strneq(buf, "HTTP/1.1 200", 12);
}

/* True when the server has closed (or reset) the connection. */
static bool closed_by_server(int fd)
{
        struct pollfd p = { .fd = fd, .events = POLLIN };
        char c;

        if (poll(&p, 1, 0) != 1)
                return false;
        return recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

Test(http_server, trickling_client_is_cut_off_and_blocks_no_one)
{
        struct http_server *s = start();
        int fd = dial(s);
        bool cut = false, other_served = false;

        loopback_send_all(fd, "GET / HTTP/1.1\r\nHost: t\r\nX-Pad: ");
        /* a byte every 200 ms of the engine's clock: never idle for the 1 s idle timeout; 150
         * bytes would take 30 s */
        for (int i = 0; i < 150 && !cut; i++) {
                if (send(fd, "a", 1, MSG_NOSIGNAL) != 1 || closed_by_server(fd)) {
                        cut = true;
                        break;
                }
                if (i == 3) {
                        int other = dial(s);

                        loopback_send_all(other, "GET / HTTP/1.1\r\nHost: t\r\n\r\n");
                        other_served = read_ok(other);
                        close(other);
                }
                (void)usleep(20 *
                             1000); /* the byte is read (if late: a 1 s idle cut, also a cut) */
                fake_clock_advance(&engine_clock, 200 * USEC_PER_MSEC);
        }
        cr_assert(other_served, "another client was not served while one trickled");
        cr_assert(cut, "a client trickling one header byte every 200 ms was never cut off");
        cr_assert_geq(http_server_deadline_cuts(s), 1);
        close(fd);
        http_server_free(s);
}

Test(http_server, keep_alive_requests_that_complete_are_not_cut)
{
        struct http_server *s = start();
        int fd = dial(s);

        /* 8 requests 400 ms apart on one connection: 3.2 s > the 2 s deadline, never idle 1 s */
        for (int i = 0; i < 8; i++) {
                loopback_send_all(fd, "GET / HTTP/1.1\r\nHost: t\r\n\r\n");
                cr_assert(read_ok(fd), "request %d on the keep-alive connection failed", i);
                fake_clock_advance(&engine_clock, 400 * USEC_PER_MSEC);
        }
        cr_assert_eq(http_server_deadline_cuts(s), 0);
        close(fd);
        http_server_free(s);
}

Test(http_server, handler_time_does_not_count)
{
        struct http_server *s = start();
        int fd = dial(s);

        loopback_send_all(fd, "GET /slow HTTP/1.1\r\nHost: t\r\n\r\n");
        cr_assert(read_ok(fd), "a handler that takes longer than the deadline was cut off");
        cr_assert_eq(http_server_deadline_cuts(s), 0);
        close(fd);
        http_server_free(s);
}

Test(http_server, deadline_must_exceed_idle_timeout)
{
        struct http_server_config cfg = { HTTP_SERVER_CONFIG_DEFAULTS };
        struct http_server *s = NULL;

        cfg.handler = handler;
        cfg.connection_timeout = 5;
        cfg.request_timeout = 5;
        cr_assert_eq(http_server_start(&cfg, &s), -EINVAL);
        cfg.request_timeout = 0; /* disabled */
        cr_assert_eq(http_server_start(&cfg, &s), 0);
        http_server_free(s);
}

/* Sends raw on a new connection to s and reads the whole answer (the server closes). */
static void exchange(struct http_server *s, const char *raw, char *buf, size_t size)
{
        int fd = dial(s);
        size_t len = 0;

        loopback_send_all(fd, raw);
        while (len < size - 1) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t k;

                if (poll(&p, 1, 10000) != 1)
                        break;
                k = recv(fd, buf + len, size - 1 - len, 0);
                if (k <= 0)
                        break;
                len += (size_t)k;
        }
        buf[len] = '\0';
        (void)close(fd);
}

static json_t *envelope(unsigned status, const char *message)
{
        return json_pack("{s:{s:i,s:s}}", "error", "status", (int)status, "message", message);
}

/* Every refusal the server writes, and the 500 of a failing handler, has the configured shape. */
Test(http_server, refusals_follow_the_error_style)
{
        static const struct {
                enum http_error_style style;
                json_t *(*body)(unsigned, const char *);
                const char *want_414, *want_500;
        } cases[] = {
                { HTTP_ERROR_NUMERIC, NULL,
                  "{\"message\":\"request path longer than 2048 bytes\",\"code\":414}",
                  "{\"message\":\"internal server error\",\"code\":500}" },
                { HTTP_ERROR_REASON, NULL,
                  "{\"code\":\"URI Too Long\",\"message\":\"request path longer than 2048 bytes\"}",
                  "{\"code\":\"Internal Server Error\",\"message\":\"internal server error\"}" },
                { HTTP_ERROR_NUMERIC, envelope,
                  "{\"error\":{\"status\":414,\"message\":\"request path longer than 2048 bytes\"}}",
                  "{\"error\":{\"status\":500,\"message\":\"internal server error\"}}" },
        };
        char path[2100], raw[2300], buf[8192];

        path[0] = '/';
        memset(path + 1, 'a', 2048);
        path[2049] = '\0';
        (void)snprintf(raw, sizeof(raw), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct http_server *s = start_with(false, cases[i].style, cases[i].body);

                exchange(s, raw, buf, sizeof(buf));
                cr_assert(strneq(buf, "HTTP/1.1 414", 12), "case %zu: %.40s", i, buf);
                cr_assert(strstr(buf, "\r\n\r\n") &&
                                  streq(strstr(buf, "\r\n\r\n") + 4, cases[i].want_414),
                          "case %zu: %s", i, buf);
                exchange(s, "GET /fail HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf,
                         sizeof(buf));
                cr_assert(strneq(buf, "HTTP/1.1 500", 12), "case %zu: %.40s", i, buf);
                cr_assert(strstr(buf, "\r\n\r\n") &&
                                  streq(strstr(buf, "\r\n\r\n") + 4, cases[i].want_500),
                          "case %zu: %s", i, buf);
                http_server_free(s);
        }
}
