/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the AdmissionReview decoder and the whole webhook exchange (decode, kind
 * checks, the real TrainedModel rules, encode). Invariants checked beyond "no crash, no leak":
 * every answer is one JSON AdmissionReview ending in a newline, its HTTP status is 200 or 4xx,
 * and a decoded request always has a non-empty uid of bounded length.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "serving/webhook-rules.h"
#include "webhook/admission.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct admission_request req;
        struct admission_answer a = { 0 };
        char err[256];
        json_t *v;

        if (admission_review_decode((const char *)data, size, &req, err, sizeof(err)) == 0) {
                if (!req.uid || req.uid[0] == '\0' || strlen(req.uid) > ADMISSION_UID_MAX ||
                    !req.operation || !req.api_version)
                        abort();
                admission_request_release(&req);
        }

        if (webhook_review("application/json", (const char *)data, size, tm_validate_admission,
                           &a) < 0)
                return 0; /* -ENOMEM only */
        if (!a.body || a.body_len == 0 || a.body[a.body_len - 1] != '\n' ||
            strlen(a.body) != a.body_len)
                abort();
        if (a.http_status != 200 && (a.http_status < 400 || a.http_status > 499))
                abort();
        v = json_loadb(a.body, a.body_len, 0, NULL);
        if (!v || !json_is_object(json_object_get(v, "response")))
                abort();
        json_decref(v);
        admission_answer_release(&a);
        return 0;
}
