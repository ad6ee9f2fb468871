/* SPDX-License-Identifier: Apache-2.0 */
/* The model a KServe V1/V2 request target names (src/agent/infer-path.h). */
#include <criterion/criterion.h>
#include <string.h>

#include "agent/infer-path.h"

static void names(const char *target, const char *want)
{
        char name[INFER_PATH_MODEL_MAX + 1];
        size_t n = infer_path_model(target, strlen(target), name);

        cr_assert_str_eq(name, want, "%s", target);
        cr_assert_eq(n, strlen(want), "%s", target);
}

Test(infer_path, v1)
{
        names("/v1/models/iris:predict", "iris");
        names("/v1/models/iris:explain", "iris");
        names("/v1/models/iris", "iris");
        names("/v1/models/my-model.v2:predict?x=1", "my-model.v2");
        names("/v1/models/iris/predict", ""); /* not V1's shape */
        names("/v1/models/:predict", "");
        names("/v1/models/", "");
}

Test(infer_path, v2)
{
        names("/v2/models/iris/infer", "iris");
        names("/v2/models/iris/ready", "iris");
        names("/v2/models/iris", "iris");
        names("/v2/models/iris/versions/3/infer", "iris");
        names("/v2/models/iris/generate_stream?a=b#f", "iris");
        names("/v2/models/a:b/infer", "a:b");
        names("/v2/models//infer", "");
        names("/v2/models", "");
        names("/v2/health/ready", "");
        names("/v2/repository/models/iris/load", "");
        names("/v3/models/iris/infer", "");
        names("/", "");
}

Test(infer_path, absolute_form_and_odd_bytes)
{
        char long_name[400] = "/v2/models/";

        names("http://svc.ns:8080/v2/models/iris/infer", "iris");
        names("https://svc/v1/models/iris:predict", "iris");
        names("http://svc", "");
        names("*", "");
        names("svc:8080", "");
        names("/v2/models/a\x01/infer", "");
        names("/v2/models/caf\xc3\xa9/infer", "");
        memset(long_name + 11, 'a', 254);
        names(long_name, ""); /* over a Kubernetes name's 253 */
        long_name[11 + 253] = '\0';
        names(long_name, long_name + 11);
}
