/* SPDX-License-Identifier: Apache-2.0 */
#include "manager/manager.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "http/router.h"
#include "json/json-util.h"
#include "kube/cache.h"
#include "http/server.h"
#include "kube/events.h"
#include "kube/leader.h"
#include "util/log.h"
#include "util/uuid.h"
#include "util/memory.h"
#include "util/parse-util.h"

#define MANAGER_SHUTDOWN_DEFAULT (30 * USEC_PER_SEC)
#define MANAGER_MAX_INFORMERS    16
#define MANAGER_MAX_CONTROLLERS  8
/* How often the main loop looks at the leader state between signals. */
#define MANAGER_TICK_NSEC (100L * 1000L * 1000L)
/* Freed heap pages are handed back to the system this often (ticks): reconciles of many objects
 * leave garbage in the per-thread malloc arenas that glibc would otherwise keep (Go's runtime
 * scavenges the same way). */
#define MANAGER_TRIM_TICKS 100U

struct manager {
        struct manager_options opts;
        char *lease_namespace;                             /* owned */
        char *identity;                                    /* owned */
        struct metrics_registry *metrics;                  /* owned */
        struct informer *informers[MANAGER_MAX_INFORMERS]; /* borrowed */
        size_t n_informers;
        struct controller *controllers[MANAGER_MAX_CONTROLLERS]; /* borrowed */
        size_t n_controllers;
        struct leader_elector *elector; /* owned */
        struct event_recorder *events;  /* owned */
        struct metric *ev_emitted, *ev_sent, *ev_aggregated, *ev_coalesced, *ev_queued;
        struct metric *ev_dropped[3];    /* spam, queue_full, failed */
        struct http_server *probes;      /* owned */
        struct http_server *metrics_srv; /* owned */
        atomic_bool leading;
        atomic_bool lost_lease;
        bool controllers_started;
};

int parse_bind_address(const char *s, char *ret_addr, size_t len, uint16_t *ret_port)
{
        const char *colon, *host;
        size_t hl;
        uint16_t port;
        int n;

        if (!s)
                return -EINVAL;
        colon = strrchr(s, ':');
        if (!colon)
                return -EINVAL;
        if (safe_atou16(colon + 1, &port) < 0)
                return -EINVAL;
        host = s;
        hl = (size_t)(colon - s);
        if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
                host++;
                hl -= 2;
        }
        if (hl == 0)
                n = snprintf(ret_addr, len, "0.0.0.0");
        else
                n = snprintf(ret_addr, len, "%.*s", (int)hl, host);
        if (n < 0 || (size_t)n >= len)
                return -ENAMETOOLONG;
        *ret_port = port;
        return 0;
}

/* modelplane_events_*: the Event recorder's counters, brought up to date at every scrape. */
static void counter_to(struct metric *m, unsigned long v)
{
        metric_raise_to(m, (double)v);
}

static void collect_event_metrics(void *userdata)
{
        struct manager *m = userdata;
        struct event_recorder_stats st;

        event_recorder_get_stats(m->events, &st);
        counter_to(m->ev_emitted, st.emitted);
        counter_to(m->ev_sent, st.sent);
        counter_to(m->ev_aggregated, st.aggregated);
        counter_to(m->ev_coalesced, st.coalesced);
        counter_to(m->ev_dropped[0], st.dropped_spam);
        counter_to(m->ev_dropped[1], st.dropped_queue_full);
        counter_to(m->ev_dropped[2], st.dropped_failed);
        metric_set(m->ev_queued, (double)st.queued);
}

static int event_metrics_register(struct manager *m)
{
        static const char *const reasons[] = { "spam", "queue_full", "failed" };
        static const struct {
                const char *name, *help;
                size_t offset;
        } counters[] = {
                { "modelplane_events_emitted_total", "Events recorded by the controllers",
                  offsetof(struct manager, ev_emitted) },
                { "modelplane_events_sent_total", "Event writes the API server accepted",
                  offsetof(struct manager, ev_sent) },
                { "modelplane_events_aggregated_total",
                  "Events counted into an existing Event (same object, reason, message)",
                  offsetof(struct manager, ev_aggregated) },
                { "modelplane_events_coalesced_total",
                  "Events folded into a queued, not yet sent write of the same Event",
                  offsetof(struct manager, ev_coalesced) },
        };
        struct metric_family *f;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(counters); i++) {
                r = metrics_register(m->metrics, METRIC_COUNTER, counters[i].name, counters[i].help,
                                     NULL, NULL, 0, &f);
                if (r >= 0)
                        r = metric_family_child(f, NULL,
                                                (struct metric **)((char *)m + counters[i].offset));
                if (r < 0)
                        return r;
        }
        r = metrics_register(m->metrics, METRIC_COUNTER, "modelplane_events_dropped_total",
                             "Events not written: spam filter, full queue, failed writes",
                             (const char *const[]){ "reason", NULL }, NULL, 0, &f);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(reasons); i++)
                r = metric_family_child(f, (const char *const[]){ reasons[i] }, &m->ev_dropped[i]);
        if (r >= 0)
                r = metrics_register(m->metrics, METRIC_GAUGE, "modelplane_events_queued",
                                     "Event writes waiting to be sent", NULL, NULL, 0, &f);
        if (r >= 0)
                r = metric_family_child(f, NULL, &m->ev_queued);
        if (r >= 0)
                r = metrics_add_collector(m->metrics, collect_event_metrics, m);
        return r;
}

int manager_new(const struct manager_options *opts, struct manager **ret)
{
        struct manager *m;
        sigset_t mask;
        char host[256] = "modelplane";
        char uuid[37];
        const char *ns;

        if (!opts || !opts->client)
                return -EINVAL;
        if (opts->leader_elect && (!opts->leader_election_id || !opts->leader_election_id[0]))
                return -EINVAL;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->opts = *opts;
        if (m->opts.graceful_shutdown_timeout == 0)
                m->opts.graceful_shutdown_timeout = MANAGER_SHUTDOWN_DEFAULT;
        m->metrics = metrics_registry_new();
        ns = opts->leader_election_namespace ? opts->leader_election_namespace
                                             : kube_client_namespace(opts->client);
        m->lease_namespace = strdup(ns ? ns : "default");
        (void)gethostname(host, sizeof(host) - 1);
        if (opts->identity)
                m->identity = strdup(opts->identity);
        else if (uuid_random(uuid) >= 0)
                (void)!asprintf(&m->identity, "%s_%s", host, uuid);
        if (!m->metrics || !m->lease_namespace || !m->identity) {
                manager_free(m);
                return -ENOMEM;
        }
        {
                int r = event_recorder_new(
                        &(struct event_recorder_options){
                                .client = opts->client,
                                .correlator = { .component = opts->component ? opts->component
                                                                             : "modelplane",
                                                .host = host },
                        },
                        &m->events);
                if (r >= 0)
                        r = event_metrics_register(m);
                if (r < 0) {
                        manager_free(m);
                        return r;
                }
        }

        /* Signals are taken synchronously by manager_run(); every later thread inherits this. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        (void)pthread_sigmask(SIG_BLOCK, &mask, NULL);

        *ret = m;
        return 0;
}

struct manager *manager_free(struct manager *m)
{
        if (!m)
                return NULL;
        leader_elector_free(m->elector);
        if (m->metrics)
                metrics_remove_collector(m->metrics, collect_event_metrics, m);
        event_recorder_free(m->events);
        http_server_free(m->probes);
        http_server_free(m->metrics_srv);
        metrics_registry_free(m->metrics);
        free(m->lease_namespace);
        free(m->identity);
        free(m);
        return NULL;
}

struct metrics_registry *manager_metrics(struct manager *m)
{
        return m->metrics;
}

int manager_add_informer(struct manager *m, struct informer *inf)
{
        if (m->n_informers >= MANAGER_MAX_INFORMERS)
                return -E2BIG;
        m->informers[m->n_informers++] = inf;
        return 0;
}

int manager_add_controller(struct manager *m, struct controller *c)
{
        if (m->n_controllers >= MANAGER_MAX_CONTROLLERS)
                return -E2BIG;
        m->controllers[m->n_controllers++] = c;
        return 0;
}

uint16_t manager_metrics_port(struct manager *m)
{
        return m->metrics_srv ? http_server_port(m->metrics_srv) : 0;
}

uint16_t manager_probe_port(struct manager *m)
{
        return m->probes ? http_server_port(m->probes) : 0;
}

void manager_event_fn(void *userdata, const json_t *obj, const char *type, const char *reason,
                      const char *message)
{
        struct manager *m = userdata;
        const struct event_object_ref ref = {
                .api_version = json_get_string_path(obj, "apiVersion", NULL),
                .kind = json_get_string_path(obj, "kind", NULL),
                .namespace = json_get_string_path(obj, "metadata", "namespace", NULL),
                .name = json_get_string_path(obj, "metadata", "name", NULL),
                .uid = json_get_string_path(obj, "metadata", "uid", NULL),
                .resource_version = json_get_string_path(obj, "metadata", "resourceVersion", NULL),
        };
        char object[CACHE_KEY_MAX];

        (void)snprintf(object, sizeof(object), "%s/%s", ref.namespace ? ref.namespace : "",
                       ref.name ? ref.name : "");
        log_emit(streq(type, "Warning") ? LOG_LEVEL_WARN : LOG_LEVEL_INFO, 0,
                 &(struct log_fields){ .object = object }, "%s: %s", reason, message);
        (void)event_recorder_emit(m->events, &ref,
                                  streq(type, "Warning") ? EVENT_WARNING : EVENT_NORMAL, reason,
                                  "%s", message);
}

static int probe_handler(void *userdata, struct http_req *req, struct http_resp *resp)
{
        struct manager *m = userdata;

        if (!streq(req->method, "GET") && !streq(req->method, "HEAD")) {
                http_resp_set_text(resp, 405, "text/plain; charset=utf-8", "method not allowed\n");
                return 0;
        }
        if (streq(req->path, "/healthz") || streq(req->path, "/livez")) {
                http_resp_set_text(resp, 200, "text/plain; charset=utf-8", "ok");
                return 0;
        }
        if (streq(req->path, "/readyz")) {
                for (size_t i = 0; i < m->n_informers; i++)
                        if (!informer_has_synced(m->informers[i])) {
                                http_resp_set_text(resp, 503, "text/plain; charset=utf-8",
                                                   "informers not synced\n");
                                return 0;
                        }
                http_resp_set_text(resp, 200, "text/plain; charset=utf-8", "ok");
                return 0;
        }
        http_resp_set_text(resp, 404, "text/plain; charset=utf-8", "not found\n");
        return 0;
}

static int metrics_handler(void *userdata, struct http_req *req, struct http_resp *resp)
{
        struct manager *m = userdata;
        struct buf b = BUF_INIT(HTTP_RESPONSE_MAX);
        int r;

        if (!streq(req->path, "/metrics")) {
                http_resp_set_text(resp, 404, "text/plain; charset=utf-8", "not found\n");
                return 0;
        }
        r = metrics_serialize(m->metrics, &b);
        if (r < 0) {
                buf_release(&b);
                return r;
        }
        http_resp_set_text(resp, 200, METRICS_CONTENT_TYPE, buf_str(&b));
        buf_release(&b);
        return 0;
}

static int start_server(const char *bind, http_handler_fn fn, void *userdata,
                        struct http_server **ret)
{
        struct http_server_config cfg = { HTTP_SERVER_CONFIG_DEFAULTS };
        char addr[128];
        uint16_t port;
        int r;

        if (!bind || streq(bind, "0") || !bind[0])
                return 0;
        r = parse_bind_address(bind, addr, sizeof(addr), &port);
        if (r < 0)
                return r;
        cfg.address = addr;
        cfg.port = port;
        cfg.body_max = 4096;
        cfg.connection_timeout = 10;
        cfg.threads = 2; /* the probe and metrics handlers never block */
        cfg.handler = fn;
        cfg.userdata = userdata;
        return http_server_start(&cfg, ret);
}

static void on_started_leading(void *userdata)
{
        struct manager *m = userdata;

        atomic_store(&m->leading, true);
}

static void on_stopped_leading(void *userdata)
{
        struct manager *m = userdata;

        if (atomic_load(&m->leading))
                atomic_store(&m->lost_lease, true);
}

static void on_new_leader(void *userdata, const char *identity)
{
        struct manager *m = userdata;

        if (!streq(identity, m->identity))
                log_info("New leader elected: %s", identity);
}

static void exit_now(int sig)
{
        (void)sig;
        _exit(1);
}

static bool informers_synced(struct manager *m)
{
        for (size_t i = 0; i < m->n_informers; i++)
                if (!informer_has_synced(m->informers[i]))
                        return false;
        return true;
}

static int start_controllers(struct manager *m)
{
        int r;

        for (size_t i = 0; i < m->n_controllers; i++) {
                r = controller_start(m->controllers[i]);
                if (r < 0)
                        return log_error_errno(r, "Failed to start a controller");
        }
        m->controllers_started = true;
        log_info("Started %zu controller(s)", m->n_controllers);
        return 0;
}

/* Step 1 of manager_run: the health-probe and metrics servers (each optional). */
static int serve_endpoints(struct manager *m)
{
        int r;

        r = start_server(m->opts.health_probe_bind_address, probe_handler, m, &m->probes);
        if (r < 0)
                return log_error_errno(r, "Failed to serve health probes on %s",
                                       m->opts.health_probe_bind_address);
        r = start_server(m->opts.metrics_bind_address, metrics_handler, m, &m->metrics_srv);
        if (r < 0)
                return log_error_errno(r, "Failed to serve metrics on %s",
                                       m->opts.metrics_bind_address);
        if (m->probes)
                log_info("Serving health probes on port %u", manager_probe_port(m));
        if (m->metrics_srv)
                log_info("Serving metrics on port %u", manager_metrics_port(m));
        return 0;
}

/* Step 2: every informer's list and watch. */
static int start_informers(struct manager *m)
{
        for (size_t i = 0; i < m->n_informers; i++) {
                int r = informer_start(m->informers[i]);

                if (r < 0)
                        return log_error_errno(r, "Failed to start an informer");
        }
        return 0;
}

/* Step 3: leader election when asked for (the callbacks set m->leading), else lead at once. */
static int start_leading(struct manager *m)
{
        int r;

        if (!m->opts.leader_elect) {
                atomic_store(&m->leading, true);
                return 0;
        }
        r = leader_elector_new(
                &(struct leader_options){
                        .client = m->opts.client,
                        .namespace = m->lease_namespace,
                        .name = m->opts.leader_election_id,
                        .identity = m->identity,
                        .release_on_cancel = true,
                        .metrics = m->metrics,
                        .callbacks = { .on_started_leading = on_started_leading,
                                       .on_stopped_leading = on_stopped_leading,
                                       .on_new_leader = on_new_leader,
                                       .userdata = m },
                },
                &m->elector);
        if (r >= 0)
                r = leader_elector_start(m->elector);
        if (r < 0)
                return log_error_errno(r, "Failed to start leader election");
        return 0;
}

/*
 * Step 4: ticks until SIGTERM/SIGINT (0), a lost lease (-ENOLINK) or a controller that fails to
 * start; starts the controllers once leading and synced, trims the heap now and then.
 */
static int run_until_signal(struct manager *m, const sigset_t *mask)
{
        struct timespec tick = { .tv_sec = 0, .tv_nsec = MANAGER_TICK_NSEC };
        bool announced = false;
        int result = 0;

        for (unsigned ticks = 1; result == 0; ticks++) {
                int sig = sigtimedwait(mask, NULL, &tick);

                if (ticks % MANAGER_TRIM_TICKS == 0)
                        memory_trim();
                if (sig == SIGTERM || sig == SIGINT) {
                        log_info("Received %s, shutting down",
                                 sig == SIGTERM ? "SIGTERM" : "SIGINT");
                        break;
                }
                if (atomic_load(&m->lost_lease)) {
                        result = log_error_errno(-ENOLINK, "Leader lease lost, exiting");
                        break;
                }
                /* controllers start when leading and once every cache holds its first list
                 * (controller-runtime's WaitForCacheSync): an object missing from an unsynced
                 * cache is unknown, not gone */
                if (atomic_load(&m->leading) && !announced) {
                        announced = true;
                        if (m->elector)
                                log_info("Acquired leader lease %s/%s", m->lease_namespace,
                                         m->opts.leader_election_id);
                }
                if (atomic_load(&m->leading) && !m->controllers_started && informers_synced(m)) {
                        int r = start_controllers(m);

                        if (r < 0)
                                result = r;
                }
        }
        return result;
}

/* Step 5: controllers (within the grace period), the lease, informers, events, servers. */
static void shut_down(struct manager *m, const sigset_t *mask)
{
        int r;

        /* A second signal during shutdown exits at once. */
        (void)signal(SIGTERM, exit_now);
        (void)signal(SIGINT, exit_now);
        (void)pthread_sigmask(SIG_UNBLOCK, mask, NULL);

        for (size_t i = 0; i < m->n_controllers; i++) {
                r = controller_stop(m->controllers[i], m->opts.graceful_shutdown_timeout);
                if (r < 0)
                        log_warn_errno(r,
                                       "Controller did not stop within the grace period, ignoring");
        }
        if (m->elector)
                leader_elector_stop(m->elector); /* releases the lease */
        for (size_t i = 0; i < m->n_informers; i++)
                informer_stop(m->informers[i]);
        r = event_recorder_flush(m->events, 2 * USEC_PER_SEC);
        if (r < 0)
                log_warn_errno(r, "Not every event could be sent before shutdown, ignoring");
        m->probes = http_server_free(m->probes);
        m->metrics_srv = http_server_free(m->metrics_srv);
}

int manager_run(struct manager *m)
{
        sigset_t mask;
        int r;

        r = serve_endpoints(m);
        if (r < 0)
                return r;
        r = start_informers(m);
        if (r < 0)
                return r;
        r = start_leading(m);
        if (r < 0)
                return r;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        r = run_until_signal(m, &mask);
        shut_down(m, &mask);
        return r;
}
