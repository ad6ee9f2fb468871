/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The placement planner's CPU time and movement (issue 30; bench/placement/README.md): plans N
 * models (memory M, C copies) over R replicas, then again with the result as the holders
 * (unchanged), with one replica more, and with one fewer; prints the CPU time of each plan and the
 * copies moved. Usage: plan-cpu [N R COPIES MEMORY_MI CAPACITY_GI] (default 10000 50 2 256 128).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serving/placement.h"

#define MI ((uint64_t)1 << 20)
#define GI ((uint64_t)1 << 30)

static double cpu_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct world {
        struct placement_replica *rep;
        char (*rep_id)[48];
        size_t n_rep;
        struct placement_model *mod;
        char (*mod_name)[32];
        const char **holders; /* n_mod * R_MAX */
        size_t n_mod, r_max;
};

static int run(struct world *w, const char *what, struct placement_result *res)
{
        struct placement_input in = { w->rep, w->n_rep, w->mod, w->n_mod };
        double t0 = cpu_ms(), t;
        size_t placed = 0;

        if (placement_compute(&in, res) < 0) {
                fprintf(stderr, "plan-cpu: placement_compute failed\n");
                return -1;
        }
        t = cpu_ms() - t0;
        for (size_t m = 0; m < w->n_mod; m++)
                placed += res->models[m].n;
        printf("%-28s replicas %3zu  cpu %8.1f ms  placed %7zu  moved %6zu (%5.1f%%)  dropped %6zu\n",
               what, w->n_rep, t, placed, res->moved,
               placed ? 100.0 * (double)res->moved / (double)placed : 0.0, res->dropped);
        return 0;
}

static void adopt(struct world *w, const struct placement_result *res)
{
        for (size_t m = 0; m < w->n_mod; m++) {
                for (size_t i = 0; i < res->models[m].n; i++)
                        w->holders[m * w->r_max + i] = w->rep[res->models[m].replicas[i]].id;
                w->mod[m].n_holders = res->models[m].n;
        }
}

int main(int argc, char **argv)
{
        size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
        size_t r = argc > 2 ? strtoul(argv[2], NULL, 10) : 50;
        unsigned copies = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 2;
        uint64_t mem = (argc > 4 ? strtoull(argv[4], NULL, 10) : 256) * MI;
        uint64_t cap = (argc > 5 ? strtoull(argv[5], NULL, 10) : 128) * GI;
        struct world w = { .n_rep = r, .n_mod = n, .r_max = r + 1 };
        struct placement_result a, b, c, d;

        w.rep = calloc(r + 1, sizeof(*w.rep));
        w.rep_id = calloc(r + 1, sizeof(*w.rep_id));
        w.mod = calloc(n, sizeof(*w.mod));
        w.mod_name = calloc(n, sizeof(*w.mod_name));
        w.holders = calloc(n * (r + 1), sizeof(*w.holders));
        if (!w.rep || !w.rep_id || !w.mod || !w.mod_name || !w.holders)
                return 1;
        for (size_t i = 0; i <= r; i++) {
                snprintf(w.rep_id[i], sizeof(w.rep_id[i]), "isvc-predictor-%05zu-x7k2p", i);
                w.rep[i] = (struct placement_replica){ w.rep_id[i], cap, PLACEMENT_LIVE };
        }
        for (size_t m = 0; m < n; m++) {
                snprintf(w.mod_name[m], sizeof(w.mod_name[m]), "model-%06zu", m);
                w.mod[m] = (struct placement_model){ .name = w.mod_name[m],
                                                     .memory = mem,
                                                     .copies = copies,
                                                     .holders = &w.holders[m * (r + 1)] };
        }
        printf("plan-cpu: %zu models x %u copies of %llu Mi over %zu replicas of %llu Gi\n", n,
               copies, (unsigned long long)(mem / MI), r, (unsigned long long)(cap / GI));
        if (run(&w, "first plan", &a) < 0)
                return 1;
        adopt(&w, &a);
        if (run(&w, "again, unchanged", &b) < 0)
                return 1;
        w.n_rep = r + 1;
        if (run(&w, "one replica added", &c) < 0)
                return 1;
        adopt(&w, &c);
        w.n_rep = r;
        w.rep[r / 2] = w.rep[r]; /* the middle one goes */
        if (run(&w, "one replica removed", &d) < 0)
                return 1;
        placement_result_release(&a);
        placement_result_release(&b);
        placement_result_release(&c);
        placement_result_release(&d);
        free(w.rep);
        free(w.rep_id);
        free(w.mod);
        free(w.mod_name);
        free(w.holders);
        return 0;
}
