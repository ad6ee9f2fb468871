/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http1-parse: the CPU cost of src/http/http1.c, the HTTP/1.1 parser the front would put in front
 * of every request (docs/http.md, "The HTTP/1.1 parser").
 *
 *   http1-parse [ROUNDS]
 *
 * Parses a request head shaped like the model-registry Python client's (request line, 7 fields,
 * ~300 bytes) ROUNDS times (default 1,000,000), at once and as it arrives in 3 reads, and
 * decodes a 1 MiB chunked body of 16 KiB chunks (framing only: the data spans are not copied);
 * prints CPU ns per head and per chunk.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/http1.h"

static const char head[] =
        "GET /api/model_registry/v1alpha3/registered_models/12/versions?pageSize=100&orderBy=ID "
        "HTTP/1.1\r\nHost: model-registry.kubeflow.svc.cluster.local:8080\r\n"
        "User-Agent: model-registry-python/0.2.10\r\nAccept-Encoding: gzip, deflate\r\n"
        "Accept: application/json\r\nConnection: keep-alive\r\n"
        "Authorization: Bearer eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.e30.c2lnbmF0dXJl\r\n"
        "Content-Type: application/json\r\n\r\n";

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU, not wall: the machine is shared */
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double bench_head(long rounds, size_t pieces)
{
        size_t len = sizeof(head) - 1;
        double t0 = now_s();

        for (long i = 0; i < rounds; i++) {
                struct http1_head h;
                enum http1_state st = HTTP1_NEED_MORE;

                http1_head_init(&h, NULL);
                for (size_t p = 1; p <= pieces; p++)
                        st = http1_head_feed(&h, head, len * p / pieces);
                if (st != HTTP1_COMPLETE)
                        abort();
        }
        return (now_s() - t0) / (double)rounds * 1e9;
}

static double bench_chunked(long rounds)
{
        const size_t chunk = 16384, n = 64;
        size_t len = n * (chunk + 8) + 5, off = 0;
        char *body = malloc(len);
        double t0;

        if (!body)
                abort();
        for (size_t i = 0; i < n; i++) {
                off += (size_t)snprintf(body + off, 8, "4000\r\n");
                memset(body + off, 'a', chunk);
                off += chunk;
                memcpy(body + off, "\r\n", 2);
                off += 2;
        }
        memcpy(body + off, "0\r\n\r\n", 5);
        len = off + 5;
        t0 = now_s();
        for (int r = 0; r < rounds; r++) {
                struct http1_chunked c;
                size_t at = 0, used, doff, dlen;

                http1_chunked_init(&c, NULL);
                while (http1_chunked_feed(&c, body + at, len - at, &used, &doff, &dlen) ==
                       HTTP1_NEED_MORE)
                        at += used;
                if (c.status != 0 || c.body_len != n * chunk)
                        abort();
        }
        free(body);
        return (now_s() - t0) / (double)(rounds * (long)n) * 1e9;
}

int main(int argc, char **argv)
{
        long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;

        if (rounds <= 0)
                return 2;
        printf("head_bytes=%zu cpu_ns_per_head=%.0f cpu_ns_per_head_3_reads=%.0f "
               "cpu_ns_per_16k_chunk=%.0f\n",
               sizeof(head) - 1, bench_head(rounds, 1), bench_head(rounds, 3),
               bench_chunked(rounds / 100 + 1));
        return 0;
}
