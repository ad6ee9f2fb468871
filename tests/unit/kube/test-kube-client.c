/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client against a tiny scripted HTTP/1.1 server on 127.0.0.1 (fault injection: errors,
 * Retry-After, garbage and truncated watch streams, hung servers). The behaviour against a real
 * kube-apiserver is in tests/integration/apiserver/.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "kube/client.h"
#include "loopback.h"

/* ---- scripted server ---- */

#define MAX_STEPS 8

struct step {
        const char *response; /* raw bytes to send */
        bool hold;            /* keep the connection open until the client closes it */
        bool close;           /* close after sending */
        bool silent;          /* send nothing, wait for the client to give up */
};

struct server {
        int fd;
        int port;
        pthread_t thread;
        struct step steps[MAX_STEPS];
        size_t n_steps;
        char requests[MAX_STEPS][8192];
        atomic_int n_requests;
        atomic_int n_connections;
};

static struct server srv;

static void *server_main(void *arg)
{
        size_t next = 0;

        while (next < srv.n_steps) {
                int c = accept(srv.fd, NULL, NULL);
                bool open = true;

                if (c < 0)
                        break;
                atomic_fetch_add(&srv.n_connections, 1);
                while (open && next < srv.n_steps) {
                        const struct step *st = &srv.steps[next];
                        char tmp[64];

                        if (loopback_read_request(c, srv.requests[next], sizeof(srv.requests[0])) <=
                            0)
                                break;
                        atomic_fetch_add(&srv.n_requests, 1);
                        next++;
                        if (!st->silent)
                                (void)!send(c, st->response, strlen(st->response), MSG_NOSIGNAL);
                        if (st->hold || st->silent)
                                while (recv(c, tmp, sizeof(tmp), 0) > 0)
                                        ;
                        if (st->close || st->hold || st->silent)
                                open = false;
                }
                close(c);
        }
        return NULL;
}

static void server_start(void)
{
        uint16_t port;

        srv.fd = loopback_listen(&port);
        srv.port = port;
        cr_assert_eq(pthread_create(&srv.thread, NULL, server_main, NULL), 0);
}

/*
 * Waits for the server thread after the client is done. Shutting the listening socket down first
 * unblocks an accept() for a step that never came (on a slow or loaded run a client timeout or
 * cancel can fire before its request reached the server).
 */
static void server_stop(void)
{
        shutdown(srv.fd, SHUT_RDWR);
        pthread_join(srv.thread, NULL);
}

static void add_step(const char *response, bool close_after)
{
        cr_assert_lt(srv.n_steps, MAX_STEPS);
        srv.steps[srv.n_steps++] = (struct step){ .response = response, .close = close_after };
}

static struct kube_client *client_with(const struct kube_client_options *opts)
{
        char server[64];
        struct kube_config cfg = { .server = server, .namespace = (char *)"default" };
        struct kube_client *c = NULL;

        (void)snprintf(server, sizeof(server), "http://127.0.0.1:%d", srv.port);
        cr_assert_eq(kube_client_new(&cfg, opts, &c), 0);
        return c;
}

static struct kube_client *client_for_server(const char *token, const char *token_file,
                                             usec_t timeout)
{
        char server[64];
        struct kube_config cfg = {
                .server = server,
                .token = (char *)token,
                .token_file = (char *)token_file,
                .namespace = (char *)"default",
        };
        struct kube_client_options opts = { .request_timeout = timeout };
        struct kube_client *c = NULL;

        (void)snprintf(server, sizeof(server), "http://127.0.0.1:%d", srv.port);
        cr_assert_eq(kube_client_new(&cfg, &opts, &c), 0);
        return c;
}

static void init(void)
{
        memset(&srv, 0, sizeof(srv));
        cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
}

static void fini(void)
{
        if (srv.fd > 0) {
                shutdown(srv.fd, SHUT_RDWR);
                close(srv.fd);
        }
        curl_global_cleanup();
}

TestSuite(kube_client, .init = init, .fini = fini, .timeout = 120); /* hang guard only */

static const struct gvr configmaps = { "", "v1", "configmaps" };
static const struct gvr widgets = { "example.com", "v1", "widgets" };

#define JSON_200(body) "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " body

/* ---- paths ---- */

Test(kube_path, resource_paths)
{
        static const struct gvr pods = { NULL, "v1", "pods" };
        static const struct gvr apps = { "apps", "v1", "deployments" };
        char buf[256];

        cr_assert_eq(kube_resource_path(&pods, "ns", "p", NULL, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "/api/v1/namespaces/ns/pods/p");
        cr_assert_eq(kube_resource_path(&pods, NULL, NULL, NULL, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "/api/v1/pods");
        cr_assert_eq(kube_resource_path(&configmaps, "", NULL, NULL, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "/api/v1/configmaps", "empty namespace = all / cluster-scoped");
        cr_assert_eq(kube_resource_path(&apps, "kube-system", NULL, NULL, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "/apis/apps/v1/namespaces/kube-system/deployments");
        cr_assert_eq(kube_resource_path(&widgets, "a", "w-1", "status", buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "/apis/example.com/v1/namespaces/a/widgets/w-1/status");
        cr_assert_eq(kube_resource_path(&widgets, NULL, "system:x", NULL, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "/apis/example.com/v1/widgets/system:x");
}

Test(kube_path, rejects_bad_segments_and_small_buffers)
{
        static const struct gvr noversion = { "", "", "pods" };
        char buf[256];

        cr_assert_eq(kube_resource_path(&configmaps, "ns", "a/b", NULL, buf, sizeof(buf)), -EINVAL);
        cr_assert_eq(kube_resource_path(&configmaps, "ns", "..", NULL, buf, sizeof(buf)), -EINVAL);
        cr_assert_eq(kube_resource_path(&configmaps, "n s", "a", NULL, buf, sizeof(buf)), -EINVAL);
        cr_assert_eq(kube_resource_path(&configmaps, "ns", "a?b", NULL, buf, sizeof(buf)), -EINVAL);
        cr_assert_eq(kube_resource_path(&configmaps, "ns", "%2e", NULL, buf, sizeof(buf)), -EINVAL);
        cr_assert_eq(kube_resource_path(&configmaps, "ns", "", NULL, buf, sizeof(buf)), -EINVAL);
        cr_assert_eq(kube_resource_path(&configmaps, "ns", NULL, "status", buf, sizeof(buf)),
                     -EINVAL, "a subresource needs a name");
        cr_assert_eq(kube_resource_path(&noversion, NULL, NULL, NULL, buf, sizeof(buf)), -EINVAL);
        cr_assert_eq(kube_resource_path(&configmaps, "ns", "x", NULL, buf, 10), -ENOBUFS);
        cr_assert_eq(kube_resource_path(&widgets, "ns", "x", "status", buf, 36), -ENOBUFS);
}

/* ---- requests ---- */

Test(kube_client, get_sends_auth_and_reuses_the_connection)
{
        struct kube_client *c;
        struct kube_status st;
        json_t *obj = NULL;

        add_step(JSON_200("37\r\n\r\n{\"kind\":\"ConfigMap\",\"data\":{\"k\":\"v\"}}"), false);
        add_step(JSON_200("2\r\n\r\n{}"), false);
        server_start();
        c = client_for_server("tok-1", NULL, 0);

        cr_assert_eq(kube_get(c, &configmaps, "ns1", "cm", &obj, &st), 0, "%s", st.message);
        cr_assert_eq(st.http_code, 200);
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(obj, "data"), "k")),
                         "v");
        json_decref(obj);
        cr_assert_eq(kube_get(c, &configmaps, "ns1", "cm2", NULL, NULL), 0);

        kube_client_free(c);
        server_stop();
        cr_assert(strstr(srv.requests[0], "GET /api/v1/namespaces/ns1/configmaps/cm HTTP/1.1\r\n"),
                  "%s", srv.requests[0]);
        cr_assert(strstr(srv.requests[0], "\r\nAuthorization: Bearer tok-1\r\n"));
        cr_assert(strstr(srv.requests[0], "\r\nAccept: application/json\r\n"));
        cr_assert(strstr(srv.requests[0], "\r\nUser-Agent: modelplane/"));
        cr_assert_eq(atomic_load(&srv.n_connections), 1, "keep-alive: one connection for both");
}

Test(kube_client, status_errors_are_decoded)
{
        static const char notfound[] =
                "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 107\r\n\r\n"
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"nope\","
                "\"reason\":\"NotFound\",\"code\":404}        ";
        static const char toomany[] =
                "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: 2\r\n\r\n{}";
        static const char garbage[] = JSON_200("5\r\n\r\n{oops");
        struct kube_client *c;
        struct kube_status st;
        json_t *obj = NULL;

        add_step(notfound, false);
        add_step(toomany, false);
        add_step(garbage, false);
        server_start();
        c = client_with(&(struct kube_client_options){ .throttle_retries = -1 });

        cr_assert_eq(kube_get(c, &widgets, "ns", "w", &obj, &st), -ENOENT);
        cr_assert_null(obj);
        cr_assert_eq(st.http_code, 404);
        cr_assert_str_eq(st.reason, "NotFound");
        cr_assert_str_eq(st.message, "nope");

        cr_assert_eq(kube_get(c, &widgets, "ns", "w", &obj, &st), -EAGAIN);
        cr_assert_eq(st.http_code, 429);
        cr_assert_eq(st.retry_after, 3, "Retry-After header");

        cr_assert_eq(kube_get(c, &widgets, "ns", "w", &obj, &st), -EBADMSG);
        cr_assert_null(obj);
        cr_assert(strstr(st.message, "invalid JSON"), "%s", st.message);

        kube_client_free(c);
        server_stop();
        cr_assert(!strstr(srv.requests[0], "Authorization:"), "no token, no header");
}

/* ---- throttling (API Priority and Fairness) ---- */

Test(kube_throttle, which_answers_are_retried)
{
        cr_assert(kube_throttle_is_retryable(429, 0), "429 always");
        cr_assert(kube_throttle_is_retryable(429, 1));
        cr_assert(kube_throttle_is_retryable(503, 1), "503 with Retry-After");
        cr_assert(!kube_throttle_is_retryable(503, 0), "503 without Retry-After is an outage");
        cr_assert(!kube_throttle_is_retryable(500, 5));
        cr_assert(!kube_throttle_is_retryable(409, 1));
}

Test(kube_throttle, delay_is_retry_after_or_backoff_capped)
{
        usec_t cap = 10 * USEC_PER_SEC;

        cr_assert_eq(kube_throttle_delay(3, 0, cap), 3 * USEC_PER_SEC, "Retry-After wins");
        cr_assert_eq(kube_throttle_delay(0, 0, cap), 100 * USEC_PER_MSEC, "backoff base");
        cr_assert_eq(kube_throttle_delay(0, 3, cap), 800 * USEC_PER_MSEC, "doubles");
        cr_assert_eq(kube_throttle_delay(1, 5, cap), 3200 * USEC_PER_MSEC, "backoff over 1 s");
        cr_assert_eq(kube_throttle_delay(86400, 0, cap), cap, "capped");
        cr_assert_eq(kube_throttle_delay(0, 40, cap), cap, "no overflow");
}

Test(kube_client, throttled_writes_are_resent_and_counted)
{
        static const char toomany[] =
                "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: 2\r\n\r\n{}";
        static const char unavailable[] =
                "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 2\r\n\r\n{}";
        json_t *patch = json_pack("{s:{s:s}}", "metadata", "labels", "a");
        struct kube_client *c, *clone = NULL;
        unsigned long throttled = 0, exhausted = 0;
        struct kube_status st;

        add_step(toomany, false);
        add_step(unavailable, false);
        add_step(JSON_200("2\r\n\r\n{}"), false);
        server_start();
        /* the cap keeps the test quick: Retry-After 3 becomes 10 ms */
        c = client_with(&(struct kube_client_options){ .throttle_wait_max = 10 * USEC_PER_MSEC });
        cr_assert_eq(kube_client_dup(c, &clone), 0);

        cr_assert_eq(kube_patch(clone, &widgets, "ns", "w", KUBE_PATCH_MERGE, patch, NULL, NULL,
                                &st),
                     0, "resent until accepted");
        cr_assert_eq(st.http_code, 200);
        cr_assert_eq(atomic_load(&srv.n_requests), 3);
        for (int i = 0; i < 3; i++) {
                cr_assert(strncmp(srv.requests[i],
                                  "PATCH /apis/example.com/v1/namespaces/ns/widgets/w", 50) == 0,
                          "%d: %s", i, srv.requests[i]);
                cr_assert(strstr(srv.requests[i], "{\"metadata\":{\"labels\":\"a\"}}"),
                          "the body is resent (%d)", i);
        }
        kube_client_throttle_stats(c, &throttled, &exhausted);
        cr_assert_eq(throttled, 2, "counted once per throttled answer, across clones");
        cr_assert_eq(exhausted, 0);

        json_decref(patch);
        kube_client_free(clone);
        kube_client_free(c);
        server_stop();
}

Test(kube_client, throttling_without_end_returns_eagain_with_retry_after)
{
        static const char toomany[] =
                "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 2\r\n\r\n{}";
        static const char dated[] =
                "HTTP/1.1 429 Too Many Requests\r\nRetry-After: Wed, 21 Oct 2026 07:28:00 GMT\r\n"
                "Content-Length: 2\r\n\r\n{}";
        static const char outage[] =
                "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\n\r\n{}";
        struct kube_client *c;
        unsigned long throttled = 0, exhausted = 0;
        struct kube_status st;
        json_t *obj = NULL;

        for (int i = 0; i < 3; i++)
                add_step(toomany, false);
        add_step(dated, false);
        add_step(outage, false);
        server_start();
        c = client_with(&(struct kube_client_options){ .throttle_retries = 2,
                                                       .throttle_wait_max = USEC_PER_MSEC });

        cr_assert_eq(kube_get(c, &widgets, "ns", "w", &obj, &st), -EAGAIN);
        cr_assert_null(obj);
        cr_assert_eq(st.http_code, 429);
        cr_assert_eq(st.retry_after, 7, "the caller learns how long to wait");
        cr_assert_eq(atomic_load(&srv.n_requests), 3, "1 try + 2 retries");
        kube_client_throttle_stats(c, &throttled, &exhausted);
        cr_assert_eq(throttled, 3);
        cr_assert_eq(exhausted, 1);
        kube_client_free(c);

        /* an HTTP-date counts as 1 s; a 503 without Retry-After is not throttling */
        c = client_with(&(struct kube_client_options){ .throttle_retries = -1 });
        cr_assert_eq(kube_get(c, &widgets, "ns", "w", &obj, &st), -EAGAIN);
        cr_assert_eq(st.retry_after, 1, "HTTP-date Retry-After");
        cr_assert_eq(kube_get(c, &widgets, "ns", "w", &obj, &st), -EAGAIN);
        cr_assert_eq(st.http_code, 503);
        cr_assert_eq(atomic_load(&srv.n_requests), 5, "the 503 was not resent");
        kube_client_free(c);
        server_stop();
}

Test(kube_client, list_query_is_escaped)
{
        struct kube_list_options lo = {
                .label_selector = "app=x,tier in (a,b)",
                .field_selector = "metadata.name=n",
                .limit = 500,
                .continue_token = "abc+/=",
        };
        struct kube_client *c;

        add_step(JSON_200("2\r\n\r\n{}"), false);
        server_start();
        c = client_for_server(NULL, NULL, 0);
        cr_assert_eq(kube_list(c, &configmaps, NULL, &lo, NULL, NULL), 0);
        kube_client_free(c);
        server_stop();
        cr_assert(
                strstr(srv.requests[0],
                       "GET /api/v1/configmaps?labelSelector=app%3Dx%2Ctier%20in%20%28a%2Cb%29"
                       "&fieldSelector=metadata.name%3Dn&limit=500&continue=abc%2B%2F%3D HTTP/1.1"),
                "%s", srv.requests[0]);
}

Test(kube_client, writes_send_method_type_and_body)
{
        struct kube_write_options apply = { .field_manager = "modelplane", .force = true };
        struct kube_write_options status = { .subresource = "status" };
        struct kube_delete_options del = { .propagation_policy = "Foreground",
                                           .precondition_uid = "u-1",
                                           .precondition_rv = "42" };
        json_t *obj = json_pack("{s:s}", "kind", "Widget");
        json_t *jp = json_pack("[{s:s, s:s, s:i}]", "op", "replace", "path", "/spec/x", "value", 1);
        struct kube_client *c;

        for (int i = 0; i < 5; i++)
                add_step(JSON_200("2\r\n\r\n{}"), false);
        server_start();
        c = client_for_server(NULL, NULL, 0);

        cr_assert_eq(kube_patch(c, &widgets, "ns", "w", KUBE_PATCH_APPLY, obj, NULL, NULL, NULL),
                     -EINVAL, "apply needs a field manager");
        cr_assert_eq(kube_patch(c, &widgets, "ns", "w", KUBE_PATCH_JSON, obj, NULL, NULL, NULL),
                     -EINVAL, "a JSON patch is an array");

        cr_assert_eq(kube_create(c, &widgets, "ns", obj, NULL, NULL, NULL), 0);
        cr_assert_eq(kube_update(c, &widgets, "ns", "w", obj, &status, NULL, NULL), 0);
        cr_assert_eq(kube_patch(c, &widgets, "ns", "w", KUBE_PATCH_APPLY, obj, &apply, NULL, NULL),
                     0);
        cr_assert_eq(kube_patch(c, &widgets, "ns", "w", KUBE_PATCH_JSON, jp, NULL, NULL, NULL), 0);
        cr_assert_eq(kube_delete(c, &widgets, "ns", "w", &del, NULL, NULL), 0);
        kube_client_free(c);
        server_stop();

        cr_assert(strstr(srv.requests[0], "POST /apis/example.com/v1/namespaces/ns/widgets HTTP"));
        cr_assert(strstr(srv.requests[0], "Content-Type: application/json\r\n"));
        cr_assert(strstr(srv.requests[0], "\r\n\r\n{\"kind\":\"Widget\"}"));
        cr_assert(strstr(srv.requests[1],
                         "PUT /apis/example.com/v1/namespaces/ns/widgets/w/status "));
        cr_assert(
                strstr(srv.requests[2],
                       "PATCH /apis/example.com/v1/namespaces/ns/widgets/w?fieldManager=modelplane"
                       "&force=true "),
                "%s", srv.requests[2]);
        cr_assert(strstr(srv.requests[2], "Content-Type: application/apply-patch+yaml\r\n"));
        cr_assert(strstr(srv.requests[3], "Content-Type: application/json-patch+json\r\n"));
        cr_assert(strstr(srv.requests[3], "[{\"op\":\"replace\""));
        cr_assert(strstr(srv.requests[4], "DELETE /apis/example.com/v1/namespaces/ns/widgets/w "));
        cr_assert(strstr(srv.requests[4], "\"propagationPolicy\":\"Foreground\""), "%s",
                  srv.requests[4]);
        cr_assert(strstr(srv.requests[4],
                         "\"preconditions\":{\"uid\":\"u-1\",\"resourceVersion\":\"42\"}"),
                  "%s", srv.requests[4]);
        json_decref(obj);
        json_decref(jp);
}

Test(kube_client, token_file_is_reread_on_change_and_after_401)
{
        char path[] = "/tmp/test-kube-token-XXXXXX";
        int fd = mkstemp(path);
        struct kube_client *c;
        struct kube_status st;

        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, "first\n", 6), 6);
        add_step(JSON_200("2\r\n\r\n{}"), false);
        add_step("HTTP/1.1 401 Unauthorized\r\nContent-Length: 2\r\n\r\n{}", false);
        add_step(JSON_200("2\r\n\r\n{}"), false);
        server_start();
        c = client_for_server("static-ignored", path, 0);

        cr_assert_eq(kube_get(c, &configmaps, "ns", "a", NULL, &st), 0);
        /* rotate: new content (different size, so the change is visible even within one mtime tick) */
        cr_assert_eq(ftruncate(fd, 0), 0);
        cr_assert_eq(pwrite(fd, "second-token\n", 13, 0), 13);
        cr_assert_eq(kube_get(c, &configmaps, "ns", "b", NULL, &st), 0,
                     "a 401 is retried once with the re-read token: %s", st.message);
        kube_client_free(c);
        server_stop();
        close(fd);
        unlink(path);
        cr_assert(strstr(srv.requests[0], "Bearer first\r\n"), "%s", srv.requests[0]);
        cr_assert(strstr(srv.requests[1], "Bearer second-token\r\n"), "%s", srv.requests[1]);
        cr_assert(strstr(srv.requests[2], "Bearer second-token\r\n"));
}

Test(kube_client, connection_refused_and_timeout)
{
        struct kube_client *c;
        struct kube_status st;
        int port;

        server_start();
        port = srv.port;
        /* a closed port: bind, learn the port, close */
        srv.steps[srv.n_steps++] = (struct step){ .silent = true };
        c = client_for_server(NULL, NULL, 300 * USEC_PER_MSEC);
        cr_assert_eq(kube_get(c, &configmaps, "ns", "a", NULL, &st), -ETIMEDOUT, "%s", st.message);
        cr_assert_eq(st.http_code, 0);
        kube_client_free(c);
        server_stop();
        shutdown(srv.fd, SHUT_RDWR);
        close(srv.fd);
        srv.fd = -1;

        srv.port = port;
        c = client_for_server(NULL, NULL, 0);
        cr_assert_eq(kube_get(c, &configmaps, "ns", "a", NULL, &st), -ECONNREFUSED, "%s",
                     st.message);
        cr_assert(strstr(st.message, "127.0.0.1"), "message names the server: %s", st.message);
        kube_client_free(c);
}

/* ---- watch ---- */

struct events {
        char types[16][16];
        char names[16][32];
        size_t n;
        atomic_bool *cancel_after_first;
};

static int on_event(void *userdata, const char *type, json_t *object)
{
        struct events *e = userdata;
        const char *name = json_string_value(
                json_object_get(json_object_get(object, "metadata"), "name"));

        cr_assert_lt(e->n, ELEMENTSOF(e->types));
        (void)snprintf(e->types[e->n], sizeof(e->types[0]), "%s", type);
        (void)snprintf(e->names[e->n], sizeof(e->names[0]), "%s", name ? name : "");
        e->n++;
        if (e->cancel_after_first)
                atomic_store(e->cancel_after_first, true);
        return 0;
}

#define STREAM_HEAD    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
#define EV(type, name) "{\"type\":\"" type "\",\"object\":{\"metadata\":{\"name\":\"" name "\"}}}\n"

Test(kube_client, watch_delivers_events_in_order)
{
        struct kube_watch_options wo = { .resource_version = "10",
                                         .allow_bookmarks = true,
                                         .timeout_seconds = 30 };
        struct events e = { 0 };
        struct kube_client *c;
        struct kube_status st;

        add_step(
                STREAM_HEAD EV("ADDED", "a") EV(
                        "MODIFIED",
                        "a") "\n"
                             "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}\n" EV(
                                     "DELETED", "a"),
                true);
        server_start();
        c = client_for_server(NULL, NULL, 0);
        cr_assert_eq(kube_watch(c, &configmaps, "ns", &wo, on_event, &e, &st), 0, "%s", st.message);
        kube_client_free(c);
        server_stop();

        cr_assert_eq(e.n, 4);
        cr_assert_str_eq(e.types[0], "ADDED");
        cr_assert_str_eq(e.types[1], "MODIFIED");
        cr_assert_str_eq(e.types[2], "BOOKMARK");
        cr_assert_str_eq(e.types[3], "DELETED");
        cr_assert_str_eq(e.names[3], "a");
        cr_assert(strstr(srv.requests[0],
                         "GET /api/v1/namespaces/ns/configmaps?watch=1&resourceVersion=10"
                         "&allowWatchBookmarks=true&timeoutSeconds=30 "),
                  "%s", srv.requests[0]);
}

Test(kube_client, watch_error_event_is_estale)
{
        struct events e = { 0 };
        struct kube_client *c;
        struct kube_status st;

        add_step(
                STREAM_HEAD EV(
                        "ADDED",
                        "a") "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                             "\"status\":\"Failure\",\"message\":\"too old resource version: 1 (5)\","
                             "\"reason\":\"Expired\",\"code\":410}}\n",
                true);
        server_start();
        c = client_for_server(NULL, NULL, 0);
        cr_assert_eq(kube_watch(c, &configmaps, NULL, NULL, on_event, &e, &st), -ESTALE);
        kube_client_free(c);
        server_stop();
        cr_assert_eq(e.n, 2, "the ERROR event is delivered too");
        cr_assert_str_eq(e.types[1], "ERROR");
        cr_assert_eq(st.http_code, 410);
        cr_assert_str_eq(st.reason, "Expired");
}

Test(kube_client, watch_garbage_and_truncation_are_ebadmsg)
{
        struct events e = { 0 };
        struct kube_client *c;
        struct kube_status st;

        add_step(STREAM_HEAD EV("ADDED", "a") "this is not json\n" EV("ADDED", "b"), true);
        add_step(STREAM_HEAD EV("ADDED", "c") "{\"type\":\"ADDED\",\"obj", true);
        server_start();
        c = client_for_server(NULL, NULL, 0);
        cr_assert_eq(kube_watch(c, &configmaps, NULL, NULL, on_event, &e, &st), -EBADMSG);
        cr_assert(strstr(st.message, "this is not json"), "%s", st.message);
        cr_assert_eq(e.n, 1, "nothing after the garbage line is delivered");

        cr_assert_eq(kube_watch(c, &configmaps, NULL, NULL, on_event, &e, &st), -EBADMSG);
        cr_assert_eq(e.n, 2);
        cr_assert(strstr(st.message, "ended inside"), "%s", st.message);
        kube_client_free(c);
        server_stop();
}

Test(kube_client, watch_http_error_and_callback_error)
{
        struct events e = { 0 };
        struct kube_client *c;
        struct kube_status st;

        add_step(
                "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
                "{\"kind\":\"Status\",\"reason\":\"Forbidden\",\"message\":\"configmaps is forbidden\","
                "\"code\":403}",
                true);
        add_step("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\nConnection: close\r\n\r\n{}",
                 true);
        server_start();
        c = client_for_server(NULL, NULL, 0);
        cr_assert_eq(kube_watch(c, &configmaps, NULL, NULL, on_event, &e, &st), -EACCES);
        cr_assert_eq(st.http_code, 403);
        cr_assert_str_eq(st.message, "configmaps is forbidden");
        cr_assert_eq(e.n, 0);
        cr_assert_eq(kube_watch(c, &configmaps, NULL, NULL, on_event, &e, &st), -EAGAIN);
        cr_assert_eq(st.http_code, 429);
        cr_assert_eq(st.retry_after, 2, "Retry-After on a refused watch");
        kube_client_free(c);
        server_stop();
}

Test(kube_client, watch_cancel)
{
        atomic_bool cancel = false;
        struct kube_watch_options wo = { .cancel = &cancel };
        struct events e = { .cancel_after_first = &cancel };
        struct kube_client *c;
        struct kube_status st;

        srv.steps[srv.n_steps++] = (struct step){ .response = STREAM_HEAD EV("ADDED", "a"),
                                                  .hold = true };
        server_start();
        c = client_for_server(NULL, NULL, 0);
        cr_assert_eq(kube_watch(c, &configmaps, NULL, &wo, on_event, &e, &st), -ECANCELED);
        cr_assert_eq(e.n, 1);
        kube_client_free(c); /* closes the connection, so the server thread ends */
        server_stop();

        cr_assert_eq(kube_watch(NULL, &configmaps, NULL, &wo, on_event, &e, &st), -EINVAL);
}

/* kube_watch_lines: each line as it came, nothing decoded (bench/tm-watch scans them). */
struct lines {
        char text[8][128];
        size_t n;
        int stop_at; /* 1-based line that returns -EPIPE; 0 never */
};

static int on_line(void *userdata, const char *line, size_t len)
{
        struct lines *l = userdata;

        cr_assert_lt(l->n, ELEMENTSOF(l->text));
        cr_assert_eq(strlen(line), len, "the line is NUL-terminated at len");
        (void)snprintf(l->text[l->n], sizeof(l->text[0]), "%s", line);
        l->n++;
        return l->stop_at > 0 && (size_t)l->stop_at == l->n ? -EPIPE : 0;
}

Test(kube_client, watch_lines_are_passed_undecoded)
{
        struct kube_watch_options wo = { .resource_version = "7", .allow_bookmarks = true };
        struct lines l = { 0 };
        struct kube_client *c;
        struct kube_status st;

        add_step(STREAM_HEAD EV("ADDED", "a") "not json, the caller's to judge\r\n\n" EV(
                         "DELETED", "a") "{\"type\":\"ERROR\",\"object\":{\"code\":410}}\n",
                 true);
        add_step(STREAM_HEAD EV("ADDED", "b") EV("ADDED", "c"), true);
        server_start();
        c = client_for_server(NULL, NULL, 0);
        cr_assert_eq(kube_watch_lines(c, &configmaps, "ns", &wo, on_line, &l, &st), 0, "%s",
                     st.message);
        cr_assert_eq(l.n, 4, "blank lines skipped, the rest passed: %zu", l.n);
        cr_assert_str_eq(l.text[0],
                         "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}");
        cr_assert_str_eq(l.text[1], "not json, the caller's to judge");
        cr_assert_str_eq(l.text[3], "{\"type\":\"ERROR\",\"object\":{\"code\":410}}",
                         "an ERROR event is a line too");
        cr_assert(strstr(srv.requests[0], "configmaps?watch=1&resourceVersion=7"
                                          "&allowWatchBookmarks=true "),
                  "%s", srv.requests[0]);

        l = (struct lines){ .stop_at = 1 };
        cr_assert_eq(kube_watch_lines(c, &configmaps, NULL, NULL, on_line, &l, &st), -EPIPE,
                     "the callback's error ends the watch");
        cr_assert_eq(l.n, 1);
        kube_client_free(c);
        server_stop();
        cr_assert_eq(kube_watch_lines(NULL, &configmaps, NULL, NULL, on_line, &l, &st), -EINVAL);
}

static void *cancel_later(void *arg)
{
        struct timespec ts = { .tv_sec = 0, .tv_nsec = 200 * 1000 * 1000 };

        (void)nanosleep(&ts, NULL);
        atomic_store((atomic_bool *)arg, true);
        return NULL;
}

Test(kube_client, watch_cancel_from_another_thread_on_an_idle_stream)
{
        atomic_bool cancel = false;
        struct kube_watch_options wo = { .cancel = &cancel };
        struct events e = { 0 };
        struct kube_client *c;
        struct kube_status st;
        pthread_t t;

        srv.steps[srv.n_steps++] = (struct step){ .response = STREAM_HEAD, .hold = true };
        server_start();
        c = client_for_server(NULL, NULL, 0);
        cr_assert_eq(pthread_create(&t, NULL, cancel_later, &cancel), 0);
        /* nothing ever arrives: only the progress callback can notice the flag */
        cr_assert_eq(kube_watch(c, &configmaps, NULL, &wo, on_event, &e, &st), -ECANCELED);
        cr_assert_eq(e.n, 0);
        pthread_join(t, NULL);
        kube_client_free(c);
        server_stop();
}

Test(kube_client, token_with_control_characters_is_refused)
{
        struct kube_client *c;

        srv.port = 1; /* never contacted */
        c = client_for_server("abc\r\nX-Injected: 1", NULL, 0);
        cr_assert_eq(kube_get(c, &configmaps, "ns", "a", NULL, NULL), -EINVAL);
        kube_client_free(c);
}
