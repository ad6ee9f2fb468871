/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane: one executable, several subcommands (controller, registry, catalog ...).
 * Each subcommand owns its argument parsing and wiring in src/cmd/<name>.c.
 */
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "cmd/commands.h"
#include "config.h"
#include "util/macro.h"

struct command {
        const char *name;
        int (*fn)(int argc, char **argv);
        const char *summary;
};

static const struct command commands[] = {
        { "controller", cmd_controller, "run the TrainedModel controller manager" },
        { "version", cmd_version, "print the version" },
        { "registry", cmd_registry, "serve the Model Registry REST API (SQLite or PostgreSQL)" },
        { "webhook", cmd_webhook, "serve the TrainedModel admission webhook (HTTPS)" },
        { "catalog", cmd_catalog, "serve the Kubeflow model catalog API from YAML sources" },
        { "agent", cmd_agent, "the model agent of a multi-model serving pod (KServe drop-in)" },
        { "ui", cmd_ui, "serve the web console and its API (registry, catalog, deployments)" },
        { "storage-initializer", cmd_storage_initializer,
          "download a model (s3, gs, http, pvc, model-registry://) into a directory" },
        { "async-upload", cmd_async_upload,
          "the Model Registry's transfer job: a model to a ModelCar image, registered" },
};

int cmd_version(int argc, char **argv)
{
        (void)argc;
        (void)argv;
        printf("modelplane %s\n", MODELPLANE_VERSION);
        return 0;
}

static void usage(FILE *f)
{
        fprintf(f, "Usage: modelplane COMMAND [OPTIONS]\n\nCommands:\n");
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
        fprintf(f, "\nRun 'modelplane COMMAND --help' for the options of a command.\n");
}

int main(int argc, char **argv)
{
        int r;

        if (argc < 2) {
                usage(stderr);
                return 2;
        }
        if (streq(argv[1], "--help") || streq(argv[1], "-h") || streq(argv[1], "help")) {
                usage(stdout);
                return 0;
        }
        if (streq(argv[1], "--version"))
                return cmd_version(argc - 1, argv + 1);

        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (streq(commands[i].name, argv[1])) {
                        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                                fprintf(stderr, "modelplane: failed to initialise libcurl\n");
                                return 1;
                        }
                        r = commands[i].fn(argc - 1, argv + 1);
                        curl_global_cleanup();
                        return r;
                }
        fprintf(stderr, "modelplane: unknown command '%s'\n\n", argv[1]);
        usage(stderr);
        return 2;
}
