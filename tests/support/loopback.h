/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The raw-socket side of the tests' scripted HTTP servers on loopback (tests/agent/
 * test-agent-proxy.c, tests/unit/kube/test-kube-client.c): a listening socket on a free port
 * and reading one request off a connection; and the client side of the raw-socket tests of
 * http/ (tests/unit/http/test-server.c, test-engine.c): dialling and sending.
 */
#include <stddef.h>
#include <stdint.h>

/* A listening TCP socket on 127.0.0.1, on a port the kernel picks (*ret_port); asserted. */
int loopback_listen(uint16_t *ret_port);

/* A TCP connection to 127.0.0.1:port; asserted. */
int loopback_dial(uint16_t port);

/* Sends all of the string data on fd (no SIGPIPE); asserted. */
void loopback_send_all(int fd, const char *data);

/*
 * Reads one HTTP/1.1 request from fd into buf (NUL-terminated, size > 1): the head, then a
 * Content-Length body or a chunked body to its last chunk and trailer. Returns its length; the
 * length read so far when buf is full; 0 when the peer closes or recv() fails first.
 */
size_t loopback_read_request(int fd, char *buf, size_t size);

/*
 * Reads from fd into buf (NUL-terminated, size > 1) until it holds needle, waiting at most
 * timeout_ms for each read. Returns the length read; 0 when the peer closes, recv() fails, a
 * wait times out or buf fills before needle has come.
 */
size_t loopback_read_until(int fd, char *buf, size_t size, const char *needle, int timeout_ms);
