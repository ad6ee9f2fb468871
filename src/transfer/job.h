/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The transfer job of `modelplane async-upload` (docs/transfer.md), in upstream's order: the
 * Model Registry client (its address, token and CA as upstream's client finds them; a first
 * GET so that an unreachable registry fails before any download), the intent's checks
 * (update_artifact: the artifact exists and is set PENDING; create_model: no model of that name;
 * create_version: the model exists and has no version of that name), the download (the agent's
 * fetch code) into <storage-path>/model, the ModelCar image (the base image's layers copied or
 * mounted, the model layer, the config and manifest) pushed to the destination, and the
 * registration the intent asks for, with the artifact's uri "oci://<destination uri>" and state
 * LIVE.
 */

#include <jansson.h>
#include <stdbool.h>

#include "transfer/config.h"
#include "transfer/metadata.h"
#include "util/error-detail.h"
#include "util/macro.h"

/* Credentials and settings the command read from files (the shell's part of the config). */
struct transfer_job_inputs {
        const struct transfer_config *config;
        const struct transfer_metadata *metadata; /* NULL: none */
        const char *dockerconfig; /* the destination's dockerconfigjson text or NULL */
        size_t dockerconfig_len;
        const char *registry_token;   /* the Model Registry's token or NULL */
        const char *registry_ca_file; /* a PEM bundle path or NULL */
        const char *platform_arch;    /* the base image's architecture: "amd64" */
};

/*
 * Runs the job. On success *@ret_result is upstream's termination message (a new JSON object:
 * intent and the ids of what was created or updated). Returns 0 or a negative errno with the
 * reason in @e (the step named in the message).
 */
_warn_unused_result_ int transfer_job_run(const struct transfer_job_inputs *in, json_t **ret_result,
                                          struct error_detail *e);
