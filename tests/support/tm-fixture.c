/* SPDX-License-Identifier: Apache-2.0 */
#include "tm-fixture.h"

#include <criterion/criterion.h>

json_t *tm_fixture(const char *name, const char *isvc, const char *uri, const char *framework,
                   json_t *memory)
{
        json_t *o = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:{s:s,s:s,s:o}}}", "apiVersion",
                              "serving.kserve.io/v1alpha1", "kind", "TrainedModel", "metadata",
                              "name", name, "namespace", "default", "spec", "inferenceService",
                              isvc, "model", "storageUri", uri, "framework", framework, "memory",
                              memory);

        cr_assert_not_null(o);
        return o;
}

json_t *tm_fixture_base(void)
{
        return tm_fixture("bar", "Parent", "gs://kfserving/sklearn/iris", "sklearn",
                          json_string("100Mi"));
}
