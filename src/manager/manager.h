/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The manager (controller-runtime's pkg/manager): wires informers, controllers, leader election,
 * the health probes and the metrics endpoint, and runs them until a signal.
 *
 *  - /healthz answers 200 while the process runs; /readyz answers 200 once every informer has
 *    synced its first list (so an unreachable API server keeps the pod unready), 503 otherwise;
 *  - /metrics serves the registry in Prometheus text format;
 *  - informers start at once (standby replicas keep warm caches); controllers start only while
 *    this process holds the leader Lease (or at once without leader election); losing the lease
 *    ends the process, as controller-runtime does, so that Kubernetes restarts it as a follower;
 *  - the first SIGTERM/SIGINT stops the controllers (in-flight reconciles get up to
 *    graceful_shutdown_timeout), releases the lease and returns; a second signal exits at once.
 *
 * manager_run() must be called from the main thread, before which no other thread may have been
 * started with SIGTERM/SIGINT unblocked: manager_new() blocks them in the calling thread so that
 * every thread created afterwards inherits the mask.
 */

#include <stdbool.h>

#include "kube/client.h"
#include "kube/controller.h"
#include "kube/informer.h"
#include "kube/metrics.h"
#include "util/macro.h"
#include "util/time-util.h"

struct manager_options {
        struct kube_client *client;            /* borrowed */
        const char *metrics_bind_address;      /* ":8080", "127.0.0.1:0"; "0" or NULL: off */
        const char *health_probe_bind_address; /* ":8081"; "0" or NULL: off */
        bool leader_elect;
        const char *leader_election_id;        /* Lease name */
        const char *leader_election_namespace; /* NULL: the client's namespace */
        const char *identity;                  /* NULL: hostname + random suffix */
        usec_t graceful_shutdown_timeout;      /* 0: 30 s */
        const char *component;                 /* event source; NULL: "modelplane" */
};

struct manager;

_warn_unused_result_ int manager_new(const struct manager_options *opts, struct manager **ret);
struct manager *manager_free(struct manager *m);
DEFINE_CLEANUP_FUNC(struct manager *, manager_free)

/* The registry served at /metrics (borrowed; lives as long as the manager). */
struct metrics_registry *manager_metrics(struct manager *m);

/* Registers an informer (borrowed; must outlive the manager run). Started by manager_run(). */
_warn_unused_result_ int manager_add_informer(struct manager *m, struct informer *inf);
/* Registers a controller (borrowed), started when leading. */
_warn_unused_result_ int manager_add_controller(struct manager *m, struct controller *c);

/*
 * Records a Kubernetes Event about obj (borrowed) through the manager's recorder; the signature
 * fits serving/reconciler.h's tm_event_fn with the manager as userdata. Never blocks.
 */
void manager_event_fn(void *userdata, const json_t *obj, const char *type, const char *reason,
                      const char *message);

/* The bound ports (after manager_start()), for tests that bind port 0. */
uint16_t manager_metrics_port(struct manager *m);
uint16_t manager_probe_port(struct manager *m);

/* Runs until a signal (or leadership is lost: returns -ENOLINK). Returns 0 after a clean shutdown. */
_warn_unused_result_ int manager_run(struct manager *m);

/* Splits ":8080" / "host:port" / "[::1]:port" into an address ("0.0.0.0" when empty) and port. */
_warn_unused_result_ int parse_bind_address(const char *s, char *ret_addr, size_t len,
                                            uint16_t *ret_port);
