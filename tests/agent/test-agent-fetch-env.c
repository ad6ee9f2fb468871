/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The environment KServe's credential builder gives its agent container, as the agent's downloads
 * read it (agent/fetch.h): an https-host secret's "<host>-headers" sent with the http(s)
 * downloads from that host (a scripted server on loopback records the request), and
 * awsAnonymousCredential, KServe's name for anonymous S3 access.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/fetch.h"
#include "loopback.h"

static char request[8192];

/* One request, recorded in @request, answered with a small file. */
static void *serve_one(void *userdata)
{
        int lfd = *(int *)userdata, fd = accept(lfd, NULL, NULL);

        if (fd < 0)
                return NULL;
        (void)loopback_read_request(fd, request, sizeof(request));
        loopback_send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                              "Content-Length: 5\r\nConnection: close\r\n\r\nmodel");
        close(fd);
        return NULL;
}

static void remove_dir(const char *dir)
{
        char cmd[128];

        (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        cr_assert_eq(system(cmd), 0);
}

Test(fetch_env, host_headers_go_with_the_download)
{
        struct fetch_config fc;
        uint16_t port;
        int lfd = loopback_listen(&port);
        pthread_t srv;
        char dir[] = "/tmp/fetch-env-XXXXXX", url[64], path[128], err[512] = "", got[8] = "";
        FILE *f;
        int r;

        /* environment of this test's process only (Criterion forks each test) */
        cr_assert_eq(setenv("127.0.0.1-headers",
                            "{\"Authorization\":\"Bearer s3cr3t\",\"X-Api-Key\":\"k 1\"}", 1),
                     0);
        cr_assert_eq(fetch_config_from_env(&fc), 0);
        cr_assert_not_null(mkdtemp(dir));
        (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u/iris/model.bin", (unsigned)port);
        cr_assert_eq(pthread_create(&srv, NULL, serve_one, &lfd), 0);
        r = fetch_model(&fc, url, dir, err, sizeof(err));
        pthread_join(srv, NULL);
        close(lfd);
        cr_assert_eq(r, 0, "r = %d (%s)", r, err);
        cr_assert(strstr(request, "\r\nAuthorization: Bearer s3cr3t\r\n"), "%s", request);
        cr_assert(strstr(request, "\r\nX-Api-Key: k 1\r\n"), "%s", request);
        (void)snprintf(path, sizeof(path), "%s/model.bin", dir);
        f = fopen(path, "re");
        cr_assert_not_null(f);
        cr_assert_not_null(fgets(got, sizeof(got), f));
        (void)fclose(f);
        cr_assert_str_eq(got, "model");
        fetch_config_release(&fc);
        remove_dir(dir);
}

/* Another host's variable is not sent; a malformed one of this host fails the download, naming
 * the variable, before any request (nothing listens on port 9). */
Test(fetch_env, host_headers_are_per_host_and_checked)
{
        struct fetch_config fc;
        char dir[] = "/tmp/fetch-env-XXXXXX", err[512] = "";
        int r;

        cr_assert_eq(setenv("127.0.0.1-headers", "{\"Authorization\": 42}", 1), 0);
        cr_assert_eq(fetch_config_from_env(&fc), 0);
        cr_assert_not_null(mkdtemp(dir));
        r = fetch_model(&fc, "http://127.0.0.1:9/m.bin", dir, err, sizeof(err));
        cr_assert_eq(r, -EINVAL, "r = %d (%s)", r, err);
        cr_assert(strstr(err, "127.0.0.1-headers") && strstr(err, "not a string"), "%s", err);
        /* localhost is another host: no variable, so the transfer is tried (and refused) */
        fc.attempts = 1;
        r = fetch_model(&fc, "http://localhost:9/m.bin", dir, err, sizeof(err));
        cr_assert(r < 0 && r != -EINVAL, "r = %d (%s)", r, err);
        fetch_config_release(&fc);
        remove_dir(dir);
}

/* KServe's credential builder names the variable awsAnonymousCredential (annotation
 * serving.kserve.io/s3-useanoncredential); its agent and storage initializer read that name. */
Test(fetch_env, aws_anonymous_credential_as_kserve_names_it)
{
        struct fetch_config fc;

        cr_assert_eq(setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1), 0);
        cr_assert_eq(setenv("AWS_SECRET_ACCESS_KEY", "secret", 1), 0);
        cr_assert_eq(fetch_config_from_env(&fc), 0);
        cr_assert_str_eq(fc.access_key, "AKIDEXAMPLE", "keys are used by default");
        fetch_config_release(&fc);

        cr_assert_eq(setenv("awsAnonymousCredential", "true", 1), 0);
        cr_assert_eq(fetch_config_from_env(&fc), 0);
        cr_assert_null(fc.access_key, "awsAnonymousCredential=true: anonymous");
        fetch_config_release(&fc);

        cr_assert_eq(setenv("awsAnonymousCredential", "false", 1), 0);
        cr_assert_eq(fetch_config_from_env(&fc), 0);
        cr_assert_not_null(fc.access_key);
        fetch_config_release(&fc);
}
