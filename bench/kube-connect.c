/* SPDX-License-Identifier: Apache-2.0 */
#include "kube-connect.h"

#include <stdio.h>

int kube_connect(const char *path, struct kube_config **ret_cfg, struct kube_client **ret_client)
{
        struct kube_config_options copts = { .kubeconfig_path = path };
        struct kube_config *cfg = NULL;
        struct kube_client *client = NULL;
        struct error_detail kerr = { 0 };
        int r;

        r = kube_config_load(&copts, &cfg, &kerr);
        if (r < 0) {
                fprintf(stderr, "kubeconfig: %s\n", kerr.message);
                return r;
        }
        r = kube_client_new(cfg, NULL, &client);
        if (r < 0) {
                fprintf(stderr, "kube client: error %d\n", -r);
                kube_config_free(cfg);
                return r;
        }
        *ret_cfg = cfg;
        *ret_client = client;
        return 0;
}
