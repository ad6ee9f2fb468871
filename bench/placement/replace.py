#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/placement/replace.py — the controller's side of placement on a real API server.

    MODELPLANE_TESTENV_ARGS="--crds $PWD/deploy/crds" scripts/with-testenv \\
        python3 bench/placement/replace.py [--build DIR] [--models 100,1000] [--replicas 3]

For each N in --models: an InferenceService annotated `modelplane.io/placement: spread` with R
Pod objects and their agents' reports (written here: fresh heartbeats, nothing loaded: the figures
are the controller's, not a model server's), N TrainedModels whose memory fills R-1 replicas to
about 80%, and `modelplane controller` (shipped RBAC). Printed, never asserted:

* first placement: TrainedModels created -> every model in an assignment ConfigMap;
* pod lost (the Pod and its report deleted, as the garbage collector does): -> every model
  assigned to the replicas left, and the assignment ConfigMap writes that took;
* replica added: -> settled, the models moved and the writes.

A watch on the assignment ConfigMaps (label modelplane.io/placement=assignment) counts every
write (ADDED, MODIFIED, DELETED) and keeps the latest assignment.
"""
import argparse
import datetime
import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "agent"))
from agentlib import controller_kubeconfig, kubectl  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--build", default=os.path.join(here, "..", "..", "build"))
ap.add_argument("--models", default="100,1000")
ap.add_argument("--replicas", type=int, default=3)
ap.add_argument("--timeout", type=float, default=600)
args = ap.parse_args()
BIN = os.path.join(args.build, "src", "cmd", "modelplane")
TENV = os.environ["MODELPLANE_TESTENV_DIR"]
SERVER = urllib.parse.urlparse(open(os.path.join(TENV, "kubeconfig")).read().split("server: ")[1]
                               .split()[0])
CTX = ssl.create_default_context(cafile=f"{TENV}/pki/ca.crt")
CTX.load_cert_chain(f"{TENV}/pki/admin.crt", f"{TENV}/pki/admin.key")
ISVC = "pl"
GI = 1 << 30


def call(method, path, body=None, ok=(200, 201), content_type="application/json"):
    for attempt in range(60):
        c = http.client.HTTPSConnection(SERVER.hostname, SERVER.port, context=CTX, timeout=120)
        c.request(method, path, body=json.dumps(body) if body is not None else None,
                  headers={"Content-Type": content_type})
        r = c.getresponse()
        data = r.read()
        if r.status == 429 and attempt < 59:
            time.sleep(float(r.getheader("Retry-After") or 1))
            continue
        if r.status not in ok:
            raise RuntimeError(f"{method} {path}: {r.status} {data[:300]!r}")
        return json.loads(data) if data else None


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Assignments(threading.Thread):
    """Watches the assignment ConfigMaps of ns: the latest {pod: set(models)} and the writes."""

    def __init__(self, ns):
        super().__init__(daemon=True)
        self.ns = ns
        self.cond = threading.Condition()
        self.by_cm = {}
        self.writes = 0
        self.opened = threading.Event()

    def run(self):
        sel = urllib.parse.quote("modelplane.io/placement=assignment")
        base = f"/api/v1/namespaces/{self.ns}/configmaps?labelSelector={sel}"
        lst = call("GET", base)
        with self.cond:
            for o in lst["items"]:
                self.apply("ADDED", o, count=False)
        rv = lst["metadata"]["resourceVersion"]
        while True:
            c = http.client.HTTPSConnection(SERVER.hostname, SERVER.port, context=CTX,
                                            timeout=3600)
            c.request("GET", f"{base}&watch=1&allowWatchBookmarks=true&resourceVersion={rv}")
            r = c.getresponse()
            self.opened.set()
            for line in r:
                ev = json.loads(line)
                if ev["type"] == "BOOKMARK":
                    rv = ev["object"]["metadata"]["resourceVersion"]
                    continue
                if ev["type"] == "ERROR":
                    break
                rv = ev["object"]["metadata"]["resourceVersion"]
                with self.cond:
                    self.apply(ev["type"], ev["object"])
                    self.cond.notify_all()

    def apply(self, typ, o, count=True):
        name = o["metadata"]["name"]
        if count:
            self.writes += 1
        if typ == "DELETED":
            self.by_cm.pop(name, None)
            return
        pod = (o["metadata"].get("annotations") or {}).get("modelplane.io/pod", name)
        try:
            models = {e["modelName"] for e in json.loads((o.get("data") or {})
                                                          .get("models.json") or "[]")}
        except ValueError:
            models = set()
        self.by_cm[name] = (pod, models)

    def snapshot(self):
        with self.cond:
            return {pod: set(m) for pod, m in self.by_cm.values()}

    def wait(self, pred, timeout):
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                a = {pod: set(m) for pod, m in self.by_cm.values()}
                if pred(a):
                    return time.monotonic(), a
                left = end - time.monotonic()
                if left <= 0:
                    return None, a
                self.cond.wait(min(left, 1.0))


def add_replica(ns, pod):
    p = call("POST", f"/api/v1/namespaces/{ns}/pods", {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": pod, "labels": {"serving.kserve.io/inferenceservice": ISVC}},
        "spec": {"containers": [{"name": "kserve-container", "image": "example.invalid/none"}]}})
    call("POST", f"/api/v1/namespaces/{ns}/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": f"modelstatus-{pod}",
                     "labels": {"serving.kserve.io/inferenceservice": ISVC,
                                "modelplane.io/model-status": "agent"},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod,
                                          "uid": p["metadata"]["uid"]}]},
        "data": {"models.json": "[]", "pod": pod, "heartbeat": now_rfc3339(),
                 "heartbeatPeriodSeconds": "3600", "address": f"127.0.0.1:{9000}"}})


def remove_replica(ns, pod):
    call("DELETE", f"/api/v1/namespaces/{ns}/configmaps/modelstatus-{pod}", ok=(200, 202, 404))
    call("DELETE", f"/api/v1/namespaces/{ns}/pods/{pod}?gracePeriodSeconds=0", ok=(200, 202, 404))


def create_models(ns, n, mem_mi):
    def worker(lo, hi):
        for i in range(lo, hi):
            call("POST", f"/apis/serving.kserve.io/v1alpha1/namespaces/{ns}/trainedmodels", {
                "apiVersion": "serving.kserve.io/v1alpha1", "kind": "TrainedModel",
                "metadata": {"name": f"m{i:05d}"},
                "spec": {"inferenceService": ISVC,
                         "model": {"storageUri": f"s3://models/m{i}", "framework": "sklearn",
                                   "memory": f"{mem_mi}Mi"}}})
    step = (n + 7) // 8
    ts = [threading.Thread(target=worker, args=(lo, min(n, lo + step)))
          for lo in range(0, n, step)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def run(n, r, ctrl_kc, work):
    ns = f"pl-{n}-{os.getpid()}"
    kubectl("create", "namespace", ns)
    limit_gi = 4
    # the replicas left after one is lost hold every model at 80%
    mem_mi = max(1, int(limit_gi * 1024 * (r - 1) * 0.8 / n))
    call("POST", f"/apis/serving.kserve.io/v1beta1/namespaces/{ns}/inferenceservices", {
        "apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
        "metadata": {"name": ISVC, "annotations": {"modelplane.io/placement": "spread"}},
        "spec": {"predictor": {"minReplicas": r, "sklearn": {
            "name": "kserve-container",
            "resources": {"limits": {"memory": f"{limit_gi}Gi"},
                          "requests": {"memory": f"{limit_gi}Gi"}}}}}})
    # marked ready, as KServe's controller would once its pods serve (no runtime runs here)
    call("PATCH", f"/apis/serving.kserve.io/v1beta1/namespaces/{ns}/inferenceservices/{ISVC}"
         "/status", {"status": {"url": f"http://{ISVC}.{ns}.example.com", "conditions": [
             {"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
             for t in ("IngressReady", "PredictorReady", "Ready")]}},
         content_type="application/merge-patch+json")
    ctrl = subprocess.Popen([BIN, "controller", "--kubeconfig", ctrl_kc, "--namespace", ns,
                             "--health-probe-bind-address", "127.0.0.1:0",
                             "--metrics-bind-address", "127.0.0.1:0"],
                            stdout=open(os.path.join(work, f"controller-{n}.log"), "w"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    watch = Assignments(ns)
    watch.start()
    watch.opened.wait(60)
    pods = [f"{ISVC}-predictor-{i}" for i in range(r)]
    for p in pods:
        add_replica(ns, p)
    names = {f"m{i:05d}" for i in range(n)}

    def covers(live):
        return lambda a: set().union(*[m for p, m in a.items() if p in live] or [set()]) >= names \
            and not any(m for p, m in a.items() if p not in live)

    try:
        t0 = time.monotonic()
        create_models(ns, n, mem_mi)
        t_created = time.monotonic()
        t1, a0 = watch.wait(covers(set(pods)), args.timeout)
        row = {"models": n, "replicas": r, "memory": f"{mem_mi}Mi",
               "create": f"{t_created - t0:.2f}",
               "first placement": f"{t1 - t0:.2f}" if t1 else "timeout"}
        w0 = watch.writes
        gone = pods[-1]
        t0 = time.monotonic()
        remove_replica(ns, gone)
        live = set(pods[:-1])
        t1, a1 = watch.wait(covers(live), args.timeout)
        time.sleep(2)  # late writes count too
        row["pod lost"] = f"{t1 - t0:.2f}" if t1 else "timeout"
        row["writes (loss)"] = watch.writes - w0
        row["moved (loss)"] = len(a0.get(gone, ()))
        before = watch.snapshot()
        w0 = watch.writes
        new = f"{ISVC}-predictor-{r}"
        t0 = time.monotonic()
        add_replica(ns, new)
        live.add(new)
        t1, a2 = watch.wait(lambda a: new in a and covers(live)(a), args.timeout)
        time.sleep(2)
        a2 = watch.snapshot()
        hb = {m: p for p, ms in before.items() for m in ms}
        ha = {m: p for p, ms in a2.items() for m in ms}
        row["replica added (R-1 -> R)"] = f"{t1 - t0:.2f}" if t1 else "timeout"
        row["writes (add)"] = watch.writes - w0
        row["moved (add)"] = sum(1 for m in names if hb.get(m) != ha.get(m))
        return row
    finally:
        os.killpg(ctrl.pid, signal.SIGTERM)
        ctrl.wait(timeout=30)
        kubectl("delete", "namespace", ns, "--wait=false")


def main():
    work = tempfile.mkdtemp(prefix="bench-placement-")
    ctrl_kc = controller_kubeconfig()
    rows = [run(int(n), args.replicas, ctrl_kc, work) for n in args.models.split(",")]
    load = open("/proc/loadavg").read().split()[:3]
    print(f"# bench/placement/replace.py, load average {' '.join(load)}, logs {work}")
    keys = list(rows[0].keys())
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
