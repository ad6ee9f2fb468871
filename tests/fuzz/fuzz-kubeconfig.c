/* SPDX-License-Identifier: Apache-2.0 */
/* The kubeconfig parser (json/yaml-doc + our field walk), from memory, file references disabled:
 * every refusal but out-of-memory comes with a message and its own errno. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "kube/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct kube_config *c = NULL;
        struct error_detail err = { 0 };
        int r;

        r = kube__config_parse("fuzz", (const char *)data, size, /* context_override= */ NULL,
                               /* allow_files= */ false, &c, &err);
        if (r >= 0) {
                if (!c || !c->server || !c->namespace)
                        __builtin_trap();
                kube_config_free(c);
        } else if (c || strnlen(err.message, sizeof(err.message)) >= sizeof(err.message) ||
                   (r != -ENOMEM && (!err.message[0] || err.error != r))) {
                __builtin_trap();
        }
        return 0;
}
