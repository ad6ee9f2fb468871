/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `modelplane webhook`: the TrainedModel validating admission webhook on its own (HTTPS).
 * `modelplane controller --enable-webhook` runs the same server next to the controller.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"
#include "webhook/server.h"
#include "util/log.h"
#include "util/macro.h"
#include "util/parse-util.h"

static void help(void)
{
        printf("Usage: modelplane webhook [OPTIONS]\n\n"
               "Serve the TrainedModel validating admission webhook over HTTPS (TLS 1.2+) on\n"
               "  POST " WEBHOOK_PATH "\n"
               "  POST " WEBHOOK_PATH_ALIAS "\n\n"
               "Options:\n"
               "  --webhook-port PORT        listen port (default %d; 0 picks a free one, logged)\n"
               "  --webhook-cert-dir DIR     directory with tls.crt and tls.key, re-read when they\n"
               "                             change (default " WEBHOOK_DEFAULT_CERT_DIR ")\n"
               "  --webhook-bind-address IP  listen address (default 0.0.0.0)\n"
               "  --webhook-timeout SEC      idle connection timeout (default 10)\n"
               "  --log-level LEVEL          debug, info, warn, error (default info)\n"
               "  --log-format FORMAT        json or text (default json)\n"
               "  -h, --help                 show this help\n",
               WEBHOOK_DEFAULT_PORT);
}

static int parse_port(const char *s, uint16_t *ret)
{
        uint64_t v;
        int r = safe_atou64(s, &v);

        if (r < 0 || v > 65535)
                return -EINVAL;
        *ret = (uint16_t)v;
        return 0;
}

int cmd_webhook(int argc, char **argv)
{
        enum { OPT_PORT = 0x100, OPT_CERT_DIR, OPT_BIND, OPT_TIMEOUT, OPT_LOG_LEVEL, OPT_LOG_FORMAT };
        static const struct option options[] = {
                { "webhook-port", required_argument, NULL, OPT_PORT },
                { "webhook-cert-dir", required_argument, NULL, OPT_CERT_DIR },
                { "webhook-bind-address", required_argument, NULL, OPT_BIND },
                { "webhook-timeout", required_argument, NULL, OPT_TIMEOUT },
                { "log-level", required_argument, NULL, OPT_LOG_LEVEL },
                { "log-format", required_argument, NULL, OPT_LOG_FORMAT },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        struct webhook_server_config cfg = { WEBHOOK_SERVER_CONFIG_DEFAULTS };
        CLEANUP(webhook_server_freep) struct webhook_server *s = NULL;
        sigset_t set;
        uint64_t v;
        int c, sig, r;

        optind = 1;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case OPT_PORT:
                        if (parse_port(optarg, &cfg.port) < 0) {
                                fprintf(stderr, "modelplane webhook: invalid port '%s'\n", optarg);
                                return 2;
                        }
                        break;
                case OPT_CERT_DIR:
                        cfg.cert_dir = optarg;
                        break;
                case OPT_BIND:
                        cfg.address = optarg;
                        break;
                case OPT_TIMEOUT:
                        if (safe_atou64(optarg, &v) < 0 || v == 0 || v > 3600) {
                                fprintf(stderr, "modelplane webhook: invalid timeout '%s'\n",
                                        optarg);
                                return 2;
                        }
                        cfg.connection_timeout = (unsigned)v;
                        break;
                case OPT_LOG_LEVEL: {
                        enum log_level l = log_level_from_string(optarg);

                        if (l < 0) {
                                fprintf(stderr, "modelplane webhook: invalid log level '%s'\n",
                                        optarg);
                                return 2;
                        }
                        log_set_max_level(l);
                        break;
                }
                case OPT_LOG_FORMAT:
                        if (streq(optarg, "json"))
                                log_set_format(LOG_FORMAT_JSON);
                        else if (streq(optarg, "text"))
                                log_set_format(LOG_FORMAT_TEXT);
                        else {
                                fprintf(stderr, "modelplane webhook: invalid log format '%s'\n",
                                        optarg);
                                return 2;
                        }
                        break;
                case 'h':
                        help();
                        return 0;
                default:
                        return 2;
                }
        if (optind < argc) {
                fprintf(stderr, "modelplane webhook: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }

        /* Block the signals before any thread starts, so that only sigwait() sees them. */
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        r = pthread_sigmask(SIG_BLOCK, &set, NULL);
        if (r != 0) {
                log_error_errno(-r, "cannot block signals: %s", errno_to_string(r));
                return 1;
        }
        (void)signal(SIGPIPE, SIG_IGN);

        r = webhook_server_start(&cfg, &s);
        if (r < 0) {
                log_error_errno(r, "cannot start the webhook server on %s:%u with %s: %s",
                                cfg.address, (unsigned)cfg.port, cfg.cert_dir,
                                errno_to_string(r));
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
