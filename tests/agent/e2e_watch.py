#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Test `agent-watch`: the agent's API source across API-server restarts and etcd compaction.

`modelplane agent` follows models.json through the API (the namespace's default service account
with deploy/agent/rbac.yaml) while its mounted directory holds a models.json that lags behind,
as kubelet's projection does (its sync period plus its ConfigMap cache TTL: a minute or more).
The model server is a fake one in this script that records every V2 repository call (load,
unload, index) and answers at once; models are local directories (no downloads to speak of).

1. Start: the mounted file is older than the ConfigMap (it still lists a model deleted before
   the agent started): the deleted model is never loaded, nor downloaded (the agent's log).
2. Rounds: a model removed and another added in the ConfigMap (through the API at once), the
   file one step behind; then etcd is compacted past the ConfigMap's resourceVersion and
   kube-apiserver is killed (-9) and started again (scripts/testenv compact, restart-apiserver);
   the agent must neither fall back to the lagging file nor get stuck on 410s.
3. The agent frozen (SIGSTOP) while the ConfigMap changes, etcd is compacted and kube-apiserver
   restarts: woken up, it resumes its watch from its resourceVersion, gets 410 and relists at
   once (its log says "expired"), catching up without the file.
4. After all that a ConfigMap change still arrives within 10 s (the watch works; it is not
   sleeping through a backoff).

Checked from the model server's record: no model is loaded that the ConfigMap did not list at
that moment (in particular never one only the file lists), each model is loaded once and
unloaded at most once, and only after it was removed (nothing flaps).

Usage: e2e_watch.py MODELPLANE_BINARY (under scripts/with-testenv; tests/agent/run-e2e-watch.sh)
"""
import http.server
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentlib  # noqa: E402
from agentlib import SRC, ConfigDir, free_port, kubectl, sa_kubeconfig  # noqa: E402

BIN = sys.argv[1]
ROUNDS = int(os.environ.get("MODELPLANE_WATCH_ROUNDS", "3"))
SETTLE = float(os.environ.get("MODELPLANE_WATCH_SETTLE", "10"))  # seconds after each restart
TESTENV_DIR = os.environ["MODELPLANE_TESTENV_DIR"]
from agentlib import failures, finish_work, log, ok, sanitizer_clean, step_no  # noqa: E402 - shared


def wait_for(pred, what, timeout=60):
    return agentlib.wait_for(pred, what, timeout, interval=0.1)


def testenv(*args):
    r = subprocess.run([os.path.join(SRC, "scripts", "testenv"), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"testenv {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout.strip()


# ---- the fake model server: every repository call, recorded ----

calls = []  # (monotonic time, "load"|"unload", name)
loaded = set()
lock = threading.Lock()


class Repo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        parts = self.path.strip("/").split("/")
        body = b"{}"
        with lock:
            if self.path == "/v2/repository/index":
                body = json.dumps([{"name": n, "state": "READY"} for n in sorted(loaded)]).encode()
            elif len(parts) == 5 and parts[:3] == ["v2", "repository", "models"] and parts[4] in ("load", "unload"):
                calls.append((time.monotonic(), parts[4], parts[3]))
                (loaded.add if parts[4] == "load" else loaded.discard)(parts[3])
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def loaded_now():
    with lock:
        return set(loaded)


# ---- the ConfigMap and its history ----

class Models:
    """models.json in the ConfigMap, with the time span of each version (for the checks)."""

    def __init__(self, ns, name, srcdir):
        self.ns, self.name, self.srcdir = ns, name, srcdir
        self.history = []  # (written-before, written-after, frozenset of names)
        self.current = frozenset()

    def data(self, names):
        return json.dumps([{"modelName": n, "modelSpec": {"storageUri": self.uri(n), "framework": "sklearn",
                                                          "memory": "1Gi"}} for n in sorted(names)],
                          separators=(",", ":"))

    def uri(self, n):
        d = os.path.join(self.srcdir, n)
        if not os.path.isdir(d):
            os.makedirs(d)
            with open(os.path.join(d, "model.bin"), "wb") as f:
                f.write(n.encode() * 64)
        return "file://" + d

    def write(self, names):
        names = frozenset(names)
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": self.name, "namespace": self.ns},
              "data": {"models.json": self.data(names)}}
        t0 = time.monotonic()
        kubectl("apply", "-f", "-", stdin=json.dumps(cm))
        self.history.append((t0, time.monotonic(), names))
        self.current = names

    def possible_at(self, t):
        """The versions that may be the latest the agent has seen at time t: each from the start
        of its write to the end of the next one (the agent may hear of a write before kubectl
        returns; the test waits for the agent to converge before each write)."""
        out = []
        for i, (before, _, listed) in enumerate(self.history):
            end = self.history[i + 1][1] if i + 1 < len(self.history) else float("inf")
            if before <= t <= end:
                out.append(listed)
        return out


def check_calls(models, ever_desired, what):
    with lock:
        record = list(calls)
    # a load of a model no possible version lists, an unload of one that every possible version lists
    bad_loads = [(round(t, 2), n) for t, op, n in record
                 if op == "load" and not any(n in v for v in models.possible_at(t))]
    per = {}
    for _, op, n in record:
        per.setdefault(n, {"load": 0, "unload": 0})[op] += 1
    flaps = {n: c for n, c in per.items() if c["load"] > 1 or c["unload"] > 1}
    bad_unloads = [(round(t, 2), n) for t, op, n in record
                   if op == "unload" and all(n in v for v in models.possible_at(t))]
    never = sorted(n for n in per if n not in ever_desired)
    ok(not bad_loads and not never,
       f"{what}: no model loaded that models.json did not list at that moment"
       + (f" (loaded: {bad_loads}; never in the ConfigMap: {never})" if bad_loads or never else ""))
    ok(not flaps and not bad_unloads,
       f"{what}: each model loaded once and unloaded at most once, after its removal"
       + (f" (calls per model: {flaps}; unloads while listed: {bad_unloads})" if flaps or bad_unloads else ""))
    log(f"{what}: {sum(c['load'] for c in per.values())} load and {sum(c['unload'] for c in per.values())} "
        f"unload calls for {len(per)} models")


def bump_and_compact(ns):
    """More writes (another object), so the ConfigMap's resourceVersion falls behind the revision
    that is then compacted: a watch from it answers 410."""
    for i in range(3):
        kubectl("-n", ns, "create", "configmap", f"bump-{time.monotonic_ns()}-{i}")
    try:
        return testenv("compact", TESTENV_DIR)
    except RuntimeError as e:
        log(f"etcdctl compaction failed ({e}); using etcd's HTTP gateway")
    port = [ln.split()[1] for ln in open(os.path.join(TESTENV_DIR, "ports")) if ln.startswith("etcd ")][0]
    import urllib.request
    url = f"http://127.0.0.1:{port}/v3/kv/"
    rev = json.load(urllib.request.urlopen(urllib.request.Request(
        url + "range", data=b'{"key":"AA=="}', method="POST")))["header"]["revision"]
    urllib.request.urlopen(urllib.request.Request(
        url + "compaction", data=json.dumps({"revision": rev, "physical": True}).encode(), method="POST")).read()
    return rev


def main():
    work = tempfile.mkdtemp(prefix="mp-agent-watch-")
    agent = None
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Repo)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    ns = f"agent-watch-{os.getpid()}"
    try:
        kubectl("create", "namespace", ns)
        kubectl("-n", ns, "apply", "-f", os.path.join(SRC, "deploy", "agent", "rbac.yaml"))
        agent_kc = wait_for(lambda: sa_kubeconfig(f"{ns}/default"), "default service account")
        cfg_dir, model_dir = os.path.join(work, "cfg"), os.path.join(work, "models")
        os.makedirs(cfg_dir)
        os.makedirs(model_dir)
        cfg = ConfigDir(cfg_dir)
        models = Models(ns, "modelconfig-watch-0", os.path.join(work, "src"))
        ever = set()

        # 1. the mounted file is older than the ConfigMap
        models.write({"a", "stale"})
        file_view = models.current
        models.write({"a", "b"})
        ever |= {"a", "b", "stale"}
        cfg.write_bytes(models.data(file_view).encode())
        env = {k: v for k, v in os.environ.items() if k not in ("POD_NAME", "HOSTNAME")}
        agent_log = os.path.join(work, "agent.log")
        agent = subprocess.Popen(
            [BIN, "agent", "--log-format", "text", "--enable-puller", "--config-dir", cfg_dir,
             "--model-dir", model_dir, "--port", str(free_port()), "--listen-address", "127.0.0.1",
             "--model-server-url", f"http://127.0.0.1:{srv.server_address[1]}", "--api-watch", "on",
             "--kubeconfig", agent_kc, "--namespace", ns, "--configmap", models.name, "--file-poll", "1"],
            stdout=open(agent_log, "wb"), stderr=subprocess.STDOUT, env=env, start_new_session=True)
        ok(wait_for(lambda: loaded_now() == {"a", "b"}, "a and b loaded"),
           "start: the ConfigMap's models are loaded")
        time.sleep(2)
        check_calls(models, ever, "start with a mounted file older than the ConfigMap")
        ok("downloading model stale" not in open(agent_log, errors="replace").read(),
           "start: the model that only the older mounted file lists is not even downloaded")

        # 2. rounds of change, compaction and API-server restart, the file one step behind
        for i in range(ROUNDS):
            old = f"x{i}" if i else "a"
            new = f"y{i}"
            file_view = models.current
            cfg.write_bytes(models.data(file_view).encode())  # kubelet catches up with the last view
            models.write((models.current - {old}) | {new})
            ever |= models.current
            ok(wait_for(lambda: loaded_now() == set(models.current), f"round {i} change"),
               f"round {i}: {old} removed and {new} added through the API")
            models.write(models.current | {f"x{i + 1}"})
            ever |= models.current
            ok(wait_for(lambda: loaded_now() == set(models.current), f"round {i} add"),
               f"round {i}: x{i + 1} added through the API")
            rev = bump_and_compact(ns)
            t0 = time.monotonic()
            testenv("restart-apiserver", TESTENV_DIR)
            log(f"round {i}: etcd compacted at revision {rev}, kube-apiserver restarted in "
                f"{time.monotonic() - t0:.1f} s; the mounted file lacks {new} and x{i + 1} "
                f"and lists {old}")
            time.sleep(SETTLE)
            ok(loaded_now() == set(models.current),
               f"round {i}: after the restart the agent still serves exactly the ConfigMap's models "
               f"(loaded: {sorted(loaded_now())}, listed: {sorted(models.current)})")

        # 3. the agent frozen (SIGSTOP) across a change, a compaction and a restart: when it
        # wakes up its watch stream is gone, it resumes the watch from its resourceVersion, the
        # restarted server no longer holds that (410) and it relists at once
        cfg.write_bytes(models.data(models.current).encode())
        old = f"x{ROUNDS}"
        os.kill(agent.pid, signal.SIGSTOP)
        models.write((models.current - {old}) | {"z"})
        ever |= models.current
        rev = bump_and_compact(ns)
        testenv("restart-apiserver", TESTENV_DIR)
        before = open(agent_log, errors="replace").read().count("expired (")
        t0 = time.monotonic()
        os.kill(agent.pid, signal.SIGCONT)
        ok(wait_for(lambda: loaded_now() == set(models.current), "frozen agent catches up", timeout=20),
           f"frozen across a change, a compaction (revision {rev}) and a restart: the agent catches up "
           f"({old} removed, z added)")
        log(f"SIGCONT -> converged: {time.monotonic() - t0:.2f} s")
        ok(open(agent_log, errors="replace").read().count("expired (") > before,
           "its resumed watch answered 410 and it relisted (agent log: 'expired')")

        # 4. the watch still works: a change arrives within seconds
        t0 = time.monotonic()
        models.write(models.current | {"last"})
        ever |= models.current
        ok(wait_for(lambda: "last" in loaded_now(), "last loaded", timeout=10),
           "after the restarts a ConfigMap change still reaches the agent within 10 s")
        log(f"ConfigMap write -> load call after the restarts: {time.monotonic() - t0:.2f} s")
        check_calls(models, ever, f"{ROUNDS + 1} API-server restarts with etcd compaction")
        text = open(agent_log, errors="replace").read()
        log(f"agent log: {text.count('watch stream was cut')} watch streams cut, "
            f"{text.count('failed:')} failed requests, {text.count('expired (')} 410s relisted, "
            f"{text.count('from the file from now on')} switches to the mounted file")
        agent.send_signal(signal.SIGTERM)
        ok(agent.wait(timeout=30) == 0, "the agent exits cleanly")
        agent = None
        text = open(agent_log, errors="replace").read()
        ok(sanitizer_clean(text), "no sanitizer report in the agent's log")
    except Exception as e:  # noqa: BLE001 - report, then fail
        ok(False, f"test ran to the end ({type(e).__name__}: {e})")
    finally:
        if agent and agent.poll() is None:
            os.killpg(agent.pid, signal.SIGKILL)
        srv.shutdown()
        try:
            kubectl("delete", "namespace", ns, "--wait=false")
        except Exception as e:  # noqa: BLE001
            log(str(e))
        finish_work(work, os.path.join(work, "agent.log"))
    print(f"1..{step_no[0]}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
