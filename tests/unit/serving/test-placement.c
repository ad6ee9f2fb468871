/* SPDX-License-Identifier: Apache-2.0 */
/* The placement planner (serving/placement.h): determinism, capacity, movement, copies, the
 * shortfall message, failures and draining replicas. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serving/placement.h"

#define GI ((uint64_t)1 << 30)
#define MI ((uint64_t)1 << 20)

/* A scenario owning its names and holder lists. */
struct scen {
        struct placement_replica rep[64];
        char rep_id[64][32];
        size_t n_rep;
        struct placement_model *mod;
        char (*mod_name)[32];
        const char *(*holders)[64];
        size_t n_mod;
};

static void scen_init(struct scen *s, size_t n_rep, uint64_t capacity, size_t n_mod,
                      uint64_t memory, unsigned copies)
{
        memset(s, 0, sizeof(*s));
        s->n_rep = n_rep;
        for (size_t i = 0; i < n_rep; i++) {
                (void)snprintf(s->rep_id[i], sizeof(s->rep_id[i]), "pod-%zu", i);
                s->rep[i] = (struct placement_replica){ s->rep_id[i], capacity, PLACEMENT_LIVE };
        }
        s->n_mod = n_mod;
        s->mod = calloc(n_mod, sizeof(*s->mod));
        s->mod_name = calloc(n_mod, sizeof(*s->mod_name));
        s->holders = calloc(n_mod, sizeof(*s->holders));
        cr_assert(s->mod && s->mod_name && s->holders);
        for (size_t i = 0; i < n_mod; i++) {
                (void)snprintf(s->mod_name[i], sizeof(s->mod_name[i]), "model-%05zu", i);
                s->mod[i] = (struct placement_model){ .name = s->mod_name[i],
                                                      .memory = memory,
                                                      .copies = copies,
                                                      .holders = s->holders[i] };
        }
}

static void scen_free(struct scen *s)
{
        free(s->mod);
        free(s->mod_name);
        free(s->holders);
}

static void plan(struct scen *s, struct placement_result *res)
{
        struct placement_input in = { s->rep, s->n_rep, s->mod, s->n_mod };

        cr_assert_eq(placement_compute(&in, res), 0);
}

/* The result becomes the holders of the next round. */
static void adopt(struct scen *s, const struct placement_result *res)
{
        for (size_t m = 0; m < s->n_mod; m++) {
                const struct placement_assignment *a = &res->models[m];

                for (size_t i = 0; i < a->n; i++)
                        s->holders[m][i] = s->rep[a->replicas[i]].id;
                s->mod[m].n_holders = a->n;
        }
}

/* Every invariant any plan must keep. */
static void check_valid(const struct scen *s, const struct placement_result *res)
{
        uint64_t used[64] = { 0 };

        for (size_t m = 0; m < s->n_mod; m++) {
                const struct placement_assignment *a = &res->models[m];

                cr_assert_leq(a->n, (size_t)a->wanted, "%s over its copies", s->mod[m].name);
                for (size_t i = 0; i < a->n; i++) {
                        size_t r = a->replicas[i];

                        cr_assert_lt(r, s->n_rep);
                        cr_assert_eq(s->rep[r].state, PLACEMENT_LIVE, "%s on a draining replica",
                                     s->mod[m].name);
                        for (size_t j = 0; j < i; j++)
                                cr_assert_neq(a->replicas[j], r, "%s twice on one replica",
                                              s->mod[m].name);
                        for (size_t f = 0; f < s->mod[m].n_failed; f++)
                                cr_assert_str_neq(s->rep[r].id, s->mod[m].failed[f]);
                        used[r] += s->mod[m].memory;
                }
                cr_assert_eq(a->n < a->wanted, a->shortfall != NULL, "%s", s->mod[m].name);
        }
        for (size_t r = 0; r < s->n_rep; r++) {
                cr_assert_leq(used[r], s->rep[r].capacity, "%s over capacity", s->rep[r].id);
                cr_assert_eq(used[r], res->assigned[r]);
        }
}

static size_t placed_copies(const struct placement_result *res)
{
        size_t n = 0;

        for (size_t m = 0; m < res->n_models; m++)
                n += res->models[m].n;
        return n;
}

Test(placement, deterministic_and_independent_of_input_order)
{
        struct scen a, b;
        struct placement_result ra, rb;

        scen_init(&a, 5, 20 * GI, 200, 150 * MI, 2);
        scen_init(&b, 5, 20 * GI, 200, 150 * MI, 2);
        /* b lists its replicas in reverse */
        for (size_t i = 0; i < 5; i++) {
                (void)snprintf(b.rep_id[i], sizeof(b.rep_id[i]), "pod-%zu", 4 - i);
                b.rep[i].id = b.rep_id[i];
        }
        plan(&a, &ra);
        plan(&b, &rb);
        check_valid(&a, &ra);
        check_valid(&b, &rb);
        for (size_t m = 0; m < 200; m++) {
                cr_assert_eq(ra.models[m].n, 2);
                cr_assert_eq(rb.models[m].n, 2);
                for (size_t i = 0; i < 2; i++)
                        cr_assert_str_eq(a.rep[ra.models[m].replicas[i]].id,
                                         b.rep[rb.models[m].replicas[i]].id);
        }
        placement_result_release(&rb);
        plan(&a, &rb);
        for (size_t m = 0; m < 200; m++)
                cr_assert_arr_eq(ra.models[m].replicas, rb.models[m].replicas, 2 * sizeof(size_t));
        placement_result_release(&ra);
        placement_result_release(&rb);
        scen_free(&a);
        scen_free(&b);
}

Test(placement, spreads_evenly_without_pressure)
{
        struct scen s;
        struct placement_result r;

        scen_init(&s, 4, 100 * GI, 4000, 10 * MI, 1);
        plan(&s, &r);
        check_valid(&s, &r);
        for (size_t i = 0; i < 4; i++) {
                uint64_t n = r.assigned[i] / (10 * MI);

                cr_assert(n > 850 && n < 1150, "pod-%zu holds %llu of 4000", i,
                          (unsigned long long)n);
        }
        placement_result_release(&r);
        scen_free(&s);
}

Test(placement, unchanged_input_unchanged_output)
{
        struct scen s;
        struct placement_result r1, r2;

        /* tight: 250 x 100Mi = 25000Mi over 3 x 10Gi (30720Mi) */
        scen_init(&s, 3, 10 * GI, 250, 100 * MI, 1);
        plan(&s, &r1);
        check_valid(&s, &r1);
        cr_assert_eq(placed_copies(&r1), 250);
        adopt(&s, &r1);
        plan(&s, &r2);
        check_valid(&s, &r2);
        cr_assert_eq(r2.moved, 0);
        cr_assert_eq(r2.dropped, 0);
        for (size_t m = 0; m < s.n_mod; m++)
                cr_assert_arr_eq(r1.models[m].replicas, r2.models[m].replicas, sizeof(size_t));
        placement_result_release(&r1);
        placement_result_release(&r2);
        scen_free(&s);
}

static void add_then_remove(uint64_t capacity, size_t n_mod, double add_max, bool exact)
{
        struct scen s;
        struct placement_result r1, r2, r3;
        size_t on_last = 0;

        scen_init(&s, 3, capacity, n_mod, 100 * MI, 1);
        plan(&s, &r1);
        check_valid(&s, &r1);
        cr_assert_eq(placed_copies(&r1), n_mod);
        adopt(&s, &r1);
        /* a fourth replica: about a quarter of the models move to it, nothing else moves */
        s.n_rep = 4;
        (void)snprintf(s.rep_id[3], sizeof(s.rep_id[3]), "pod-3");
        s.rep[3] = (struct placement_replica){ s.rep_id[3], capacity, PLACEMENT_LIVE };
        plan(&s, &r2);
        check_valid(&s, &r2);
        cr_assert_eq(placed_copies(&r2), n_mod);
        cr_assert_eq(r2.moved, r2.dropped);
        cr_assert(r2.moved > n_mod / 8 && (double)r2.moved < add_max * (double)n_mod,
                  "%zu of %zu moved on add", r2.moved, n_mod);
        adopt(&s, &r2);
        /* it goes again: only the models it held move */
        for (size_t m = 0; m < n_mod; m++)
                on_last += r2.models[m].replicas[0] == 3;
        s.n_rep = 3;
        plan(&s, &r3);
        check_valid(&s, &r3);
        cr_assert_eq(placed_copies(&r3), n_mod);
        if (exact) {
                cr_assert_eq(r3.moved, on_last, "moved %zu, the removed replica held %zu", r3.moved,
                             on_last);
                cr_assert_eq(r3.dropped, 0, "no surviving holder lost a model");
        } else {
                /* a model kept off its first choice by memory may now reach its new one */
                cr_assert(r3.moved >= on_last && r3.moved <= on_last + n_mod / 10,
                          "moved %zu, the removed replica held %zu", r3.moved, on_last);
        }
        placement_result_release(&r1);
        placement_result_release(&r2);
        placement_result_release(&r3);
        scen_free(&s);
}

Test(placement, add_and_remove_move_about_one_in_n)
{
        add_then_remove(100 * GI, 1000, 0.32, true); /* no memory pressure */
}

Test(placement, add_and_remove_under_pressure)
{
        /* 250 x 100Mi = 2.44 x one replica's 10Gi, as the end-to-end test loads them */
        add_then_remove(10 * GI, 250, 0.40, false);
}

Test(placement, removal_moves_only_what_the_gone_replica_held)
{
        struct scen s;
        struct placement_result r1, r2;
        size_t held = 0;

        scen_init(&s, 5, 10 * GI, 300, 50 * MI, 2);
        plan(&s, &r1);
        check_valid(&s, &r1);
        adopt(&s, &r1);
        for (size_t m = 0; m < s.n_mod; m++)
                for (size_t i = 0; i < r1.models[m].n; i++)
                        held += r1.models[m].replicas[i] == 2;
        /* pod-2 is deleted: swap the last replica into its slot */
        s.rep[2] = s.rep[4];
        s.n_rep = 4;
        plan(&s, &r2);
        check_valid(&s, &r2);
        cr_assert_eq(placed_copies(&r2), 600);
        cr_assert_eq(r2.moved, held);
        cr_assert_eq(r2.dropped, 0);
        placement_result_release(&r1);
        placement_result_release(&r2);
        scen_free(&s);
}

Test(placement, copies_honoured)
{
        struct scen s;
        struct placement_result r;

        scen_init(&s, 4, 10 * GI, 3, GI, 2);
        s.mod[1].copies = PLACEMENT_COPIES_ALL;
        s.mod[2].copies = 6; /* more than there are replicas */
        plan(&s, &r);
        check_valid(&s, &r);
        cr_assert_eq(r.models[0].n, 2);
        cr_assert_null(r.models[0].shortfall);
        cr_assert_eq(r.models[1].n, 4);
        cr_assert_eq(r.models[1].wanted, 4);
        cr_assert_eq(r.models[2].n, 4);
        cr_assert_str_eq(r.models[2].shortfall,
                         "4/6 copies placed: needs 1Gi on 2 more replicas; no other replica can "
                         "hold it (4 live, 0 where it failed to load)");
        placement_result_release(&r);
        scen_free(&s);
}

Test(placement, shortfall_names_what_is_missing)
{
        struct scen s;
        struct placement_result r;

        /* three replicas of 4Gi; 3 x 3Gi fill one each, then a 2Gi model has 1Gi free per pod */
        scen_init(&s, 3, 4 * GI, 4, 3 * GI, 1);
        s.mod[3].memory = 2 * GI;
        plan(&s, &r);
        check_valid(&s, &r);
        for (size_t m = 0; m < 3; m++)
                cr_assert_eq(r.models[m].n, 1, "model %zu", m);
        cr_assert_eq(r.models[3].n, 0);
        cr_assert_not_null(r.models[3].shortfall);
        cr_assert(strncmp(r.models[3].shortfall,
                          "needs 2Gi; the most free on one replica is 1Gi (pod-", 52) == 0,
                  "%s", r.models[3].shortfall);
        cr_assert(strstr(r.models[3].shortfall, "), 3Gi free over 3 replicas"), "%s",
                  r.models[3].shortfall);
        placement_result_release(&r);
        scen_free(&s);
}

Test(placement, capacity_true_admission)
{
        struct scen s;
        struct placement_result r;

        /* 2.5 x one pod: KServe's one-pod admission takes 10 of these 25; placement takes all */
        scen_init(&s, 3, 10 * GI, 25, GI, 1);
        plan(&s, &r);
        check_valid(&s, &r);
        cr_assert_eq(placed_copies(&r), 25);
        placement_result_release(&r);
        scen_free(&s);
}

Test(placement, failed_and_draining_replicas_are_avoided)
{
        struct scen s;
        struct placement_result r1, r2;
        const char *failed[] = { "pod-0", "pod-1" };

        scen_init(&s, 3, 10 * GI, 60, 100 * MI, 1);
        s.mod[0].failed = failed;
        s.mod[0].n_failed = 2;
        plan(&s, &r1);
        check_valid(&s, &r1);
        cr_assert_eq(r1.models[0].n, 1);
        cr_assert_eq(r1.models[0].replicas[0], 2);
        adopt(&s, &r1);
        /* pod-2 drains: everything it held goes elsewhere, model 0 has nowhere left */
        s.rep[2].state = PLACEMENT_DRAINING;
        plan(&s, &r2);
        check_valid(&s, &r2);
        cr_assert_eq(r2.models[0].n, 0);
        cr_assert_str_eq(r2.models[0].shortfall,
                         "needs 100Mi; no other replica can hold it (2 live, 2 where it failed to "
                         "load)");
        cr_assert_eq(placed_copies(&r2), 59);
        cr_assert_eq(r2.assigned[2], 0);
        placement_result_release(&r1);
        placement_result_release(&r2);
        scen_free(&s);
}

Test(placement, a_shrunk_replica_keeps_the_higher_priority_models)
{
        struct scen s;
        struct placement_result r1, r2;

        scen_init(&s, 1, 10 * GI, 10, GI, 1);
        plan(&s, &r1);
        cr_assert_eq(placed_copies(&r1), 10);
        adopt(&s, &r1);
        s.rep[0].capacity = 5 * GI;
        plan(&s, &r2);
        check_valid(&s, &r2);
        for (size_t m = 0; m < 10; m++)
                cr_assert_eq(r2.models[m].n, m < 5 ? 1U : 0U, "model %zu", m);
        placement_result_release(&r1);
        placement_result_release(&r2);
        scen_free(&s);
}

Test(placement, refuses_duplicates_and_nulls)
{
        struct placement_replica reps[2] = { { "a", GI, PLACEMENT_LIVE },
                                             { "a", GI, PLACEMENT_LIVE } };
        struct placement_model mods[2] = { { .name = "m", .memory = 1, .copies = 1 },
                                           { .name = "m", .memory = 1, .copies = 1 } };
        struct placement_input in = { reps, 2, mods, 1 };
        struct placement_result r;

        cr_assert_eq(placement_compute(&in, &r), -EINVAL);
        reps[1].id = "b";
        in.n_models = 2;
        cr_assert_eq(placement_compute(&in, &r), -EINVAL);
        mods[1].name = NULL;
        cr_assert_eq(placement_compute(&in, &r), -EINVAL);
        mods[1].name = "n";
        cr_assert_eq(placement_compute(&in, &r), 0);
        placement_result_release(&r);
        in.n_replicas = 0;
        cr_assert_eq(placement_compute(&in, &r), 0, "no replicas: nothing placed");
        cr_assert_eq(r.models[0].n, 0);
        placement_result_release(&r);
}

Test(placement, ten_thousand_models_on_fifty_replicas)
{
        struct scen s;
        struct placement_result r1, r2;

        /* the size of bench/placement; here only its invariants (tests assert no times) */
        scen_init(&s, 50, 128 * GI, 10000, 256 * MI, 2);
        plan(&s, &r1);
        check_valid(&s, &r1);
        cr_assert_eq(placed_copies(&r1), 20000);
        adopt(&s, &r1);
        s.n_rep = 49;
        plan(&s, &r2);
        check_valid(&s, &r2);
        cr_assert_eq(placed_copies(&r2), 20000);
        cr_assert_eq(r2.dropped, 0);
        cr_assert(r2.moved < 20000 / 25, "%zu copies moved on losing one of 50", r2.moved);
        placement_result_release(&r1);
        placement_result_release(&r2);
        scen_free(&s);
}

Test(placement, weight_separates_model_and_replica)
{
        cr_assert_neq(placement_weight("ab", "c"), placement_weight("a", "bc"));
        cr_assert_eq(placement_weight("m", "r"), placement_weight("m", "r"));
}

/* Under pressure, new models are placed in priority order: a later model never takes the room
 * an earlier one needs for its first copy (it did: the move pass placed each model on its
 * ideal replica when that had room, before the fill pass gave earlier models any other). */
Test(placement, new_models_placed_in_priority_order_under_pressure)
{
        struct scen s;
        struct placement_result res;

        scen_init(&s, 3, 4 * GI, 14, GI, 1);
        plan(&s, &res);
        check_valid(&s, &res);
        for (size_t m = 0; m < 14; m++)
                cr_assert_eq(res.models[m].n, m < 12 ? 1U : 0U, "%s: %zu copies", s.mod[m].name,
                             res.models[m].n);
        placement_result_release(&res);
        scen_free(&s);
}
