/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `modelplane webhook`: the TrainedModel validating admission webhook on its own (HTTPS).
 * `modelplane controller --enable-webhook` runs the same server next to the controller.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/parse-util.h"
#include "webhook/server.h"

enum { OPT_PORT, OPT_CERT_DIR, OPT_BIND, OPT_TIMEOUT };

static const struct cli_option webhook_options[] = {
        { "webhook-port", 0, CLI_ARG_REQUIRED, "PORT",
          "listen port (default 9443; 0 picks a free one, logged)", OPT_PORT },
        { "webhook-cert-dir", 0, CLI_ARG_REQUIRED, "DIR",
          "directory with tls.crt and tls.key, re-read when they\nchange (default " WEBHOOK_DEFAULT_CERT_DIR
          ")",
          OPT_CERT_DIR },
        { "webhook-bind-address", 0, CLI_ARG_REQUIRED, "IP", "listen address (default 0.0.0.0)",
          OPT_BIND },
        { "webhook-timeout", 0, CLI_ARG_REQUIRED, "SEC", "idle connection timeout (default 10)",
          OPT_TIMEOUT },
};

static int webhook_set(void *userdata, const struct cli_option *opt, const char *arg, char *err,
                       size_t err_size)
{
        struct webhook_server_config *cfg = userdata;
        uint64_t v;

        switch (opt->id) {
        case OPT_PORT:
                if (safe_atou64(arg, &v) < 0 || v > 65535) {
                        (void)snprintf(err, err_size, "invalid --webhook-port '%s' (0-65535)", arg);
                        return -EINVAL;
                }
                cfg->port = (uint16_t)v;
                return 0;
        case OPT_CERT_DIR:
                cfg->cert_dir = arg;
                return 0;
        case OPT_BIND:
                cfg->address = arg;
                return 0;
        case OPT_TIMEOUT:
                if (safe_atou64(arg, &v) < 0 || v == 0 || v > 3600) {
                        (void)snprintf(err, err_size,
                                       "invalid --webhook-timeout '%s' (1-3600 seconds)", arg);
                        return -EINVAL;
                }
                cfg->connection_timeout = (unsigned)v;
                return 0;
        default:
                return -EINVAL;
        }
}

static const struct cli_command webhook_cli = {
        .name = "webhook",
        .synopsis = "Serve the TrainedModel validating admission webhook over HTTPS (TLS 1.2+) on\n"
                    "  POST " WEBHOOK_PATH "\n"
                    "  POST " WEBHOOK_PATH_ALIAS,
        .options = webhook_options,
        .n_options = ELEMENTSOF(webhook_options),
        .set = webhook_set,
};

int cmd_webhook(int argc, char **argv)
{
        struct webhook_server_config cfg = { WEBHOOK_SERVER_CONFIG_DEFAULTS };
        CLEANUP(webhook_server_freep) struct webhook_server *s = NULL;
        sigset_t set;
        int sig, r;

        r = cli_parse(&webhook_cli, argc, argv, &cfg);
        if (r != 0)
                return cli_exit_status(r);

        /* Block the signals before any thread starts, so that only sigwait() sees them. */
        r = cli_block_exit_signals(&set);
        if (r < 0) {
                log_error_errno(r, "cannot block signals: %s", errno_to_string(-r));
                return 1;
        }

        r = webhook_server_start(&cfg, &s);
        if (r < 0) {
                log_error_errno(r, "cannot start the webhook server on %s:%u with %s: %s",
                                cfg.address, (unsigned)cfg.port, cfg.cert_dir, errno_to_string(r));
                return 1;
        }
        log_info("webhook server listening on https://%s:%u" WEBHOOK_PATH " (cert dir %s)",
                 cfg.address, (unsigned)webhook_server_port(s), cfg.cert_dir);

        do
                r = sigwait(&set, &sig);
        while (r == EINTR);
        log_info("signal %d received, stopping the webhook server", r == 0 ? sig : 0);
        return 0;
}
