/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Feeding the chunked decoder of src/http/http1.c its input in pieces, as bytes arrive from a
 * socket: shared by the unit test (tests/unit/http/test-http1.c) and the fuzz target
 * (tests/fuzz/fuzz-http1.c). No Criterion here: the fuzz target links it too.
 */
#include <stddef.h>

#include "http/http1.h"

/*
 * Initialises c (default limits) and decodes in[0..len) made available step bytes at a time
 * (step > 0): each call sees the bytes not yet consumed up to the current piece end. Copies the
 * decoded data to out, which must hold len bytes; *ret_out_len is its length and *ret_end how
 * many input bytes the decoder consumed. Returns the last state (HTTP1_NEED_MORE when the input
 * ran out first). Aborts if the decoder breaks its contract (consumes more than it was given, or
 * points its data outside what it consumed), so a unit test crashes and a fuzzer reports it.
 */
enum http1_state http1_chunked_feed_pieces(struct http1_chunked *c, const char *in, size_t len,
                                           size_t step, char *out, size_t *ret_out_len,
                                           size_t *ret_end);
