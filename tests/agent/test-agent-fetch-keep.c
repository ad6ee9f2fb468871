/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Connection reuse (fetch_thread_keep()): a thread that keeps sends one download after another
 * over one keep-alive connection, as Go's HTTP client does for KServe's agent; without it each
 * download opens its own. A kept connection the server has closed meanwhile costs nothing but a
 * new connection. The server here counts the connections it accepts and the requests on them.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/fetch.h"
#include "loopback.h"

struct server {
        int lfd;
        uint16_t port;
        bool close_after_each; /* closes an idle connection without saying so (no Connection:
                                * close): the client's kept connection is dead when reused */
        atomic_uint accepted, requests;
        pthread_t thread;
};

/* One connection at a time, each served until the client closes it. */
static void *serve(void *userdata)
{
        struct server *s = userdata;
        char req[4096];
        int fd;

        while ((fd = accept(s->lfd, NULL, NULL)) >= 0) {
                atomic_fetch_add(&s->accepted, 1);
                while (loopback_read_request(fd, req, sizeof(req)) > 0) {
                        atomic_fetch_add(&s->requests, 1);
                        loopback_send_all(fd, "HTTP/1.1 200 OK\r\n"
                                              "Content-Type: application/octet-stream\r\n"
                                              "Content-Length: 5\r\n\r\nmodel");
                        if (s->close_after_each)
                                break;
                }
                close(fd);
        }
        return NULL;
}

static void server_start(struct server *s, bool close_after_each)
{
        *s = (struct server){ .close_after_each = close_after_each };
        s->lfd = loopback_listen(&s->port);
        cr_assert_eq(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void server_stop(struct server *s)
{
        /* accept() returns EINVAL once its socket is shut down */
        (void)shutdown(s->lfd, SHUT_RDWR);
        pthread_join(s->thread, NULL);
        close(s->lfd);
}

/* Downloads http://127.0.0.1:port/mN/model.bin into a new directory and checks its content. */
static void download(const struct fetch_config *fc, const struct server *s, int n)
{
        char dir[] = "/tmp/fetch-keep-XXXXXX", url[96], path[128], err[512] = "", got[16] = "";
        char cmd[128];
        FILE *f;
        int r;

        cr_assert_not_null(mkdtemp(dir));
        (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u/m%d/model.bin", (unsigned)s->port, n);
        r = fetch_model(fc, url, dir, err, sizeof(err));
        cr_assert_eq(r, 0, "download %d: r = %d (%s)", n, r, err);
        (void)snprintf(path, sizeof(path), "%s/model.bin", dir);
        f = fopen(path, "re");
        cr_assert_not_null(f, "%s", path);
        cr_assert_not_null(fgets(got, sizeof(got), f));
        fclose(f);
        cr_assert_str_eq(got, "model");
        (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        cr_assert_eq(system(cmd), 0);
}

static struct fetch_config config(void)
{
        struct fetch_config fc;

        cr_assert_eq(fetch_config_from_env(&fc), 0);
        fc.attempts = 1; /* a dead kept connection must not need a retry of ours */
        return fc;
}

Test(fetch_keep, a_thread_that_keeps_downloads_over_one_connection)
{
        struct fetch_config fc = config();
        struct server s;

        server_start(&s, false);
        fetch_thread_keep();
        for (int i = 0; i < 3; i++)
                download(&fc, &s, i);
        cr_expect_eq(atomic_load(&s.requests), 3);
        cr_expect_eq(atomic_load(&s.accepted), 1, "3 downloads opened %u connections",
                     atomic_load(&s.accepted));
        /* released: the connection is closed, the next download opens its own */
        fetch_thread_release();
        download(&fc, &s, 3);
        fetch_thread_release(); /* twice is harmless */
        cr_expect_eq(atomic_load(&s.accepted), 2);
        server_stop(&s);
        fetch_config_release(&fc);
}

Test(fetch_keep, without_keeping_each_download_opens_its_own_connection)
{
        struct fetch_config fc = config();
        struct server s;

        server_start(&s, false);
        for (int i = 0; i < 3; i++)
                download(&fc, &s, i);
        cr_expect_eq(atomic_load(&s.accepted), 3);
        server_stop(&s);
        fetch_config_release(&fc);
}

Test(fetch_keep, a_kept_connection_the_server_closed_is_replaced)
{
        struct fetch_config fc = config();
        struct server s;

        server_start(&s, true);
        fetch_thread_keep();
        for (int i = 0; i < 3; i++)
                download(&fc, &s, i); /* asserts success with one attempt */
        fetch_thread_release();
        cr_expect_eq(atomic_load(&s.requests), 3);
        cr_expect_eq(atomic_load(&s.accepted), 3);
        server_stop(&s);
        fetch_config_release(&fc);
}
