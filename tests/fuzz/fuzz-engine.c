/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The connection engine (src/http/engine.c) over a real loopback connection: one engine (one
 * loop thread) for the process; each input is one connection. The first byte b picks the piece
 * size, b % 65 (0: all at once, else 1-64 bytes, each piece its own send with TCP_NODELAY; the
 * committed seeds use letters, 'A' = all at once, 'C' = 2 bytes …, so they stay text); the rest is
 * what the client sends, after which it shuts its write side and reads until the server closes.
 * Checks: no crash (ASan/UBSan, in the loop thread too), the server closes the connection once
 * the client's bytes end (within 5 s: a hang traps), and every answer starts with "HTTP/1.1 ",
 * has a status the engine can send, a complete head and a Content-Length that its body fills,
 * and nothing follows a refusal. The handler answers "ok" (empty for HEAD), a 64 KiB body for
 * /big (so that the engine's writer meets a full socket), or "ok" with Connection: close for
 * /close.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http/engine.h"
#include "http/server.h"

#define OUT_MAX  ((size_t)8 * 1024 * 1024) /* answers kept for the check; the rest is read */
#define WAIT_MS  5000
#define BIG_BODY ((size_t)64 * 1024)

static struct http_engine *engine;

/* Names the broken check (errno too, for the socket calls) before the crash libFuzzer reports. */
#define fail(why)                                                                               \
        do {                                                                                    \
                fprintf(stderr, "fuzz-engine: %s (line %d, errno %d)\n", why, __LINE__, errno); \
                __builtin_trap();                                                               \
        } while (0)
static char big[BIG_BODY + 1];

static void serve(void *userdata, struct http_engine_req *req, struct http_resp *resp)
{
        bool head = strcmp(req->method, "HEAD") == 0;

        (void)userdata;
        if (strncmp(req->target, "/big", 4) == 0 && !head) {
                http_resp_set_text(resp, 200, "text/plain", big);
                return;
        }
        http_resp_set_text(resp, 200, "text/plain", head ? "" : "ok");
        if (strncmp(req->target, "/close", 6) == 0 &&
            http_resp_add_header(resp, "Connection", "close") < 0)
                fail("add_header failed");
}

static void refuse(void *userdata, unsigned status, const char *message, struct http_resp *resp)
{
        char text[512];

        (void)userdata;
        (void)snprintf(text, sizeof(text), "{\"code\":%u,\"message\":\"%s\"}", status, message);
        http_resp_set_text(resp, status, "application/json", text);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        struct http_engine_config cfg = {
                .address = "127.0.0.1",
                .body_max = 4096,
                .header_timeout = 30,
                .request_timeout = 30,
                .max_connections = 64,
                .threads = 1,
                .serve = serve,
                .refuse = refuse,
        };

        (void)argc;
        (void)argv;
        memset(big, 'b', BIG_BODY);
        if (http_engine_start(&cfg, &engine) < 0)
                fail("http_engine_start failed");
        return 0;
}

static bool known_status(unsigned s)
{
        static const unsigned known[] = { 100, 200, 400, 413, 414, 431, 500, 501, 503, 505 };

        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
                if (s == known[i])
                        return true;
        return false;
}

/* Checks the answers in out[0, len); complete: the server closed and nothing was dropped. */
static void check_answers(const char *out, size_t len, bool complete)
{
        size_t at = 0;
        bool refused = false;

        while (at < len) {
                const char *p = out + at, *end = memmem(p, len - at, "\r\n\r\n", 4), *cl;
                size_t head_len, body_len;
                unsigned status;

                if (refused || len - at < 13 || memcmp(p, "HTTP/1.1 ", 9) != 0)
                        fail("an answer that is not HTTP/1.1, or bytes after a refusal");
                if (!end) {
                        if (complete)
                                fail("a head cut short");
                        return;
                }
                status = (unsigned)strtoul(p + 9, NULL, 10);
                if (!known_status(status))
                        fail("a status the engine cannot send");
                head_len = (size_t)(end + 4 - p);
                at += head_len;
                if (status == 100)
                        continue;
                cl = memmem(p, head_len, "\r\nContent-Length: ", 18);
                if (!cl)
                        fail("an answer without Content-Length");
                body_len = strtoul(cl + 18, NULL, 10);
                if (body_len > len - at) {
                        if (complete)
                                fail("a body cut short");
                        return;
                }
                at += body_len;
                refused = status >= 400;
        }
}

/* Reads what is there (non-blocking); returns false once the server closed. */
static bool take(int fd, char *out, size_t *len, bool *dropped)
{
        char scratch[16384];

        for (;;) {
                bool keep = *len < OUT_MAX;
                ssize_t n = recv(fd, keep ? out + *len : scratch,
                                 keep ? OUT_MAX - *len : sizeof(scratch), MSG_DONTWAIT);

                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return true;
                if (n == 0)
                        return false;
                if (n < 0) {
                        *dropped = true; /* a reset: what it discarded is not checked */
                        return false;
                }
                if (keep)
                        *len += (size_t)n;
                else
                        *dropped = true;
        }
}

/*
 * poll() for up to WAIT_MS in all, through signals: libFuzzer's -timeout alarm (SIGALRM, every
 * timeout / 2 + 1 s) interrupts it with EINTR, which is not the server hanging. Returns the
 * revents, 0 when WAIT_MS passed with nothing.
 */
static short wait_for(int fd, short events)
{
        struct timespec start, now;

        (void)clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                struct pollfd p = { .fd = fd, .events = events };
                long spent;
                int r;

                (void)clock_gettime(CLOCK_MONOTONIC, &now);
                spent = (now.tv_sec - start.tv_sec) * 1000 +
                        (now.tv_nsec - start.tv_nsec) / 1000000;
                if (spent >= WAIT_MS)
                        return 0;
                r = poll(&p, 1, (int)(WAIT_MS - spent));
                if (r == 1)
                        return p.revents;
                if (r < 0 && errno != EINTR)
                        fail("poll failed");
        }
}

/*
 * A connection from the next of 250 loopback source addresses. The client half-closes first, so
 * each run leaves its side in TIME_WAIT for 60 s; at thousands of runs a second, one source
 * address would use up its 28,000 ephemeral ports within seconds and bind() would fail.
 */
static int dial(void)
{
        static unsigned next;
        struct sockaddr_in sa = { .sin_family = AF_INET,
                                  .sin_port = htons(http_engine_port(engine)) };
        struct sockaddr_in from = { .sin_family = AF_INET };
        int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        from.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 256 * (1 + next++ % 250)); /* 127.0.x.1 */
        if (fd < 0 || bind(fd, (struct sockaddr *)&from, sizeof(from)) < 0)
                fail("socket/bind failed");
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int err = 0;
                socklen_t len = sizeof(err);

                /* the alarm interrupted it (a SYN retransmitted after 1 s): it goes on */
                if (errno != EINTR)
                        fail("connect failed");
                if (!(wait_for(fd, POLLOUT) & POLLOUT) ||
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0)
                        fail("connect failed after EINTR");
        }
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char out[OUT_MAX];
        size_t len = 0, sent = 0, piece;
        bool open = true, dropped = false;
        int fd;

        if (size < 1)
                return 0;
        piece = data[0] % 65 == 0 ? size : data[0] % 65;
        data++;
        size--;
        fd = dial();
        while (sent < size && open) {
                size_t n = size - sent < piece ? size - sent : piece;
                short revents = wait_for(fd, POLLIN | POLLOUT);

                if (!revents)
                        fail("neither readable nor writable: the server hangs");
                if (revents & POLLIN)
                        open = take(fd, out, &len, &dropped);
                if (open && (revents & POLLOUT)) {
                        ssize_t k = send(fd, data + sent, n, MSG_NOSIGNAL | MSG_DONTWAIT);

                        if (k < 0 && errno != EAGAIN && errno != EINTR)
                                open = false; /* the server closed after a refusal */
                        else if (k > 0)
                                sent += (size_t)k;
                }
        }
        (void)shutdown(fd, SHUT_WR);
        while (open) {
                if (!wait_for(fd, POLLIN))
                        fail("the client's bytes ended but the server kept it open");
                open = take(fd, out, &len, &dropped);
        }
        (void)close(fd);
        check_answers(out, len, !dropped);
        return 0;
}
