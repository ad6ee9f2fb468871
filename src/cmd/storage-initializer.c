/* SPDX-License-Identifier: Apache-2.0 */
/*
 * modelplane storage-initializer SRC DST: KServe's storage initializer contract (an init
 * container run with the storage URI and the model directory as its two arguments), with the
 * agent's download code: s3://, gs://, Azure Blob, hf://, http(s):// (archives extracted
 * safely), pvc://, local paths and model-registry:// (resolved through the Model Registry, as Kubeflow's storage initializer,
 * kubeflow/hub cmd/csi, does; its environment: MODEL_REGISTRY_BASE_URL, MODEL_REGISTRY_SCHEME,
 * ALLOWED_ARTIFACT_URI_PREFIXES). deploy/storage-initializer/ registers it with KServe as a
 * ClusterStorageContainer for model-registry:// URIs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/fetch.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "util/log.h"

struct si_args {
        const char *src, *dst;
};

static int si_set(void *userdata, const struct cli_option *opt, const char *arg, char *err,
                  size_t err_size)
{
        (void)snprintf(err, err_size, "unknown option");
        return -EINVAL;
}

static void si_set_arg(void *userdata, unsigned index, const char *arg)
{
        struct si_args *a = userdata;

        if (index == 0)
                a->src = arg;
        else
                a->dst = arg;
}

static const struct cli_command si_cli = {
        .name = "storage-initializer",
        .synopsis =
                "Downloads the model at SRC (a storage URI) into the directory DST, as KServe's\n"
                "storage initializer does; model-registry://MODEL[/VERSION] is resolved\n"
                "through the Model Registry first.",
        .set = si_set,
        .n_args = 2,
        .args_usage = "SRC DST",
        .set_arg = si_set_arg,
        .epilog =
                "Environment: the agent's storage variables (AWS_*, S3_*, STORAGE_EMULATOR_HOST,\n"
                "GOOGLE_OAUTH_ACCESS_TOKEN, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_*,\n"
                "AZURE_CLIENT_*, HF_ENDPOINT, HF_TOKEN ...; docs/agent.md), MODELPLANE_STALL_TIMEOUT\n"
                "and MODELPLANE_FETCH_ATTEMPTS (defaults 30 s, 4) and, for model-registry://,\n"
                "MODEL_REGISTRY_BASE_URL (host:port or URL, default localhost:8080),\n"
                "MODEL_REGISTRY_SCHEME (default http), ALLOWED_ARTIFACT_URI_PREFIXES (comma list)\n"
                "and MODEL_REGISTRY_TOKEN.\n",
};

/* DST exists (made when missing) and is an empty directory. */
static int prepare_dst(const char *dst)
{
        struct stat st;

        if (mkdir(dst, 0755) < 0 && errno != EEXIST) {
                log_error_errno(-errno, "storage-initializer: cannot create %s", dst);
                return -1;
        }
        if (stat(dst, &st) < 0 || !S_ISDIR(st.st_mode)) {
                log_error("storage-initializer: %s is not a directory", dst);
                return -1;
        }
        return 0;
}

int cmd_storage_initializer(int argc, char **argv)
{
        struct si_args a = { 0 };
        struct fetch_config fc;
        char err[2048] = "";
        int r;

        r = cli_parse(&si_cli, argc, argv, &a);
        if (r != 0)
                return cli_exit_status(r);
        if (prepare_dst(a.dst) < 0)
                return 1;
        r = fetch_config_from_env(&fc);
        if (r < 0) {
                log_error_errno(r, "storage-initializer: cannot read the storage configuration");
                return 1;
        }
        log_info("storage-initializer: downloading %s into %s", a.src, a.dst);
        fetch_thread_keep(); /* one connection for a prefix's objects */
        r = fetch_model(&fc, a.src, a.dst, err, sizeof(err));
        fetch_thread_release();
        fetch_config_release(&fc);
        if (r < 0) {
                /* nothing half-written stays behind for the model server to load */
                int e = fetch_empty_dir(a.dst);

                if (e < 0)
                        log_warn_errno(e, "storage-initializer: cannot empty %s", a.dst);
                log_error("storage-initializer: %s", err[0] ? err : errno_to_string(r));
                return 1;
        }
        log_info("storage-initializer: %s is in %s", a.src, a.dst);
        return 0;
}
