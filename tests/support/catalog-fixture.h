/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <stdio.h>

#include "util/error-detail.h"

/*
 * Catalog inputs shared by the tests of tests/catalog: the committed fixtures under
 * tests/fixtures/catalog (found through MODELPLANE_SOURCE_ROOT) and generated catalog files.
 * Every failure fails the calling test.
 */
#include "catalog/service.h"
#include "util/buf.h"

/* "$MODELPLANE_SOURCE_ROOT/tests/fixtures/catalog/<name>" (owned string). */
char *catalog_fixture_path(const char *name);

/* A catalog service over tests/fixtures/catalog/sources.yaml (free with catalog_service_free). */
struct catalog_service *catalog_fixture_service(void);

/*
 * Appends to b a catalog YAML file of n models of the given source: "source: <source>\nmodels:\n",
 * then model(b, i, userdata) for every i in [0, n), in the shuffled order (k * 37) % n (n must be
 * prime to 37, so that every i comes once). model appends one "  - name: ..." entry.
 */
void catalog_fixture_models(struct buf *b, const char *source, unsigned n,
                            void (*model)(struct buf *b, unsigned i, void *userdata),
                            void *userdata);

/*
 * Runs call, which reports into detail_ (a struct error_detail this macro declares), and copies
 * the message into the char array buf: the index's errors in the tests' message buffers.
 */
#define WITH_DETAIL(buf, call)                                                                     \
        __extension__({                                                                            \
                struct error_detail detail_ = { 0 };                                               \
                int r_ = (call);                                                                   \
                (void)snprintf((buf), sizeof(buf), "%.*s", (int)sizeof(buf) - 1, detail_.message); \
                r_;                                                                                \
        })
