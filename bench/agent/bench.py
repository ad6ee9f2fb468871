#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/agent: `modelplane agent` side by side with KServe v0.20.0's own agent (printed, never
asserted).

Both agents run in the same run on the same machine, measured in alternating turns (one sample
of one, then one of the other, the first of each pair alternating), each with its own config
dir, model dir and fake model server:

* propagation at 20, 100 and 1,000 models: models.json rewritten kubelet-style (AtomicWriter's
  ..data swap), one model per swap; time from the swap to the load call (create, storageUri
  change) or the unload call (delete) at the fake model server, p50/p99;
* start-up with 100 and 1,000 models: agent started with a models.json of N -> all N load calls;
* restart with 100 and 1,000 models on disk: SIGKILL, models.json changed while it is down (one
  added, one storageUri changed, one deleted), started again -> all three acted on; the load,
  unload and download calls it made, so re-downloads and reloads of unchanged models show; then
  one create;
* RSS idle and with N models;
* the machine's load average over each row.

The fake model server is a minimal loopback endpoint in this script: the V2 repository API
(`POST /v2/repository/index`, `.../models/<name>/load`, `.../unload`, answered 200 at once) and
the models themselves (`GET /src/<name>/<version>/model.bin`, 1 KiB). KServe's agent reads no
local files (its storage is s3://, gs://, http(s)://), so both agents fetch over http:// from
this server. KServe's agent calls `http://localhost:8080/v2/repository/models/<name>/load`, a
URL it hard-codes; so each agent runs in a network namespace of its own (unshare(CLONE_NEWNET),
root only) with its fake server on port 8080 of that namespace's loopback. Without one, KServe's
agent runs only when 127.0.0.1:8080 is free. The figures are the agents' own work (watch, parse,
plan, download over loopback, load call), not a model server's load time. The server answers
with TCP_NODELAY (else Nagle holds each body for the client's 40 ms delayed ACK on a kept-alive
connection) and a listen backlog of 1,024 (KServe's agent opens a connection per model at once).

When an agent misses a sample's deadline (--timeout) or exits, the row records it with its last
log line; it is replaced by a new agent on an empty volume, brought to the current models.json in
batches, before the next phase.

KServe's agent is built from Go modules by bench/peers/kserve-agent/build (first time: minutes).

Usage (as root): bench/agent/bench.py [--build DIR] [--sizes 20,100,1000] [--startup 100,1000]
            [--restart 100,1000] [--samples 100] [--timeout 20] [--kserve BIN | --no-kserve]
            [--keep] [--kube]
"""
import argparse
import collections
import concurrent.futures
import ctypes
import fcntl
import http.server
import json
import math
import os
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..")
sys.path.insert(0, os.path.join(root, "tests", "agent"))
from agentlib import (ConfigDir, controller_kubeconfig, free_port, kubectl, ready_isvc,  # noqa: E402
                      sa_kubeconfig, trained_model)
import ssl  # noqa: E402
import urllib.request  # noqa: E402


def int_list(s):
    return [int(x) for x in s.split(",") if x]


ap = argparse.ArgumentParser()
ap.add_argument("--build", default=os.path.join(root, "build"))
ap.add_argument("--sizes", type=int_list, default=[20, 100, 1000],
                help="propagation at these numbers of models (comma-separated)")
ap.add_argument("--startup", type=int_list, default=[100, 1000],
                help="start-up with these numbers of models")
ap.add_argument("--restart", type=int_list, default=[100, 1000],
                help="restart with these numbers of models on disk")
ap.add_argument("--samples", type=int, default=100,
                help="measured creates, changes and deletes per size (at most the size)")
ap.add_argument("--timeout", type=float, default=20, help="deadline of one sample, seconds")
ap.add_argument("--startup-timeout", type=float, default=300)
ap.add_argument("--kserve", help="KServe's agent binary (default: bench/peers/kserve-agent/build)")
ap.add_argument("--keep", action="store_true", help="keep the work dir (the agents' logs)")
ap.add_argument("--no-kserve", action="store_true", help="modelplane's agent only")
ap.add_argument("--kube", action="store_true",
                help="also the API path (TrainedModel create -> load call), modelplane only: run under "
                     "MODELPLANE_TESTENV_ARGS='--crds deploy/crds' scripts/with-testenv")
args = ap.parse_args()
BIN = os.path.join(args.build, "src", "cmd", "modelplane")
MP, KS = "modelplane", "KServe"
FILL_BATCH = 100  # models per swap while filling (KServe's watcher channel holds 100 events)

# ---------------------------------------------------------------------------------------------
# network namespaces: one per agent, so each has its own localhost:8080


def enter_netns():
    """Moves the calling thread (only it: namespaces are per thread) into a new network namespace
    with its loopback up. Processes it starts are in that namespace too."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x40000000) != 0:  # CLONE_NEWNET
        e = ctypes.get_errno()
        raise OSError(e, "unshare(CLONE_NEWNET): " + os.strerror(e))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        # struct ifreq: name[16], flags (short); SIOCSIFFLAGS, IFF_UP | IFF_LOOPBACK | IFF_RUNNING
        fcntl.ioctl(s, 0x8914, struct.pack("16sh22x", b"lo", 0x1 | 0x8 | 0x40))


class V4Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # KServe's agent opens a connection per model at once (MLServer: 2048)

    def handle_error(self, request, client_address):
        pass  # a connection cut by an agent's SIGKILL


class DualStackServer(V4Server):
    """[::]:port accepting IPv4 too: `localhost` may resolve to ::1 or 127.0.0.1."""
    address_family = socket.AF_INET6

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


# ---------------------------------------------------------------------------------------------
# the fake model server: repository API and model files, recording every call


class Repo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # the headers and the body go out in two writes: without TCP_NODELAY, Nagle holds the body
    # until the client's delayed ACK (40 ms) on a kept-alive connection
    disable_nagle_algorithm = True

    def log_message(self, *a):
        pass

    def reply(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        t = time.monotonic()
        parts = self.path.strip("/").split("/")
        if len(parts) == 4 and parts[0] == "src":
            self.server.side.record(parts[1], "get", t)
            return self.reply(200, b"x" * 1024, "application/octet-stream")
        self.reply(404, b"{}")

    def do_POST(self):
        t = time.monotonic()
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        side = self.server.side
        parts = self.path.strip("/").split("/")
        if self.path == "/v2/repository/index":
            return self.reply(200, json.dumps(side.index()).encode())
        if len(parts) == 5 and parts[:3] == ["v2", "repository", "models"] and parts[4] in ("load", "unload"):
            side.record(parts[3], parts[4], t)
            return self.reply(200, b"{}")
        self.reply(404, b"{}")


# ---------------------------------------------------------------------------------------------
# one agent, its namespace, fake server and directories


class Side:
    def __init__(self, name, work, binary, netns=True):
        self.name, self.work, self.binary = name, work, binary
        self.cond = threading.Condition()
        self.events = collections.defaultdict(list)  # model -> [(op, t)]
        self.loaded = set()
        self.proc = self.cfg = None
        self.log_path = None
        self.runs = 0
        self.unavailable = None
        self.ns = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=f"ns-{name}")
        self.netns = netns and self.in_ns(self.try_netns)
        if self.netns:
            port, cls, host = 8080, DualStackServer, "::"
        elif name == KS:
            port, cls, host = 8080, V4Server, "127.0.0.1"
        else:
            port, cls, host = free_port(), V4Server, "127.0.0.1"
        try:
            self.srv = self.in_ns(lambda: cls((host, port), Repo))
        except OSError as e:
            self.unavailable = (f"not run: no network namespace ({self.netns_error}) and "
                                f"127.0.0.1:{port} is taken ({e.strerror})")
            return
        self.srv.side = self
        self.port = port
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def in_ns(self, fn):
        return self.ns.submit(fn).result()

    def try_netns(self):
        try:
            enter_netns()
            return True
        except OSError as e:
            self.netns_error = str(e)
            return False

    # the fake server's side
    def record(self, model, op, t):
        with self.cond:
            self.events[model].append((op, t))
            if op == "load":
                self.loaded.add(model)
            elif op == "unload":
                self.loaded.discard(model)
            self.cond.notify_all()

    def index(self):
        with self.cond:
            return [{"name": m, "state": "READY"} for m in self.loaded]

    def uri(self, model, version=1):
        return f"http://127.0.0.1:{self.port}/src/{model}/v{version}/model.bin"

    # the bench's side
    def first(self, model, op, after):
        for o, t in self.events.get(model, ()):
            if o == op and t >= after:
                return t
        return None

    def wait_for(self, pred, timeout):
        """Waits until @pred (checked on every call and twice a second: an exit sends none)."""
        end = time.monotonic() + timeout
        with self.cond:
            while not pred():
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(min(left, 0.5))
            return True

    def count(self, op, after):
        with self.cond:
            return sum(1 for ev in self.events.values() for o, t in ev if o == op and t >= after)

    def fresh(self, tag, entries=()):
        """New model and config dirs (an empty volume), a model server with nothing loaded."""
        self.kill()
        d = os.path.join(self.work, f"{self.name}-{tag}")
        self.cfg_dir, self.model_dir = os.path.join(d, "cfg"), os.path.join(d, "models")
        os.makedirs(self.cfg_dir)
        os.makedirs(self.model_dir)
        self.cfg = ConfigDir(self.cfg_dir)
        self.entries = list(entries)
        self.cfg.write(self.entries)
        with self.cond:
            self.events.clear()
            self.loaded.clear()

    def write(self, entries):
        self.entries = list(entries)
        return self.cfg.write(self.entries)

    def argv(self):
        if self.name == MP:
            return [self.binary, "agent", "--enable-puller", "--config-dir", self.cfg_dir, "--model-dir",
                    self.model_dir, "--port", str(9081 if self.netns else free_port()), "--listen-address",
                    "127.0.0.1", "--model-server-url", f"http://127.0.0.1:{self.port}", "--api-watch", "off"]
        return [self.binary, "--enable-puller", "--config-dir", self.cfg_dir, "--model-dir", self.model_dir,
                "--port", str(9081 if self.netns else free_port())]

    def start(self):
        """Starts the agent; returns the time just before the exec."""
        self.runs += 1
        self.log_path = os.path.join(self.work, f"{self.name}-{self.runs}.log")
        env = dict(os.environ, SERVING_READINESS_PROBE="")  # KServe's agent requires it set
        log = open(self.log_path, "w")
        t = time.monotonic()
        self.proc = self.in_ns(lambda: subprocess.Popen(self.argv(), stdout=log, stderr=subprocess.STDOUT,
                                                        stdin=subprocess.DEVNULL, env=env))
        log.close()
        return t

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        if self.proc:
            self.proc.wait()
        self.proc = None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def rss_mib(self, field="VmRSS"):
        try:
            for line in open(f"/proc/{self.proc.pid}/status"):
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
        except (OSError, AttributeError):
            pass
        return None

    def why(self, about=None):
        """How it failed: its exit and the log line that says so, or its last log line (the last
        one naming @about, when given)."""
        state = (f"exited with {self.proc.returncode}" if self.proc and self.proc.poll() is not None
                 else "still running")
        try:
            lines = [ln.strip() for ln in open(self.log_path, errors="replace") if ln.strip()]
        except OSError:
            lines = []
        fatal = [ln for ln in lines if ln.startswith(("fatal error", "panic:"))]
        named = [ln for ln in lines if about and about in ln]
        line = fatal[0] if fatal else named[-1] if named else lines[-1] if lines else ""
        try:
            j = json.loads(line)
            line = j.get("message") or j.get("msg") or line  # KServe's zap, modelplane's log
        except (ValueError, AttributeError):
            pass
        return f"{state}; log: \"{line[:160]}\""

    def settle(self, quiet=2.0, limit=60):
        """Waits until no call has arrived for @quiet seconds (at most @limit)."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            with self.cond:
                last = max((t for ev in self.events.values() for _, t in ev), default=0)
            if time.monotonic() - last >= quiet:
                return
            time.sleep(0.2)


# ---------------------------------------------------------------------------------------------
# figures


class LoadSampler:
    """The 1-minute load average every second; a row's figure is its mean over the row."""

    def __init__(self):
        self.samples = []
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            self.samples.append((time.monotonic(), os.getloadavg()[0]))
            time.sleep(1)

    def mean(self, t0, t1):
        xs = [v for t, v in self.samples if t0 <= t <= t1]
        return statistics.mean(xs) if xs else os.getloadavg()[0]


LOAD = LoadSampler()
ROWS = []  # (figure, {side: (value for the table, number for the ratio)}, load average)


def row(figure, values, t0):
    ROWS.append((figure, values, LOAD.mean(t0, time.monotonic())))
    mp, ks = values.get(MP, ("—", None)), values.get(KS, ("—", None))
    print(f"  {figure}: {MP} {mp[0]} | {KS} {ks[0]}", flush=True)


def pct(xs, p):
    xs = sorted(xs)
    return xs[max(0, math.ceil(p / 100 * len(xs)) - 1)]


def ms(x):
    # a tenth of a millisecond below 10 ms: at 20 models both agents act within a few ms
    if x < 0.01:
        return f"{x * 1000:.1f} ms"
    return f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s"


def lat_value(lat, failure, n):
    if not lat:
        return (f"no sample: {failure}", None), (f"no sample: {failure}", None)
    if failure:  # no ratio of a part of the samples
        note = f" ({len(lat)}/{n}; then {failure})"
        return (ms(pct(lat, 50)) + note, None), (ms(pct(lat, 99)) + note, None)
    return (ms(pct(lat, 50)), pct(lat, 50)), (ms(pct(lat, 99)), pct(lat, 99))


def mib(side):
    v, a = side.rss_mib(), side.rss_mib("RssAnon")
    return (f"{v:.1f} MiB (anonymous {a:.1f})", v) if v is not None else (f"not running: {side.why()}", None)


# ---------------------------------------------------------------------------------------------
# scenarios


def measure_one(side, change, model, op):
    """Writes models.json with @change applied to it; the time until @op for @model."""
    entries = change(side)
    t0 = side.write(entries)
    ok = side.wait_for(lambda: side.first(model, op, t0) is not None or not side.alive(), args.timeout)
    t = side.first(model, op, t0)
    return (t - t0) if ok and t is not None else None


def phase(sides, what, models, change, op, size, expected_loads):
    """One sample per model, the two agents in turn; p50/p99 rows and the extra calls."""
    lat = {s.name: [] for s in sides}
    failure = {s.name: None for s in sides}
    start = {s.name: time.monotonic() for s in sides}
    t0 = time.monotonic()
    for i, model in enumerate(models):
        for s in (sides if i % 2 == 0 else sides[::-1]):
            if failure[s.name]:
                continue
            t_before = time.monotonic()
            d = measure_one(s, lambda s: change(s, model), model, op)
            if d is None:
                early = s.first(model, op, t_before)
                failure[s.name] = (f"#{i + 1} got no {op} call within {args.timeout:.0f} s: {s.why()}"
                                   if early is None else
                                   f"#{i + 1}: its {op} call was stamped before the swap's time")
            else:
                lat[s.name].append(d)
    p50, p99, extra = {}, {}, {}
    for s in sides:
        p50[s.name], p99[s.name] = lat_value(lat[s.name], failure[s.name], len(models))
        n = s.count("load", start[s.name]) - (expected_loads if not failure[s.name] else len(lat[s.name]))
        extra[s.name] = (f"{max(n, 0)}", None)
    row(f"{what}, {size} models: p50", p50, t0)
    row(f"{what}, {size} models: p99", p99, t0)
    row(f"{what}, {size} models: load calls beyond one per {what.split()[0]}", extra, t0)
    for s in sides:
        if failure[s.name]:
            replace_stuck(s)


def replace_stuck(side):
    """A new agent on an empty volume, brought to the current models.json as fill() does: a
    restart on the same volume would measure the restart instead (see restart_test)."""
    print(f"  ({side.name} replaced by a new one on an empty volume after: {side.why()})", flush=True)
    entries = side.entries
    side.fresh(f"again{side.runs}")
    side.start()
    time.sleep(2)
    fill([side], [n for n, _ in entries], dict(entries))
    side.settle()


def fill(sides, names, uris=None):
    """Adds @names in batches (not measured), both agents, waiting for every load call."""
    for b in range(0, len(names), FILL_BATCH):
        batch = names[b:b + FILL_BATCH]
        for s in sides:
            t0 = s.write(s.entries + [(n, uris[n] if uris else s.uri(n)) for n in batch])
            if not s.wait_for(lambda: all(s.first(n, "load", t0) for n in batch) or not s.alive(), 120):
                print(f"  ({s.name} fill did not complete: {s.why()})", flush=True)


def restart_test(sides, size):
    """SIGKILL; models.json changed while down (r-add added, r-chg changed, r-del deleted); start;
    the time until all three are acted on, and every call it made until it is quiet."""
    t0 = time.monotonic()
    took, calls = {}, {}
    for s in sides:
        s.kill()
        s.write([(n, s.uri(n, 2) if n == "r-chg" else u) for n, u in s.entries if n != "r-del"] +
                [("r-add", s.uri("r-add"))])
        ts = s.start()
        want = (("r-add", "load"), ("r-chg", "load"), ("r-del", "unload"))
        # done, exited, or quiet for 15 s (nothing more is coming)
        ok = s.wait_for(lambda: all(s.first(m, op, ts) for m, op in want) or not s.alive() or
                        time.monotonic() - max([ts] + [t for ev in s.events.values() for _, t in ev]) > 15,
                        args.startup_timeout)
        missing = [(m, op) for m, op in want if not s.first(m, op, ts)]
        if ok and s.alive() and not missing:
            d = max(s.first(m, op, ts) for m, op in want) - ts
            took[s.name] = (ms(d), d)
        else:
            m, op = missing[0] if missing else ("", "")
            took[s.name] = (f"never: no {op} call for {m}; " + s.why(about=m), None)
        s.settle()
        calls[s.name] = (f"{s.count('load', ts)} loads, {s.count('unload', ts)} unloads, "
                         f"{s.count('get', ts)} downloads", None)
    row(f"restart with {size} models on disk (1 added, 1 changed, 1 deleted while down) -> in sync",
        took, t0)
    row(f"restart with {size} models on disk: calls (needed: 2 loads, 1 unload, 2 downloads)", calls, t0)
    t0 = time.monotonic()
    after = {}
    for s in sides:
        d = measure_one(s, lambda s: s.entries + [("r-new", s.uri("r-new"))], "r-new", "load")
        after[s.name] = (ms(d), d) if d is not None else (f"no load call within {args.timeout:.0f} s: {s.why()}",
                                                          None)
    row("then one create (swap -> load call)", after, t0)


def restart(sides, size):
    print(f"restart with {size} models on disk", flush=True)
    for s in sides:
        s.fresh(f"restart{size}")
        s.start()
    time.sleep(2)  # KServe's agent misses a swap before its fsnotify watch is added
    fill(sides, [f"d{i:05d}" for i in range(size - 2)] + ["r-chg", "r-del"])
    for s in sides:
        s.settle()
    restart_test(sides, size)
    for s in sides:
        s.kill()


def propagation(sides, size):
    k = min(size, args.samples)
    print(f"propagation at {size} models ({k} samples each)", flush=True)
    for s in sides:
        s.fresh(f"prop{size}")
        s.start()
    time.sleep(2)
    if size == args.sizes[0]:
        row("RSS idle (puller on, empty models.json)", {s.name: mib(s) for s in sides}, time.monotonic())
    fill(sides, [f"f{i:05d}" for i in range(size - k)])
    measured = [f"p{i:05d}" for i in range(k)]
    phase(sides, "create (..data swap -> load call)", measured,
          lambda s, m: s.entries + [(m, s.uri(m))], "load", size, k)
    time.sleep(1)
    row(f"RSS with {size} models", {s.name: mib(s) for s in sides}, time.monotonic())
    phase(sides, "change of storageUri (swap -> load call)", measured,
          lambda s, m: [(n, s.uri(n, 3) if n == m else u) for n, u in s.entries], "load", size, k)
    phase(sides, "delete (swap -> unload call)", measured,
          lambda s, m: [(n, u) for n, u in s.entries if n != m], "unload", size, 0)
    for s in sides:
        s.kill()


def startup(sides, size, turn):
    print(f"start-up with {size} models", flush=True)
    t0 = time.monotonic()
    took, rss = {}, {}
    for s in (sides if turn % 2 == 0 else sides[::-1]):
        names = [f"s{i:05d}" for i in range(size)]
        s.fresh(f"start{size}", [(n, s.uri(n)) for n in names])
        ts = s.start()
        ok = s.wait_for(lambda: all(s.first(n, "load", ts) for n in names) or not s.alive(),
                        args.startup_timeout)
        if ok and s.alive():
            d = max(s.first(n, "load", ts) for n in names) - ts
            took[s.name] = (ms(d), d)
            time.sleep(1)
            rss[s.name] = mib(s)
        else:
            n = sum(1 for m in names if s.first(m, "load", ts))
            took[s.name] = (f"{n}/{size} loaded, then {s.why()}", None)
            rss[s.name] = ("—", None)
        s.kill()
    row(f"start-up with {size} models in models.json -> all load calls", took, t0)
    row(f"RSS after start-up with {size} models", rss, t0)


def kserve_binary():
    if args.kserve:
        return args.kserve, None
    r = subprocess.run([os.path.join(root, "bench", "peers", "kserve-agent", "build")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return None, "not built: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    return r.stdout.strip(), None


def print_table():
    print("\n| figure | modelplane agent | KServe v0.20.0 agent | KServe / modelplane | load average |")
    print("|---|---|---|---|---|")
    for figure, v, load in ROWS:
        mp, ks = v.get(MP, ("—", None)), v.get(KS, ("—", None))
        ratio = f"{ks[1] / mp[1]:.1f}" if mp[1] and ks[1] is not None else "—"
        print(f"| {figure} | {mp[0]} | {ks[0]} | {ratio} | {load:.1f} |")


def main():
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))  # the agents are killed on the way out
    work = tempfile.mkdtemp(prefix="mp-agent-bench-")
    sides = []
    try:
        sides.append(Side(MP, work, BIN))
        if not args.no_kserve:
            binary, err = kserve_binary()
            ks = Side(KS, work, binary) if binary else None
            err = err or (ks.unavailable if ks else None)
            if err:
                print(f"KServe's agent: {err}", flush=True)
            else:
                sides.append(ks)
        t0 = time.monotonic()
        print(f"network namespaces: {', '.join(f'{s.name} {s.netns}' for s in sides)}; "
              f"load average at start {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})", flush=True)
        for size in args.sizes:
            propagation(sides, size)
        for turn, size in enumerate(args.startup):
            startup(sides, size, turn)
        for size in args.restart:
            restart(sides, size)
        for s in sides:
            s.kill()
        print_table()
        print(f"\nmachine load average over the run: {LOAD.mean(t0, time.monotonic()):.2f} "
              f"(1-minute, sampled each second; {os.cpu_count()} cores), now {os.getloadavg()}")
        if args.kube:
            kube_propagation(work)
    finally:
        for s in sides:
            s.kill()
        if args.keep:
            print(f"work dir and logs kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def kube_propagation(work):
    """TrainedModel create (API answer) -> the agent's load call, through the real controller
    (models.json in the ConfigMap) and the agent's ConfigMap watch; one model at a time. In the
    host's network namespace, where the API server is."""
    side = Side(MP, work, BIN, netns=False)
    ns = f"agent-bench-{os.getpid()}"
    kubectl("create", "namespace", ns)
    kubectl("-n", ns, "create", "serviceaccount", "bench")
    kubectl("create", "clusterrolebinding", ns, "--clusterrole=cluster-admin", f"--serviceaccount={ns}:bench")
    kc = sa_kubeconfig(f"{ns}/bench")
    text = open(kc).read()
    server = text.split("server: ")[1].split()[0]
    ca = text.split("certificate-authority: ")[1].split()[0]
    token = text.split("token: ")[1].split()[0]
    ctx = ssl.create_default_context(cafile=ca)
    ctrl = subprocess.Popen([BIN, "controller", "--kubeconfig", controller_kubeconfig(), "--namespace", ns,
                             "--health-probe-bind-address", "127.0.0.1:0", "--metrics-bind-address",
                             "127.0.0.1:0", "--log-level", "warn"],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "controller.log"), "w"))
    ready_isvc(ns, "bench", memory="64Gi")
    cfg_dir, model_dir = os.path.join(work, "cfg-kube"), os.path.join(work, "models-kube")
    os.makedirs(cfg_dir)
    os.makedirs(model_dir)
    agent = subprocess.Popen([BIN, "agent", "--enable-puller", "--config-dir", cfg_dir, "--model-dir",
                              model_dir, "--port", str(free_port()), "--listen-address", "127.0.0.1",
                              "--model-server-url", f"http://127.0.0.1:{side.port}", "--api-watch", "on",
                              "--kubeconfig", kc, "--namespace", ns, "--inference-service", "bench",
                              "--log-level", "warn"],
                             stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "agent-kube.log"), "w"))
    try:
        time.sleep(2)
        lat = []
        url = f"{server}/apis/serving.kserve.io/v1alpha1/namespaces/{ns}/trainedmodels"
        for i in range(args.samples):
            name = f"k{i:05d}"
            req = urllib.request.Request(url, data=trained_model(ns, name, "bench", side.uri(name), "1Mi").encode(),
                                         method="POST", headers={"Authorization": f"Bearer {token}",
                                                                 "Content-Type": "application/json"})
            t0 = time.monotonic()
            urllib.request.urlopen(req, context=ctx, timeout=30).read()
            side.wait_for(lambda: side.first(name, "load", t0) is not None, 60)
            lat.append(((side.first(name, "load", t0) or float("inf")) - t0))
        print(f"propagation, API path (TrainedModel POST -> controller -> ConfigMap -> watch -> load call), "
              f"{len(lat)} models: p50 {ms(pct(lat, 50))}, p99 {ms(pct(lat, 99))}, max {ms(max(lat))}")
    finally:
        agent.terminate()
        ctrl.terminate()
        agent.wait(timeout=30)
        ctrl.wait(timeout=30)


if __name__ == "__main__":
    main()
