/* SPDX-License-Identifier: Apache-2.0 */
/* The kubeconfig parser (libyaml + our field walk), from memory, file references disabled. */
#include <stdint.h>
#include <string.h>

#include "kube/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct kube_config *c = NULL;
        char err[512];
        int r;

        r = kube__config_parse("fuzz", (const char *)data, size, /* context_override= */ NULL,
                               /* allow_files= */ false, &c, err, sizeof(err));
        if (r >= 0) {
                if (!c || !c->server || !c->namespace)
                        __builtin_trap();
                kube_config_free(c);
        } else if (c || strlen(err) >= sizeof(err)) {
                __builtin_trap();
        }
        return 0;
}
