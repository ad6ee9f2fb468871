# SPDX-License-Identifier: Apache-2.0
"""Helpers of the ui integration tests: real servers as subprocesses on loopback port 0, HTTP
calls with every header under control, TAP output. Python standard library only."""
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

BUILD = os.environ.get("MODELPLANE_BUILD_ROOT", "build")
SRC = os.environ.get("MODELPLANE_SOURCE_ROOT", ".")
BIN = os.path.join(BUILD, "src", "cmd", "modelplane")
HANG = 60  # seconds: only to detect a hang, never a speed bound


class Server:
    """A `modelplane SUBCOMMAND` on a free loopback port (it prints "listening on HOST:PORT")."""

    def __init__(self, args, env=None, name=None):
        self.name = name or args[0]
        self.log = tempfile.NamedTemporaryFile(prefix=f"ui-test-{self.name}-", suffix=".log",
                                               delete=False)
        self.proc = subprocess.Popen([BIN] + args, stdout=subprocess.PIPE, stderr=self.log,
                                     env=env, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"{self.name} did not start: {line!r}; log {self.log.name}: "
                               + open(self.log.name).read()[-2000:])
        self.port = int(line.strip().rsplit(":", 1)[1])
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self):
        """SIGTERM, then the exit status, which must be 0 (a sanitizer report makes it not);
        the log is kept only when it is not."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(HANG)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        rc = self.proc.returncode
        if rc != 0:
            raise AssertionError(f"{self.name} exited with {rc}; log {self.log.name}: "
                                 + open(self.log.name).read()[-2000:])
        if os.path.exists(self.log.name):
            os.unlink(self.log.name)
        return rc


def call(port, method, path, body=None, headers=None, raw_body=None, host="127.0.0.1"):
    """Returns (status, headers dict (lower-case names), body bytes, decoded JSON or None)."""
    c = http.client.HTTPConnection(host, port, timeout=HANG)
    h = dict(headers or {})
    data = raw_body
    if body is not None:
        data = json.dumps(body).encode()
        h.setdefault("Content-Type", "application/json")
    c.request(method, path, body=data, headers=h)
    r = c.getresponse()
    raw = r.read()
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    doc = None
    if hdrs.get("content-type", "").startswith("application/json") and raw:
        doc = json.loads(raw)
    return r.status, hdrs, raw, doc


class Skip(Exception):
    """Raised by a test that cannot run here; its message names why (a TAP SKIP, not a pass)."""


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0
        self.cleanups = []

    def run(self, fn):
        self.n += 1
        name = fn.__name__
        try:
            fn()
            print(f"ok {self.n} - {name}", flush=True)
        except Skip as e:
            print(f"ok {self.n} - {name} # SKIP {e}", flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is a test failure
            self.failed += 1
            print(f"not ok {self.n} - {name}: {type(e).__name__}: {e}", flush=True)
            import traceback
            for line in traceback.format_exc().splitlines():
                print("# " + line, flush=True)

    def finish(self):
        for c in reversed(self.cleanups):
            self.n += 1
            try:
                c()
                print(f"ok {self.n} - cleanup {getattr(c, '__qualname__', c)}", flush=True)
            except Exception as e:  # noqa: BLE001
                self.failed += 1
                print(f"not ok {self.n} - cleanup: {e}", flush=True)
        print(f"1..{self.n}", flush=True)
        sys.exit(1 if self.failed else 0)


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def expect_error(res, status, source=None, contains=None):
    st, hdrs, raw, doc = res
    expect(st == status, f"status {st}, want {status}: {raw[:400]!r}")
    expect(doc is not None and "error" in doc, f"not a JSON error body: {raw[:400]!r}")
    err = doc["error"]
    expect(err.get("code") == str(status), f"code {err.get('code')!r}")
    if source:
        expect(err.get("source") == source, f"source {err.get('source')!r}, want {source}")
    if contains:
        expect(contains in err.get("message", ""),
               f"message {err.get('message')!r} lacks {contains!r}")
    return err


def wait_until(fn, what, timeout=HANG):
    end = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)
