#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Test `agent-placement`: the agent's side of placement (issue 30) on a real API server.

One `modelplane agent` stands in for pod A of InferenceService "mm" (POD_NAME, a Pod object,
the shipped deploy/agent RBAC) in front of a fake model server in this script that records every
V2 repository call. There is no controller: the test writes what it would, by hand.

1. The shared ConfigMap modelconfig-mm-0 lists m1, m2, m3 and carries
   modelplane.io/placement: spread; A's assignment modelconfig-mm-mm-a lists m1 and m2. The agent
   loads exactly m1 and m2 (never m3, which the mounted file also lists: under placement the file
   is not used), and its report modelstatus-mm-a has the address given by --advertise-address
   and no draining.
2. The assignment changes to m2 and m3: m3 is loaded, m1 unloaded, m2 left alone.
3. SIGTERM, with another replica's report (pod B, written by hand) showing m2 Loaded but not m3:
   A's report says draining at once, and A keeps running (and unloads nothing) while m3 is held
   nowhere else. Once B's report shows m3 Loaded too, A exits 0 ("handed over").

Usage: e2e_placement.py MODELPLANE_BINARY (under scripts/with-testenv; tests/agent/run-e2e-watch.sh)
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
ISVC = "mm"
from agentlib import failures, finish_work, log, ok, sanitizer_clean, step_no  # noqa: E402 - shared


def wait_for(pred, what, timeout=30):
    return agentlib.wait_for(pred, what, timeout, interval=0.05)


# ---- the fake model server: every repository call, recorded ----

calls = []  # ("load"|"unload", name)
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
                calls.append((parts[4], parts[3]))
                (loaded.add if parts[4] == "load" else loaded.discard)(parts[3])
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def loaded_now():
    with lock:
        return set(loaded)


def count(op, name):
    with lock:
        return sum(1 for c in calls if c == (op, name))


# ---- the objects the controller would write ----

def models_json(srcdir, names):
    out = []
    for n in sorted(names):
        d = os.path.join(srcdir, n)
        if not os.path.isdir(d):
            os.makedirs(d)
            with open(os.path.join(d, "model.bin"), "wb") as f:
                f.write(n.encode() * 64)
        out.append({"modelName": n, "modelSpec": {"storageUri": "file://" + d, "framework": "sklearn",
                                                  "memory": "1Gi"}})
    return json.dumps(out, separators=(",", ":"))


def apply(obj):
    kubectl("apply", "-f", "-", stdin=json.dumps(obj))


def pod(ns, name):
    apply({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns, "labels": {"serving.kserve.io/inferenceservice": ISVC}},
           "spec": {"containers": [{"name": "kserve-container", "image": "example.invalid/none"}]}})
    return json.loads(kubectl("-n", ns, "get", "pod", name, "-o", "json"))["metadata"]["uid"]


def owner(name, uid):
    return [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": uid}]


def shared(ns, data):
    apply({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": f"modelconfig-{ISVC}-0", "namespace": ns,
                        "labels": {"serving.kserve.io/inferenceservice": ISVC},
                        "annotations": {"modelplane.io/placement": "spread"}},
           "data": {"models.json": data}})


def assignment(ns, pod_name, uid, data):
    apply({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": f"modelconfig-{ISVC}-{pod_name}", "namespace": ns,
                        "labels": {"serving.kserve.io/inferenceservice": ISVC,
                                   "modelplane.io/placement": "assignment"},
                        "annotations": {"modelplane.io/pod": pod_name},
                        "ownerReferences": owner(pod_name, uid)},
           "data": {"models.json": data}})


def report(ns, pod_name, uid, srcdir, names, address):
    """Another replica's report, as its agent writes it (serving/report.h)."""
    models = [{"name": n, "state": "Loaded", "storageUri": "file://" + os.path.join(srcdir, n)}
              for n in sorted(names)]
    apply({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": f"modelstatus-{pod_name}", "namespace": ns,
                        "labels": {"serving.kserve.io/inferenceservice": ISVC,
                                   "modelplane.io/model-status": "agent"},
                        "ownerReferences": owner(pod_name, uid)},
           "data": {"models.json": json.dumps(models, separators=(",", ":")), "pod": pod_name,
                    "heartbeat": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "heartbeatPeriodSeconds": "10", "address": address}})


def report_data(ns, pod_name):
    cm = json.loads(kubectl("-n", ns, "get", "configmap", f"modelstatus-{pod_name}", "-o", "json"))
    return cm.get("data", {})


def main():
    work = tempfile.mkdtemp(prefix="mp-agent-placement-")
    srcdir = os.path.join(work, "src")
    agent = None
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Repo)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    ns = f"agent-placement-{os.getpid()}"
    pod_a, pod_b = f"{ISVC}-a", f"{ISVC}-b"
    try:
        kubectl("create", "namespace", ns)
        kubectl("-n", ns, "apply", "-f", os.path.join(SRC, "deploy", "agent", "rbac.yaml"))
        agent_kc = wait_for(lambda: sa_kubeconfig(f"{ns}/default"), "default service account")
        uid_a, uid_b = pod(ns, pod_a), pod(ns, pod_b)
        cfg_dir, model_dir = os.path.join(work, "cfg"), os.path.join(work, "models")
        os.makedirs(cfg_dir)
        os.makedirs(model_dir)
        every = models_json(srcdir, {"m1", "m2", "m3"})
        ConfigDir(cfg_dir).write_bytes(every.encode())  # the mounted file lists every model

        # 1. placement on: the assignment, not the shared list
        shared(ns, every)
        assignment(ns, pod_a, uid_a, models_json(srcdir, {"m1", "m2"}))
        port = free_port()
        advertised = f"127.0.0.1:{port}"
        agent_log = os.path.join(work, "agent.log")
        env = dict(os.environ, POD_NAME=pod_a)
        env.pop("KUBECONFIG", None)
        agent = subprocess.Popen(
            [BIN, "agent", "--log-format", "text", "--enable-puller", "--config-dir", cfg_dir,
             "--model-dir", model_dir, "--port", str(port), "--listen-address", "127.0.0.1",
             "--model-server-url", f"http://127.0.0.1:{srv.server_address[1]}", "--api-watch", "on",
             "--kubeconfig", agent_kc, "--namespace", ns, "--inference-service", ISVC,
             "--advertise-address", advertised, "--status-heartbeat", "1", "--drain-timeout", "60"],
            stdout=open(agent_log, "wb"), stderr=subprocess.STDOUT, env=env, start_new_session=True)
        t0 = time.monotonic()
        ok(wait_for(lambda: loaded_now() == {"m1", "m2"}, "m1 and m2 loaded"),
           "placement: the agent loads its assignment (m1, m2)")
        log(f"start -> assignment loaded: {time.monotonic() - t0:.2f} s")
        data = wait_for(lambda: (lambda d: d if d.get("address") else None)(report_data(ns, pod_a)),
                        "the report's address")
        ok(data and data.get("address") == advertised and "draining" not in data,
           f"its report has the advertised address and no draining ({data and data.get('address')})")
        ok(count("load", "m3") == 0, "m3 (shared list and mounted file only) is never loaded")

        # 2. the assignment changes
        t0 = time.monotonic()
        assignment(ns, pod_a, uid_a, models_json(srcdir, {"m2", "m3"}))
        ok(wait_for(lambda: loaded_now() == {"m2", "m3"}, "m3 loaded, m1 unloaded"),
           "a changed assignment: m3 loaded, m1 unloaded")
        log(f"assignment write -> converged: {time.monotonic() - t0:.2f} s")
        ok(count("unload", "m1") == 1 and count("load", "m2") == 1 and count("unload", "m2") == 0,
           f"m2 left alone, m1 unloaded once (calls: {calls})")

        # 3. SIGTERM: draining, kept serving until another replica holds every model
        report(ns, pod_b, uid_b, srcdir, {"m2"}, "127.0.0.1:1")
        agent.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        ok(wait_for(lambda: report_data(ns, pod_a).get("draining") == "true", "draining"),
           "SIGTERM: the report says draining")
        log(f"SIGTERM -> draining written: {time.monotonic() - t0:.2f} s")
        time.sleep(1.0)  # B holds m2 only: A must still be there, serving m3
        ok(agent.poll() is None, "while m3 is held by no other replica the agent keeps running")
        ok(loaded_now() == {"m2", "m3"} and count("unload", "m2") + count("unload", "m3") == 0,
           "draining: nothing unloaded")
        t0 = time.monotonic()
        report(ns, pod_b, uid_b, srcdir, {"m2", "m3"}, "127.0.0.1:1")
        try:
            rc = agent.wait(timeout=20)
        except subprocess.TimeoutExpired:
            rc = None
        ok(rc == 0, f"once B reports m3 Loaded too the agent exits 0 (rc {rc})")
        log(f"B's report -> exit: {time.monotonic() - t0:.2f} s")
        agent = None
        text = open(agent_log, errors="replace").read()
        ok("handed over" in text, "its log says it handed over")
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
