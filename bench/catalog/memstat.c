/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where a catalog snapshot's memory goes: loads the sources file given (as `modelplane catalog`
 * does, through catalog_service_new()) and prints, after each stage, the heap in use
 * (mallinfo2: bytes handed out by malloc, so fragmentation shows as RSS minus this), the process
 * RSS and the CPU time used. Stages: start, one catalog file parsed alone (the loader's data) and
 * freed, the full service (parse + index), after malloc_trim.
 *   memstat SOURCES_YAML [CATALOG_YAML]
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog/service.h"
#include "catalog/yaml-catalog.h"

static long rss_kib(void)
{
        char line[256];
        long v = -1;
        FILE *f = fopen("/proc/self/status", "re");

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmRSS: %ld", &v) == 1)
                        break;
        fclose(f);
        return v;
}

static double cpu_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void report(const char *stage)
{
        struct mallinfo2 mi = mallinfo2();

        printf("%-34s heap in use %8.1f MiB  RSS %8.1f MiB  CPU %6.2f s\n", stage,
               (double)mi.uordblks / 1048576.0, (double)rss_kib() / 1024.0, cpu_s());
}

int main(int argc, char **argv)
{
        struct error_detail err = { 0 };
        char msg[1200];
        int r;

        if (argc < 2) {
                fprintf(stderr, "usage: %s SOURCES_YAML [CATALOG_YAML]\n", argv[0]);
                return 2;
        }
        report("start");
        if (argc > 2) {
                struct catalog_models *m = NULL;

                r = catalog_models_load_file(argv[2], &m, &err);
                if (r < 0) {
                        fprintf(stderr, "%s\n", error_detail_format(&err, msg, sizeof(msg)));
                        return 1;
                }
                report("catalog file parsed");
                catalog_models_unref(m);
                malloc_trim(0);
                report("freed, trimmed");
        }
        {
                char *paths[] = { argv[1], NULL };
                struct catalog_service_config cfg = { .config_paths = paths, .n_config_paths = 1 };
                struct catalog_service *s = NULL;
                double t0 = cpu_s();

                r = catalog_service_new(&cfg, &s, &err);
                if (r < 0) {
                        fprintf(stderr, "%s\n", error_detail_format(&err, msg, sizeof(msg)));
                        return 1;
                }
                report("service (parse + index)");
                printf("load CPU %.2f s\n", cpu_s() - t0);
                malloc_trim(0);
                report("trimmed");
                catalog_service_free(s);
                malloc_trim(0);
                report("service freed");
        }
        return 0;
}
