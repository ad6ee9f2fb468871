/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-pod model report (serving/report.h), as the controller reads what a pod wrote: the
 * input is models.json's text, the heartbeat and the period, split at NULs. Invariants: every
 * decoded model has a name and a state, the models are sorted by name and each is found by
 * name; what decodes, encodes again and decodes to the same names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serving/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = malloc(size + 3), *beat, *period;
        json_t *obj;
        struct report r;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = text[size + 1] = text[size + 2] = 0;
        beat = text + strlen(text) + 1;
        period = beat + strlen(beat) + 1;
        obj = json_pack("{s:s,s:s,s:s}", REPORT_KEY_MODELS, text, REPORT_KEY_HEARTBEAT, beat,
                        REPORT_KEY_PERIOD, period);
        if (obj && report_data_decode(obj, &r) == 0) {
                for (size_t i = 0; i < r.n; i++) {
                        if (!r.models[i].name || !r.models[i].state)
                                __builtin_trap();
                        if (i > 0 && strcmp(r.models[i - 1].name, r.models[i].name) > 0)
                                __builtin_trap();
                        if (!report_find(&r, r.models[i].name))
                                __builtin_trap();
                }
                if (r.doc) {
                        json_t *again = report_data_encode(r.models, r.n,
                                                           &(struct report_meta){
                                                                   .pod = "pod",
                                                                   .address = r.address,
                                                                   .draining = r.draining,
                                                                   .period_sec = r.period_sec });
                        struct report r2;

                        if (again && report_data_decode(again, &r2) == 0) {
                                if (!r2.doc || r2.n != r.n)
                                        __builtin_trap();
                                for (size_t i = 0; i < r.n; i++)
                                        if (strcmp(r.models[i].name, r2.models[i].name) != 0)
                                                __builtin_trap();
                                report_release(&r2);
                        }
                        json_decref(again);
                }
                report_release(&r);
        }
        json_decref(obj);
        free(text);
        return 0;
}
