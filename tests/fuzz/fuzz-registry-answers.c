/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Model Registry's answers as a client reads them: a model-registry:// URI resolved
 * (agent/mr-resolve.h) through the registry client (registry-client/client.h) whose transport
 * replays the input. The input: one byte choosing the URI (a version named or the latest one),
 * then the answers, split at NULs, each "<3-digit status><body>"; past the last answer the
 * transport fails as a refused connection would. Invariants: a success is a non-empty URI that
 * is not model-registry:// again; a failure says why; the calls made stay bounded (the version
 * pages by MR_RESOLVE_PAGES_MAX).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/mr-resolve.h"
#include "agent/mr-uri.h"
#include "registry-client/client.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct script {
        const char *at, *end;
        unsigned calls;
};

static int replay(void *userdata, const char *method, const char *url, const char *payload,
                  long *ret_status, struct buf *reply, struct error_detail *reterr)
{
        struct script *s = userdata;
        const char *nul;

        (void)method;
        (void)url;
        (void)payload;
        s->calls++;
        if (s->at >= s->end || s->end - s->at < 3) {
                (void)error_detail_set(reterr, ERROR_UNAVAILABLE, -ECONNREFUSED,
                                       "Connection refused");
                return -ECONNREFUSED;
        }
        nul = memchr(s->at, 0, (size_t)(s->end - s->at));
        if (!nul)
                nul = s->end;
        *ret_status = (s->at[0] - '0') * 100L + (s->at[1] - '0') * 10L + (s->at[2] - '0');
        if (buf_append(reply, s->at + 3, (size_t)(nul - s->at - 3)) < 0)
                return -ENOMEM;
        s->at = nul < s->end ? nul + 1 : nul;
        return 0;
}

static const struct mr_transport_ops replay_ops = { .round_trip = replay };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const uris[] = { "model-registry://mnist/v1", "model-registry://mnist",
                                            "model-registry://registry:8080/mnist/v2" };
        struct script s;
        struct mr_transport t = { .ops = &replay_ops, .userdata = &s };
        struct mr_resolve_config c = { .base_url = (char *)"http://registry:8080",
                                       .scheme = (char *)"http",
                                       .transport = &t };
        char err[1024] = "", *uri = NULL;
        int r;

        if (size < 1)
                return 0;
        s = (struct script){ .at = (const char *)data + 1, .end = (const char *)data + size };
        r = mr_resolve(&c, uris[data[0] % 3], &uri, err, sizeof(err));
        if (r == 0 && (!uri || !*uri || mr_uri_is(uri)))
                __builtin_trap();
        if (r < 0 && r != -ENOMEM && !err[0])
                __builtin_trap();
        if (s.calls > MR_RESOLVE_PAGES_MAX + 3U)
                __builtin_trap();
        free(uri);
        return 0;
}
