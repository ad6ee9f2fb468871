/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU cost of catalog queries in-process (no HTTP, no wrk): loads the sources file as
 * `modelplane catalog` does, then runs each query of the table ITER times (default 2000) on the
 * snapshot and prints the mean, p50, p99 and maximum of the thread CPU time of one call, and the
 * number of items of the first page. On a shared machine these are steadier than wrk's
 * latencies (bench/catalog/README.md).
 *   querystat SOURCES_YAML [ITER]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog/index.h"
#include "catalog/service.h"
#include "filterq/filterq.h"
#include "util/buf.h"

static const struct {
        const char *label, *filter, *order;
} queries[] = {
        { "bench filter (ID)", "license='mit' AND artifacts.ttft_p90 < 100", NULL },
        { "bench filter (NAME DESC)", "license='mit' AND artifacts.ttft_p90 < 100", "NAME" },
        { "license='mit' (CREATE_TIME)", "license='mit'", "CREATE_TIME" },
        { "hardware_type IN, provider",
          "artifacts.hardware_type IN ('H100','L40S') AND "
          "provider='Acme AI'",
          NULL },
        { "name = one model", "name='acme/model-04000-instruct'", NULL },
        { "license matching nothing", "license='none'", NULL },
        { "no posting: ttft < 21", "artifacts.ttft_p90 < 21", NULL },
};

static double thread_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

static void report(const char *label, double *t, unsigned n, size_t items)
{
        double sum = 0;

        for (unsigned i = 0; i < n; i++)
                sum += t[i];
        qsort(t, n, sizeof(*t), cmp_double);
        printf("%-30s mean %8.1f us  p50 %8.1f us  p99 %8.1f us  max %8.1f us  (%zu bytes)\n",
               label, sum / n / 1e3, t[n / 2] / 1e3, t[n * 99 / 100] / 1e3, t[n - 1] / 1e3, items);
}

static int run_list(struct catalog_index *idx, unsigned i, double *t, unsigned iter)
{
        struct filterq_node *f = NULL;
        struct catalog_model_query q = { .page = { .page_size = 10,
                                                   .desc = queries[i].order != NULL } };
        char err[256];
        size_t len = 0;
        int r = filterq_parse(queries[i].filter, &f, err, sizeof(err));

        if (r < 0)
                return r;
        q.filter = f;
        q.order = !queries[i].order                       ? CATALOG_ORDER_ID
                  : strcmp(queries[i].order, "NAME") == 0 ? CATALOG_ORDER_NAME
                                                          : CATALOG_ORDER_CREATE_TIME;
        for (unsigned k = 0; k < iter && r >= 0; k++) {
                struct buf out = BUF_INIT(SIZE_MAX);
                struct error_detail e = { 0 };
                double t0 = thread_ns();

                r = catalog_index_list_models_text(idx, &q, &out, &e);
                t[k] = thread_ns() - t0;
                len = out.len;
                buf_release(&out);
        }
        filterq_free(f);
        if (r >= 0)
                report(queries[i].label, t, iter, len);
        return r;
}

int main(int argc, char **argv)
{
        char *paths[2] = { NULL, NULL };
        struct catalog_service_config cfg = { .config_paths = paths, .n_config_paths = 1 };
        struct catalog_service *s = NULL;
        struct error_detail cerr = { 0 };
        struct catalog_index *idx;
        unsigned iter = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 2000;
        double *t;
        int r;

        if (argc < 2 || iter == 0) {
                fprintf(stderr, "usage: %s SOURCES_YAML [ITER]\n", argv[0]);
                return 2;
        }
        paths[0] = argv[1];
        if (catalog_service_new(&cfg, &s, &cerr) < 0) {
                fprintf(stderr, "%s: cannot load\n", argv[1]);
                return 1;
        }
        idx = catalog_service_get(s);
        t = calloc(iter, sizeof(*t));
        r = t ? 0 : -ENOMEM;
        for (unsigned i = 0; i < sizeof(queries) / sizeof(queries[0]) && r >= 0; i++)
                r = run_list(idx, i, t, iter);
        for (unsigned k = 0; k < iter && r >= 0; k++) {
                const char *text;
                size_t len = 0;
                double t0 = thread_ns();

                r = catalog_index_get_model_text(idx, "bench", "acme/model-04000-instruct", &text,
                                                 &len);
                t[k] = thread_ns() - t0;
                if (k == iter - 1 && r >= 0)
                        report("get by name", t, iter, len);
        }
        if (r < 0)
                fprintf(stderr, "query failed: errno %d\n", -r);
        free(t);
        catalog_index_unref(idx);
        catalog_service_free(s);
        return r < 0 ? 1 : 0;
}
