# SPDX-License-Identifier: Apache-2.0
"""Shared pieces of the torture suite: start a real server process, raw-socket HTTP.

Python 3 standard library only. Servers listen on 127.0.0.1 on a port they pick (port 0), and
print or log it; every loop is bounded and every socket has a timeout.
"""

import json
import os
import re
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time

SERVERS = ("registry", "catalog", "webhook", "controller", "metrics")


def fail(msg):
    print("Bail out! " + msg.replace("\n", " | ")[:2000], flush=True)
    raise SystemExit(1)


def binary():
    b = os.environ.get("MODELPLANE_BIN")
    if not b:
        b = os.path.join(os.environ.get("MODELPLANE_BUILD_ROOT", "build"), "src", "cmd", "modelplane")
    b = os.path.abspath(b)
    if not os.access(b, os.X_OK):
        fail("no modelplane binary at " + b)
    return b


def raise_nofile(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        new = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def _low_nofile():
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))


class Server:
    """One real server process; .port is its HTTP(S) port, .tls whether it speaks TLS."""

    def __init__(self, kind, extra_args=()):
        self.kind = kind
        self.tmp = tempfile.mkdtemp(prefix="torture-" + kind + "-")
        self.tls = kind == "webhook"
        self.log_path = os.path.join(self.tmp, "server.log")
        self.ca = None
        b = binary()
        if kind == "registry":
            argv = [b, "registry", "-n", "127.0.0.1", "-p", "0", "-d", os.path.join(self.tmp, "r.db")]
            argv += list(extra_args)  # a later -d (a PostgreSQL DSN) wins
            pat = re.compile(r"^listening on 127\.0\.0\.1:(\d+)$", re.M)
        elif kind == "catalog":
            src = os.path.join(self.tmp, "sources.yaml")
            with open(src, "w") as f:
                f.write("model_catalogs:\n  - {id: s, name: S, type: yaml, "
                        "properties: {yamlCatalogPath: models.yaml}}\n")
            with open(os.path.join(self.tmp, "models.yaml"), "w") as f:
                f.write("source: s\nmodels:\n  - name: org/model-1\n    description: one\n")
            argv = [b, "catalog", "--listen", "127.0.0.1:0", "--catalogs-path", src]
            pat = re.compile(r"^listening on 127\.0\.0\.1:(\d+)$", re.M)
        elif kind == "webhook":
            gen = os.environ.get("WEBHOOK_GEN_CERTS")
            if not gen:
                gen = os.path.join(os.environ.get("MODELPLANE_SOURCE_ROOT", "."), "tests", "webhook", "gen-certs.sh")
            certs = os.path.join(self.tmp, "certs")
            subprocess.run([gen, certs, "tls", "1001"], check=True)
            self.ca = os.path.join(certs, "ca.crt")
            argv = [b, "webhook", "--webhook-port", "0", "--webhook-bind-address", "127.0.0.1",
                    "--webhook-cert-dir", certs, "--log-format", "text"]
            pat = re.compile(r"listening on https://127\.0\.0\.1:(\d+)")
        elif kind in ("controller", "metrics"):
            # The probe/metrics listeners start before the first list; an unreachable API server
            # only makes the informers retry, which is all this suite needs.
            kc = os.path.join(self.tmp, "kubeconfig")
            with open(kc, "w") as f:
                f.write("apiVersion: v1\nkind: Config\n"
                        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                        "users: [{name: u, user: {token: x}}]\n"
                        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
                        "current-context: c\n")
            argv = [b, "controller", "--kubeconfig", kc, "--health-probe-bind-address", "127.0.0.1:0",
                    "--metrics-bind-address", "127.0.0.1:0", "--log-format", "text"]
            pat = re.compile(r"Serving health probes on port (\d+)")
        else:
            fail("unknown server " + kind)
        self.log = open(self.log_path, "w+")
        # A soft descriptor limit of 1024, as most shells and container runtimes hand out: the
        # server must raise its own to hold thousands of connections.
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, cwd=self.tmp,
                                     preexec_fn=_low_nofile)
        deadline = time.monotonic() + 60
        self.port = None
        while time.monotonic() < deadline:
            with open(self.log_path) as f:
                text = f.read()
            m = pat.search(text)
            if m:
                self.port = int(m.group(1))
                if kind in ("controller", "metrics"):
                    m2 = re.search(r"Serving metrics on port (\d+)", text)
                    if not m2:
                        continue
                    self.metrics_port = int(m2.group(1))
                    if kind == "metrics":  # the same process, its metrics listener
                        self.probe_port, self.port = self.port, self.metrics_port
                break
            if self.proc.poll() is not None:
                fail("%s exited at start (%d):\n%s" % (kind, self.proc.returncode, text))
            time.sleep(0.05)
        if self.port is None:
            self.stop()
            fail(kind + " did not report a port within 60 s")

    def path(self):
        """A path every server answers with 200 to a GET."""
        return {
            "registry": "/api/model_registry/v1alpha3/registered_models",
            "catalog": "/api/model_catalog/v1alpha1/sources",
            "webhook": "/validate-trainedmodel",  # GET: 405, a handler's answer
            "controller": "/healthz",
            "metrics": "/metrics",
        }[self.kind]

    def get_status(self):
        """What a GET of path() answers."""
        return 405 if self.kind == "webhook" else 200

    def resource_path(self):
        """A path with an id segment, for the decoding and length cases."""
        return {
            "registry": "/api/model_registry/v1alpha3/registered_models/",
            "catalog": "/api/model_catalog/v1alpha1/sources/",
            "webhook": "/validate-trainedmodel/",
            "controller": "/healthz/",
            "metrics": "/metrics/",
        }[self.kind]

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                fail(self.kind + " did not exit within 30 s of SIGTERM")
        rc = self.proc.returncode
        with open(self.log_path) as f:
            text = f.read()
        shutil.rmtree(self.tmp, ignore_errors=True)
        if rc != 0 or "Sanitizer" in text or "runtime error" in text:
            fail("%s exited %d:\n%s" % (self.kind, rc, text[-4000:]))


def connect(server, source="127.0.0.1", timeout=10.0, port=None):
    s = socket.create_connection(("127.0.0.1", port or server.port), timeout=timeout,
                                 source_address=(source, 0))
    if server.tls and port is None:
        ctx = ssl.create_default_context(cafile=server.ca)
        s = ctx.wrap_socket(s, server_hostname="localhost")
    return s


def _recv_until(s, data, done, limit):
    """Appends what s sends to data until done(data), EOF, an error or limit bytes."""
    while not done(data) and len(data) < limit:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, ssl.SSLError, socket.timeout, BrokenPipeError):
            chunk = b""
        if not chunk:
            break
        data += chunk
    return data


def recv_response(s, limit=4 * 1024 * 1024):
    """Reads one response (headers and a Content-Length body) or up to EOF; returns
    (status or None, headers dict, body bytes)."""
    data = _recv_until(s, b"", lambda d: b"\r\n\r\n" in d, limit)
    if b"\r\n\r\n" not in data:
        return None, {}, data
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
    status = int(m.group(1)) if m else None
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "-1"))
    body = _recv_until(s, body, lambda d: n >= 0 and len(d) >= n, limit)
    return status, headers, body


def exchange(server, raw, timeout=10.0, source="127.0.0.1"):
    """Sends raw bytes on a fresh connection; returns (status, headers, body, seconds)."""
    t0 = time.monotonic()
    s = connect(server, source=source, timeout=timeout)
    try:
        try:
            s.sendall(raw)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            pass
        st, h, b = recv_response(s)
    finally:
        s.close()
    return st, h, b, time.monotonic() - t0


def get(server, target, extra=b"", source="127.0.0.1", timeout=10.0):
    raw = b"GET " + target + b" HTTP/1.1\r\nHost: localhost\r\n" + extra + b"Connection: close\r\n\r\n"
    return exchange(server, raw, timeout=timeout, source=source)


def json_error(body):
    """The documented refusal body: a JSON object with an integer code and a string message."""
    try:
        j = json.loads(body)
    except ValueError:
        return None
    if isinstance(j, dict) and j.get("kind") == "AdmissionReview":
        # the webhook answers in its own protocol: the refusal is response.status
        j = (j.get("response") or {}).get("status")
    if not isinstance(j, dict) or not isinstance(j.get("message"), str):
        return None
    if not isinstance(j.get("code"), (int, str)):
        return None
    return j


# Go's http.StatusText, which upstream's Model Registry and Catalog servers put into "code"
REASONS = {400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           413: "Request Entity Too Large", 414: "URI Too Long",
           431: "Request Header Fields Too Large", 500: "Internal Server Error",
           429: "Too Many Requests", 501: "Not Implemented", 503: "Service Unavailable",
           505: "HTTP Version Not Supported"}


def code_matches(kind, j, status):
    """The error's code follows the server's API: a string (the reason phrase of the status) in
    the Model Registry and Catalog APIs' Error schema, the status as a number (a Kubernetes
    Status) on the webhook and the controller's probes."""
    code = j.get("code")
    if kind in ("registry", "catalog"):
        return isinstance(code, str) and code == REASONS.get(status)
    return isinstance(code, int) and not isinstance(code, bool) and code == status


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, detail=""):
        self.n += 1
        if cond:
            print("ok %d - %s" % (self.n, name), flush=True)
        else:
            self.failed += 1
            print("not ok %d - %s %s" % (self.n, name, detail), flush=True)

    def done(self):
        print("1..%d" % self.n, flush=True)
        return 1 if self.failed else 0
