/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/readiness.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

void readiness_probe_release(struct readiness_probe *p)
{
        free(p->url);
        free(p->host);
        for (size_t i = 0; p->headers && p->headers[i]; i++)
                free(p->headers[i]);
        free(p->headers);
        *p = (struct readiness_probe){ 0 };
}

static uint16_t probe_port(json_t *v, uint16_t component_port)
{
        json_int_t n = json_is_integer(v) ? json_integer_value(v) : 0;
        const char *s = json_string_value(v);

        if (s) {
                char *end;
                long l = strtol(s, &end, 10);
                if (*s && !*end)
                        n = l;
        }
        return n > 0 && n < 65536 ? (uint16_t)n : component_port;
}

/* httpGet.httpHeaders as "Name: value" lines; entries that could split a header are skipped. */
static int probe_headers(const json_t *hs, char ***ret)
{
        char **headers = calloc(json_array_size(hs) + 1, sizeof(char *));
        const json_t *h;
        size_t i, n = 0;

        *ret = headers; /* owned by the probe even when an entry fails */
        if (!headers)
                return -ENOMEM;
        json_array_foreach(hs, i, h) {
                const char *name = json_string_value(json_object_get(h, "name"));
                const char *value = json_string_value(json_object_get(h, "value"));

                if (!name || !*name || strpbrk(name, ":\r\n") || (value && strpbrk(value, "\r\n")))
                        continue;
                if (asprintf(&headers[n], "%s: %s", name, value ? value : "") < 0) {
                        headers[n] = NULL;
                        return -ENOMEM;
                }
                n++;
        }
        return 0;
}

/* httpGet: the probe URL (scheme, host, port, path) and its headers. */
static int probe_http(const json_t *http, uint16_t component_port, struct readiness_probe *p)
{
        const char *path = json_string_value(json_object_get(http, "path"));
        const char *scheme = json_string_value(json_object_get(http, "scheme"));
        const char *host = json_string_value(json_object_get(http, "host"));
        int r = 0, k;

        p->kind = PROBE_HTTP;
        p->port = probe_port(json_object_get(http, "port"), component_port);
        if (asprintf(&p->url, "%s://%s:%u%s%s",
                     scheme && strcasecmp(scheme, "https") == 0 ? "https" : "http",
                     host && *host ? host : "127.0.0.1", p->port, path && path[0] == '/' ? "" : "/",
                     path ? path : "") < 0) {
                p->url = NULL;
                r = -ENOMEM;
        }
        k = probe_headers(json_object_get(http, "httpHeaders"), &p->headers);
        return r < 0 ? r : k;
}

/* tcpSocket: host and port. */
static int probe_tcp(const json_t *tcp, uint16_t component_port, struct readiness_probe *p)
{
        const char *host = json_string_value(json_object_get(tcp, "host"));

        p->kind = PROBE_TCP;
        p->port = probe_port(json_object_get(tcp, "port"), component_port);
        p->host = strdup(host && *host ? host : "127.0.0.1");
        return p->host ? 0 : -ENOMEM;
}

int readiness_probe_parse(const char *text, uint16_t component_port, struct readiness_probe *ret,
                          char *reterr, size_t len)
{
        struct readiness_probe p = { .kind = PROBE_NONE, .timeout_sec = 1 };
        json_auto_t *j = NULL;
        json_error_t je;
        json_t *http, *tcp, *t;
        int r;

        *ret = p;
        if (!text || !*text)
                return 0;
        j = json_loads(text, 0, &je);
        if (!json_is_object(j)) {
                (void)snprintf(reterr, len, "SERVING_READINESS_PROBE is not a JSON object: %s",
                               je.text);
                return -EINVAL;
        }
        t = json_object_get(j, "timeoutSeconds");
        if (json_is_integer(t) && json_integer_value(t) > 0)
                p.timeout_sec = (long)json_integer_value(t);
        http = json_object_get(j, "httpGet");
        tcp = json_object_get(j, "tcpSocket");
        if (json_is_object(http)) {
                r = probe_http(http, component_port, &p);
        } else if (json_is_object(tcp)) {
                r = probe_tcp(tcp, component_port, &p);
        } else {
                (void)snprintf(reterr, len,
                               "SERVING_READINESS_PROBE has neither httpGet nor tcpSocket");
                r = -EINVAL;
        }
        if (r < 0) {
                readiness_probe_release(&p);
                return r;
        }
        *ret = p;
        return 0;
}

static bool tcp_probe(const struct readiness_probe *p)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
        char port[8];
        bool ok = false;

        snprintf(port, sizeof(port), "%u", p->port);
        if (getaddrinfo(p->host, port, &hints, &res) != 0)
                return false;
        for (struct addrinfo *ai = res; ai && !ok; ai = ai->ai_next) {
                int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                struct pollfd pfd = { .fd = fd, .events = POLLOUT };
                int err = 0;
                socklen_t el = sizeof(err);

                if (fd < 0)
                        continue;
                if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
                    (errno == EINPROGRESS && poll(&pfd, 1, (int)p->timeout_sec * 1000) == 1 &&
                     getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0))
                        ok = true;
                close(fd);
        }
        freeaddrinfo(res);
        return ok;
}

static size_t discard(char *p, size_t s, size_t n, void *u)
{
        (void)p;
        (void)u;
        return s * n;
}

static bool http_probe(const struct readiness_probe *p)
{
        CURL *c = curl_easy_init();
        struct curl_slist *h = NULL;
        long code = 0;
        bool ok;

        if (!c)
                return false;
        for (size_t i = 0; p->headers && p->headers[i]; i++)
                h = curl_slist_append(h, p->headers[i]);
        h = curl_slist_append(h, "User-Agent: kube-probe/modelplane-agent");
        curl_easy_setopt(c, CURLOPT_URL, p->url);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, p->timeout_sec);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
        /* kubelet does not verify the serving certificate of a probe either */
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
        ok = curl_easy_perform(c) == CURLE_OK &&
             curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code >= 200 &&
             code < 400;
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        return ok;
}

bool readiness_probe_run(const struct readiness_probe *p)
{
        switch (p->kind) {
        case PROBE_HTTP:
                return http_probe(p);
        case PROBE_TCP:
                return tcp_probe(p);
        case PROBE_NONE:
        default:
                return true;
        }
}
