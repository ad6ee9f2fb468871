/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Feeding the chunked decoder and the message stream of src/http/http1.c their input in pieces,
 * as bytes arrive from a socket: shared by the unit test (tests/unit/http/test-http1.c) and the
 * fuzz targets (tests/fuzz/fuzz-http1.c, fuzz-agent-proxy.c). No Criterion here: the fuzz
 * targets link it too.
 */
#include <stdbool.h>
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

/*
 * Runs in[0..len) through s (initialised by the caller: requests or responses) as one
 * connection's bytes arriving step at a time (step > 0) into buf (len + 1 bytes), which keeps
 * what was not consumed; when the input has run out and eof is set, the connection closes
 * (http1_stream_eof()). Writes the events to t (at most 4 * len + 16 bytes): 'H' and the target
 * (a response: its code) per head, the body bytes, 'E' per end, 'R' and the status on a refusal,
 * which ends the run. The trace does not depend on how the input was split. Returns its length.
 * Aborts if the stream breaks its contract (consumes more than it was given, or points its data
 * outside what it consumed).
 */
size_t http1_stream_trace(struct http1_stream *s, const char *in, size_t len, size_t step, bool eof,
                          char *buf, char *t);
