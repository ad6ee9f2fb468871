/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Model transfer jobs (ui/transfer.h): the input is a JSON document. As a request's "data" it is
 * read and checked; a valid one is built into its ConfigMap, Secrets and Job (the registry's
 * address from the member "registryUrl", else a fixed one) and the Job is read back as a view,
 * which must never carry the request's credentials. As a Kubernetes object it is read as a Job
 * (view, status, the names it owns; its member "pods" as the job's pods), a pod (its failure), an Event, and the old job of a retry.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "ui/transfer.h"

static void built(struct ui_transfer_req *q, const char *url)
{
        static const struct ui_transfer_names names = { "cm", "src", "dst" };
        struct ui_transfer_target t = { .registry_name = "mr",
                                        .registry_url = url ? url : "http://10.0.0.1:8080",
                                        .image = "modelplane:latest" };
        struct error_detail err = { 0 };
        json_t *job = NULL, *view;

        json_decref(ui_transfer_configmap(q, "id"));
        json_decref(ui_transfer_source_secret(q, "id"));
        json_decref(ui_transfer_dest_secret(q, "id"));
        if (ui_transfer_job(q, "id", &names, &t, &job, &err) < 0)
                return;
        view = ui_transfer_view(job);
        /* no credential member in the view, whatever the request held */
        if (view && (json_object_get(json_object_get(view, "destination"), "password") ||
                     json_object_get(json_object_get(view, "destination"), "username") ||
                     json_object_get(json_object_get(view, "source"), "awsAccessKeyId") ||
                     json_object_get(json_object_get(view, "source"), "awsSecretAccessKey")))
                abort();
        json_decref(view);
        json_decref(ui_transfer_owner_patch(job));
        json_decref(job);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct ui_transfer_req q = { 0 }, retry = { 0 };
        struct error_detail err = { 0 };
        json_t *v = NULL, *view;
        char msg[256];

        if (json_parse_bounded((const char *)data, size, &v, NULL) < 0)
                return 0;
        if (json_is_object(v) && ui_transfer_req_read(v, &q, &err) >= 0 &&
            ui_transfer_validate(&q, false, &err) >= 0)
                built(&q, json_string_value(json_object_get(v, "registryUrl")));
        ui_transfer_req_done(&q);

        view = ui_transfer_view(v);
        if (view && ui_transfer_view_pods(view, json_object_get(v, "pods")) < 0)
                abort(); /* only on OOM, which libFuzzer does not inject */
        json_decref(view);
        (void)ui_transfer_status_of(v, NULL);
        (void)ui_transfer_names_of(v);
        (void)ui_transfer_job_of(v, "mr");
        (void)ui_transfer_pod_error(v, msg, sizeof(msg));
        json_decref(ui_transfer_event_view(v));
        if (json_is_object(v) && ui_transfer_req_read(v, &retry, &err) >= 0 &&
            ui_transfer_retry_fill(&retry, "old", v, json_object_get(v, "data"), &err) >= 0 &&
            ui_transfer_retry_source_creds(&retry, json_object_get(v, "secretData")) >= 0)
                if (ui_transfer_validate(&retry, true, &err) >= 0 && !retry.dest_registry)
                        abort(); /* a valid oci destination always names its registry */
        ui_transfer_req_done(&retry);
        json_decref(v);
        return 0;
}
