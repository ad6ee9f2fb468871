/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog-fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

char *catalog_fixture_path(const char *name)
{
        const char *root = getenv("MODELPLANE_SOURCE_ROOT");
        char *p = NULL;

        cr_assert_not_null(root, "MODELPLANE_SOURCE_ROOT must be set");
        cr_assert(asprintf(&p, "%s/tests/fixtures/catalog/%s", root, name) > 0);
        return p;
}

struct catalog_service *catalog_fixture_service(void)
{
        char *path = catalog_fixture_path("sources.yaml");
        struct error_detail e = { 0 };
        struct catalog_service *svc = NULL;

        cr_assert_eq(catalog_service_new(&(struct catalog_service_config){ .config_paths = &path,
                                                                           .n_config_paths = 1 },
                                         &svc, &e),
                     0, "%s", e.message);
        free(path);
        return svc;
}

void catalog_fixture_models(struct buf *b, const char *source, unsigned n,
                            void (*model)(struct buf *b, unsigned i, void *userdata),
                            void *userdata)
{
        cr_assert_geq(buf_printf(b, "source: %s\nmodels:\n", source), 0);
        for (unsigned k = 0; k < n; k++)
                model(b, (k * 37) % n, userdata);
}
