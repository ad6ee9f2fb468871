/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The router and its path parsing: the first byte picks the method, the rest is the raw path.
 * Matches it against a table shaped like the registry's and the catalog's (captures, a final
 * {name+}, the same path for several methods) and checks the result: an index in range, the
 * documented errors only, and every capture of the matched pattern present.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/router.h"

static const struct http_route routes[] = {
        { "GET", "/api/model_registry/v1alpha3/registered_models", NULL, NULL },
        { "POST", "/api/model_registry/v1alpha3/registered_models", NULL, NULL },
        { "GET", "/api/model_registry/v1alpha3/registered_models/{id}", NULL, NULL },
        { "PATCH", "/api/model_registry/v1alpha3/registered_models/{id}", NULL, NULL },
        { "GET", "/api/model_registry/v1alpha3/registered_models/{id}/versions", NULL, NULL },
        { "GET", "/api/model_catalog/v1alpha1/sources/{source_id}/models/{name+}", NULL, NULL },
        { "GET", "/api/model_catalog/v1alpha1/sources/{source_id}/artifacts/{name+}", NULL, NULL },
        { "GET", "/healthz", NULL, NULL },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const methods[] = { "GET", "POST", "PATCH", "DELETE" };
        struct http_req req = { 0 };
        char *path;
        int r;

        if (size == 0)
                return 0;
        path = malloc(size);
        if (!path)
                return 0;
        memcpy(path, data + 1, size - 1);
        path[size - 1] = '\0';
        req.method = methods[data[0] % 4];
        req.path = path;
        r = http_route_match(routes, sizeof(routes) / sizeof(routes[0]), req.method, path, &req);
        if (r >= 0) {
                if ((size_t)r >= sizeof(routes) / sizeof(routes[0]) ||
                    strcmp(routes[r].method, req.method) != 0)
                        __builtin_trap();
                for (size_t i = 0; i < req.n_params; i++)
                        if (!req.params[i].name || !req.params[i].value)
                                __builtin_trap();
                if (r >= 2 && r <= 4 && !http_req_param(&req, "id"))
                        __builtin_trap();
                if ((r == 5 || r == 6) &&
                    (!http_req_param(&req, "source_id") || !http_req_param(&req, "name")))
                        __builtin_trap();
        } else if (r != -ENOENT && r != -EOPNOTSUPP && r != -EINVAL && r != -ENOMEM)
                __builtin_trap();
        http_req_params_release(&req);
        free(path);
        return 0;
}
