/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "fake-apiserver.h"
#include "kube/leader.h"
#include "kube/metrics.h"
#include "util/log.h"

#define LEASES "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"

static struct fake_apiserver *fake;
static struct kube_client *client;

static void setup(void)
{
        char server[64];
        struct kube_config cfg = { .server = server, .namespace = (char *)"default" };
        struct kube_client_options o = { .request_timeout = 5 * USEC_PER_SEC };

        cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
        cr_assert_eq(fake_apiserver_start(&fake), 0);
        (void)snprintf(server, sizeof(server), "%s", fake_apiserver_url(fake));
        cr_assert_eq(kube_client_new(&cfg, &o, &client), 0);
        log_set_max_level(LOG_LEVEL_WARN);
}

static void teardown(void)
{
        client = kube_client_free(client);
        fake = fake_apiserver_free(fake);
        curl_global_cleanup();
}

TestSuite(leader, .init = setup, .fini = teardown, .timeout = 30);

struct cand {
        atomic_int started, stopped;
};

static void on_started(void *u)
{
        atomic_fetch_add(&((struct cand *)u)->started, 1);
}

static void on_stopped(void *u)
{
        atomic_fetch_add(&((struct cand *)u)->stopped, 1);
}

static struct leader_elector *candidate(const char *id, struct cand *c, usec_t lease, bool release,
                                        struct metrics_registry *reg)
{
        struct leader_options o = {
                .client = client,
                .namespace = "kube-system",
                .name = "modelplane-leader",
                .identity = id,
                .lease_duration = lease,
                .renew_deadline = 300 * USEC_PER_MSEC,
                .retry_period = 20 * USEC_PER_MSEC,
                .release_on_cancel = release,
                .metrics = reg,
                .callbacks = { on_started, on_stopped, NULL, c },
        };
        struct leader_elector *le = NULL;

        cr_assert_eq(leader_elector_new(&o, &le), 0);
        cr_assert_eq(leader_elector_start(le), 0);
        return le;
}

static void wait_started(struct cand *c)
{
        for (int i = 0; i < 20000 && atomic_load(&c->started) == 0; i++)
                usleep(1000);
        cr_assert_eq(atomic_load(&c->started), 1);
}

static json_t *lease(void)
{
        json_t *l = fake_apiserver_get(fake, LEASES, "modelplane-leader");
        cr_assert_not_null(l);
        return l;
}

static const char *spec_str(json_t *l, const char *f)
{
        return json_string_value(json_object_get(json_object_get(l, "spec"), f));
}

static json_int_t spec_int(json_t *l, const char *f)
{
        return json_integer_value(json_object_get(json_object_get(l, "spec"), f));
}

Test(leader, exactly_one_leads_and_release_hands_over_at_once)
{
        struct cand a = { 0 }, b = { 0 };
        CLEANUP(metrics_registry_freep) struct metrics_registry *reg = metrics_registry_new();
        struct metric *status;
        /* 30 s leases: a takeover within the test's timeout can only come from the release */
        struct leader_elector *la = candidate("a", &a, 30 * USEC_PER_SEC, true, reg);
        wait_started(&a);
        struct leader_elector *lb = candidate("b", &b, 30 * USEC_PER_SEC, true, NULL);

        usleep(200 * 1000); /* b campaigns about ten times meanwhile */
        cr_assert(leader_elector_is_leader(la));
        cr_assert_not(leader_elector_is_leader(lb));
        cr_assert_eq(atomic_load(&b.started), 0);
        json_auto_t *l1 = lease();
        cr_assert_str_eq(spec_str(l1, "holderIdentity"), "a");
        cr_assert_eq(spec_int(l1, "leaseDurationSeconds"), 30);
        cr_assert_eq(spec_int(l1, "leaseTransitions"), 0);
        cr_assert_not_null(spec_str(l1, "acquireTime"));
        cr_assert_not_null(spec_str(l1, "renewTime"));
        cr_assert_eq(metrics_runtime_child(reg, RUNTIME_METRIC_LEADER_ELECTION_MASTER_STATUS,
                                           (const char *const[]){ "modelplane-leader" }, &status),
                     0);
        cr_assert(metric_value(status) == 1.0);

        leader_elector_stop(la); /* clean shutdown: releases */
        cr_assert_eq(atomic_load(&a.stopped), 1);
        cr_assert(metric_value(status) == 0.0);
        wait_started(&b);
        json_auto_t *l2 = lease();
        cr_assert_str_eq(spec_str(l2, "holderIdentity"), "b");
        cr_assert_eq(spec_int(l2, "leaseTransitions"), 1);
        leader_elector_free(la);
        leader_elector_free(lb);
        json_auto_t *l3 = lease();
        cr_assert_str_eq(spec_str(l3, "holderIdentity"), "");
        cr_assert_eq(spec_int(l3, "leaseDurationSeconds"), 1);
}

Test(leader, takeover_after_expiry_when_the_leader_dies)
{
        struct cand a = { 0 }, b = { 0 };
        struct leader_elector *la = candidate("a", &a, 1 * USEC_PER_SEC, false, NULL);
        wait_started(&a);
        struct leader_elector *lb = candidate("b", &b, 1 * USEC_PER_SEC, false, NULL);

        leader_elector_free(la); /* "killed": no release */
        json_auto_t *l1 = lease();
        cr_assert_str_eq(spec_str(l1, "holderIdentity"), "a");
        wait_started(&b); /* once a's record has been unchanged for 1 s on b's clock */
        json_auto_t *l2 = lease();
        cr_assert_str_eq(spec_str(l2, "holderIdentity"), "b");
        cr_assert_eq(spec_int(l2, "leaseTransitions"), 1);
        leader_elector_free(lb);
}

Test(leader, leadership_lost_when_renewals_fail)
{
        struct cand a = { 0 };
        struct leader_elector *la = candidate("a", &a, 30 * USEC_PER_SEC, false, NULL);
        json_auto_t *l = NULL;

        wait_started(&a);
        /* someone else grabs the lease (as after a network partition) */
        l = lease();
        cr_assert_eq(json_object_set_new(json_object_get(l, "spec"), "holderIdentity",
                                         json_string("intruder")),
                     0);
        cr_assert_neq(fake_apiserver_put(fake, LEASES, l), 0);
        for (int i = 0; i < 20000 && atomic_load(&a.stopped) == 0; i++)
                usleep(1000);
        cr_assert_eq(atomic_load(&a.stopped), 1);
        cr_assert_not(leader_elector_is_leader(la));
        leader_elector_free(la);
}
