/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A real transfer stops when its download is cancelled (fetch_model_cancellable()): a server that
 * sends a body one byte every 50 ms, forever, and a stall timeout far longer than the test, so the
 * only way the call can return is the cancel.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/fetch.h"
#include "loopback.h"

static atomic_bool stop_server;

/* What a test's download left behind goes (the agent's caller removes it the same way). */
static void remove_dir(const char *dir)
{
        char cmd[128];

        (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        cr_assert_eq(system(cmd), 0);
}

static void *trickle(void *userdata)
{
        int lfd = *(int *)userdata, fd;
        char req[4096];

        fd = accept(lfd, NULL, NULL);
        if (fd < 0)
                return NULL;
        (void)loopback_read_request(fd, req, sizeof(req));
        loopback_send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                              "Transfer-Encoding: chunked\r\n\r\n");
        while (!atomic_load(&stop_server)) {
                struct timespec ts = { .tv_nsec = 50L * 1000 * 1000 };

                if (send(fd, "1\r\nx\r\n", 6, MSG_NOSIGNAL) < 0)
                        break;
                nanosleep(&ts, NULL);
        }
        close(fd);
        return NULL;
}

static atomic_bool cancel;

static void *cancel_soon(void *userdata)
{
        struct timespec ts = { .tv_nsec = 300L * 1000 * 1000 };

        (void)userdata;
        nanosleep(&ts, NULL);
        atomic_store(&cancel, true);
        return NULL;
}

Test(fetch_cancel, a_trickling_download_stops_when_cancelled)
{
        struct fetch_config fc;
        uint16_t port;
        int lfd = loopback_listen(&port);
        pthread_t srv, canceller;
        char dir[] = "/tmp/fetch-cancel-XXXXXX", url[64], err[512] = "";
        int r;

        cr_assert_eq(fetch_config_from_env(&fc), 0);
        fc.stall_timeout_sec = 3600; /* a stall never ends this test */
        cr_assert_not_null(mkdtemp(dir));
        (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u/model.bin", (unsigned)port);
        cr_assert_eq(pthread_create(&srv, NULL, trickle, &lfd), 0);
        cr_assert_eq(pthread_create(&canceller, NULL, cancel_soon, NULL), 0);
        r = fetch_model_cancellable(&fc, url, dir, &cancel, err, sizeof(err));
        cr_assert_eq(r, -ECANCELED, "r = %d (%s)", r, err);
        cr_assert(strstr(err, "cancelled"), "%s", err);
        atomic_store(&stop_server, true);
        pthread_join(canceller, NULL);
        pthread_join(srv, NULL);
        close(lfd);
        fetch_config_release(&fc);
        remove_dir(dir);
}

Test(fetch_cancel, cancelled_before_it_starts)
{
        struct fetch_config fc;
        atomic_bool already = true;
        char dir[] = "/tmp/fetch-cancel-XXXXXX", err[512] = "";

        cr_assert_eq(fetch_config_from_env(&fc), 0);
        cr_assert_not_null(mkdtemp(dir));
        /* nothing listens on port 9: only the cancel can explain -ECANCELED */
        cr_assert_eq(fetch_model_cancellable(&fc, "http://127.0.0.1:9/m.bin", dir, &already, err,
                                             sizeof(err)),
                     -ECANCELED, "%s", err);
        fetch_config_release(&fc);
        remove_dir(dir);
}
