#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Placement end to end (issue 30, docs/placement.md) on a real control plane.

An InferenceService annotated `modelplane.io/placement: spread` with a 1Gi memory limit per pod,
`modelplane controller` with the shipped RBAC, and Pod objects with a `modelplane agent` process
each standing in for them, every agent in front of its own MLServer (mlserver-sklearn), models
downloaded from moto's S3 server. Eight TrainedModels of 320Mi: 2.5 times what one pod may hold,
so KServe's one-pod admission would take three.

1. Three replicas: every model is admitted and Ready, "1/1 copies loaded"; no pod's assignment
   ConfigMap exceeds its limit; every model answers a V2 inference through each of the three
   agents (the ones that do not hold it forward).
2. A fourth replica: the models that move are counted (near 1/4 of them).
3. SIGTERM on one replica while requests run through every agent: its models are handed over
   (the report says draining, the new copies load, then it exits) and no request fails.
4. A replacement replica comes (as the ReplicaSet would), then one agent and its MLServer are
   SIGKILLed and the pod deleted: every model answers again through the others; the time it took
   is printed (bench/placement records it).

Usage: e2e_placement.py MODELPLANE_BINARY (under scripts/with-testenv, in the agent venv)
"""
import json
import os
import signal
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402 - the agent e2e test's helpers (processes, TAP, models, S3)
from agentlib import (controller_kubeconfig, free_port, kubectl, ready_isvc,  # noqa: E402
                      sa_kubeconfig, trained_model)
from e2e import BIN, start_mlserver, log, ok, start, wait_for  # noqa: E402

NS = f"placement-{os.getpid()}"
ISVC = "sklearn-pl"
LIMIT = 1 << 30
MODEL_MEM = 320 << 20
MODELS = [f"m{i}" for i in range(8)]
ASSIGNMENT_LABEL = "modelplane.io/placement=assignment"


def tm_get(name):
    return json.loads(kubectl("-n", NS, "get", "trainedmodel", name, "-o", "json"))


def condition(tm, ctype):
    for c in tm.get("status", {}).get("conditions", []):
        if c["type"] == ctype:
            return c
    return None


def assignments():
    """{pod: [model names]} from the assignment ConfigMaps the controller writes."""
    out = {}
    items = json.loads(kubectl("-n", NS, "get", "configmap", "-l", ASSIGNMENT_LABEL, "-o",
                               "json"))["items"]
    for cm in items:
        pod = cm["metadata"].get("annotations", {}).get("modelplane.io/pod")
        entries = json.loads(cm.get("data", {}).get("models.json") or "[]")
        out[pod] = sorted(e["modelName"] for e in entries)
    return out


def holders(a):
    h = {}
    for pod, models in a.items():
        for m in models:
            h.setdefault(m, set()).add(pod)
    return h


def all_loaded(names, want="1/1 copies loaded"):
    for n in names:
        tm = tm_get(n)
        c = condition(tm, "ModelLoaded")
        r = condition(tm, "Ready")
        if not c or c["status"] != "True" or not c.get("message", "").startswith(want) or \
                not r or r["status"] != "True":
            return None
    return True


def infer_result(port, name):
    """'ok', 'refused' (nothing listens: a replica that has stopped serving) or what failed."""
    try:
        got = e2e.infer(port, name)
        return "ok" if got == [1, 0] else f"answer {got}"
    except urllib.error.HTTPError as e:
        return f"HTTP {e.code} {e.read()[:200]!r}"
    except urllib.error.URLError as e:
        if isinstance(e.reason, ConnectionRefusedError):
            return "refused"
        return f"{e.reason!r}"
    except Exception as e:  # noqa: BLE001 - a failed request is the answer
        return repr(e)


def infer_ok(port, name):
    return infer_result(port, name) == "ok"


class Cluster:
    def __init__(self, work, moto_port, agent_kc):
        self.work, self.moto_port, self.agent_kc = work, moto_port, agent_kc
        self.venv_bin = os.path.dirname(sys.executable)
        self.replicas = {}

    def add(self, tag):
        pod = f"{ISVC}-predictor-{tag}"
        model_dir = os.path.join(self.work, f"models-{tag}")
        config_dir = os.path.join(self.work, f"configs-{tag}")
        os.makedirs(model_dir)
        os.makedirs(config_dir)
        ml, ml_port = start_mlserver(self.work, self.venv_bin, model_dir, tag)
        kubectl("apply", "-f", "-", stdin=json.dumps({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": pod, "namespace": NS,
                         "labels": {"serving.kserve.io/inferenceservice": ISVC}},
            "spec": {"containers": [{"name": "kserve-container",
                                     "image": "example.invalid/none"}]}}))
        r = dict(tag=tag, pod=pod, ml=ml, ml_port=ml_port, agent_port=free_port())
        wait_for(lambda: urllib.request.urlopen(
            f"http://127.0.0.1:{ml_port}/v2/health/ready", timeout=2).status == 200,
            f"mlserver {tag}")
        env = dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{self.moto_port}",
                   AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                   AWS_DEFAULT_REGION="us-east-1", POD_NAME=pod)
        env.pop("KUBECONFIG", None)
        r["agent"] = start([BIN, "agent", "--log-format", "text", "--enable-puller",
                            "--config-dir", config_dir, "--model-dir", model_dir,
                            "--port", str(r["agent_port"]), "--component-port", str(ml_port),
                            "--listen-address", "127.0.0.1", "--api-watch", "on",
                            "--kubeconfig", self.agent_kc, "--namespace", NS,
                            "--advertise-address", f"127.0.0.1:{r['agent_port']}",
                            "--status-heartbeat", "1"],
                           os.path.join(self.work, f"agent-{tag}.log"), env=env)
        self.replicas[tag] = r
        return r

    def ports(self, exclude=()):
        return [r["agent_port"] for t, r in self.replicas.items() if t not in exclude]


def capacity_step(names):
    a = assignments()
    over = {p: len(m) * MODEL_MEM for p, m in a.items() if len(m) * MODEL_MEM > LIMIT}
    ok(not over, f"no pod is assigned more than its 1Gi limit ({ {p: len(m) for p, m in a.items()} })")
    h = holders(a)
    ok(all(len(h.get(n, ())) == 1 for n in names),
       f"each model is assigned to exactly one pod (copies 1): { {n: sorted(h.get(n, ())) for n in names} }")
    return a


def serve_everywhere(cluster, names, what):
    bad = [(n, p) for p in cluster.ports() for n in names if not infer_ok(p, n)]
    ok(not bad, f"{what}: every model answers through every agent ({len(cluster.ports())} x "
                f"{len(names)}; failed: {bad[:5]})")


class Load(threading.Thread):
    """Requests for every model through the given agents, round robin, until stopped."""

    def __init__(self, ports, names, draining_port, draining_proc):
        super().__init__(daemon=True)
        self.ports, self.names = ports, names
        self.draining_port, self.draining_proc = draining_port, draining_proc
        self.stop = threading.Event()
        self.sent = self.failed = 0
        self.failures = []

    def run(self):
        i = 0
        while not self.stop.is_set():
            port = self.ports[i % len(self.ports)]
            name = self.names[i % len(self.names)]
            i += 1
            # the draining replica counts while it listens (a Service drops the endpoint of a
            # terminating pod; a refused connection once it stopped serving is no failed request)
            if port == self.draining_port and self.draining_proc.poll() is not None:
                continue
            self.sent += 1
            r = infer_result(port, name)
            if r == "ok" or (r == "refused" and port == self.draining_port):
                continue
            self.failed += 1
            self.failures.append((port, name, r))


def main():
    work = tempfile.mkdtemp(prefix="mp-placement-")
    try:
        kubectl("create", "namespace", NS)
        ctrl_kc = controller_kubeconfig()
        ctrl = start([BIN, "controller", "--kubeconfig", ctrl_kc, "--namespace", NS,
                      "--health-probe-bind-address", "127.0.0.1:0",
                      "--metrics-bind-address", "127.0.0.1:0"],
                     os.path.join(work, "controller.log"))
        ready_isvc(NS, ISVC, memory="1Gi")
        kubectl("-n", NS, "annotate", "inferenceservice", ISVC, "modelplane.io/placement=spread")

        moto_port = free_port()
        s3 = e2e.start_moto(work, moto_port)
        s3.create_bucket(Bucket="models")
        e2e.upload(s3, "models", "iris/v1", e2e.train(work)["v1"])
        kubectl("-n", NS, "apply", "-f", os.path.join(e2e.SRC, "deploy", "agent", "rbac.yaml"))
        agent_kc = wait_for(lambda: sa_kubeconfig(f"{NS}/default"), "default service account")
        cluster = Cluster(work, moto_port, agent_kc)
        for tag in ("a", "b", "c"):
            cluster.add(tag)
        for n in MODELS:
            kubectl("apply", "-f", "-", stdin=trained_model(NS, n, ISVC, "s3://models/iris/v1",
                                                             memory="320Mi"))

        # 1. three replicas hold 2.5 pods' worth
        t0 = time.monotonic()
        ok(wait_for(lambda: all_loaded(MODELS), "every model Ready and 1/1 copies loaded"),
           "3 replicas, 8 x 320Mi (2.5x one pod's limit): every model admitted, Ready, "
           "'1/1 copies loaded'")
        log(f"all loaded {time.monotonic() - t0:.1f} s after the creates")
        before = capacity_step(MODELS)
        serve_everywhere(cluster, MODELS, "3 replicas")

        # 2. a fourth replica: about a quarter of the models move
        cluster.add("d")
        wait_for(lambda: len(assignments()) == 4 and all_loaded(MODELS) and
                 sum(len(m) for m in assignments().values()) == len(MODELS),
                 "the assignment over 4 replicas settles")
        after = capacity_step(MODELS)
        hb, ha = holders(before), holders(after)
        moved = sum(1 for n in MODELS if hb.get(n) != ha.get(n))
        log(f"a 4th replica: {moved} of {len(MODELS)} models moved "
            f"(ideal {len(MODELS) / 4:.1f}); assignment {after}")
        ok(1 <= moved <= 4, f"a 4th replica: {moved}/{len(MODELS)} models moved (near 1/4, "
                            "never a reshuffle)")
        serve_everywhere(cluster, MODELS, "4 replicas")

        # 3. SIGTERM on replica b with requests running: the hand-over loses nothing
        b = cluster.replicas["b"]
        held = sorted(after.get(b["pod"], []))
        load = Load(cluster.ports(), MODELS, b["agent_port"], b["agent"])
        load.start()
        time.sleep(1)
        t0 = time.monotonic()
        os.killpg(b["agent"].pid, signal.SIGTERM)
        draining = wait_for(lambda: json.loads(kubectl(
            "-n", NS, "get", "configmap", f"modelstatus-{b['pod']}", "-o", "json"))
            .get("data", {}).get("draining") == "true" or None,
            "b's report says draining", timeout=30)
        ok(draining, "SIGTERM: the agent's report says draining at once")
        try:
            b["agent"].wait(timeout=e2e.HANG)
        except Exception:  # noqa: BLE001
            pass
        log(f"b exited {time.monotonic() - t0:.1f} s after SIGTERM (it held {held})")
        ok(b["agent"].poll() is not None, "the draining agent exits once its models are handed over")
        kubectl("-n", NS, "delete", "pod", b["pod"], "--grace-period=0", "--force")
        os.killpg(b["ml"].pid, signal.SIGKILL)
        del cluster.replicas["b"]
        time.sleep(2)
        load.stop.set()
        load.join()
        ok(load.failed == 0, f"hand-over: {load.sent} requests through every agent, "
                             f"{load.failed} failed ({load.failures[:5]})")
        ok(wait_for(lambda: all_loaded(MODELS), "every model loaded after the hand-over"),
           "after the hand-over every model is loaded on the 3 replicas left")

        # 4. a replacement, then a pod lost: every model answers again
        cluster.add("e")
        wait_for(lambda: len(assignments()) == 4 and all_loaded(MODELS), "4 replicas again")
        c = cluster.replicas["c"]
        os.killpg(c["agent"].pid, signal.SIGKILL)
        os.killpg(c["ml"].pid, signal.SIGKILL)
        t0 = time.monotonic()
        kubectl("-n", NS, "delete", "pod", c["pod"], "--grace-period=0", "--force")
        del cluster.replicas["c"]
        back = wait_for(lambda: all(infer_ok(p, n) for p in cluster.ports() for n in MODELS)
                        or None, "every model answers after the pod loss")
        took = time.monotonic() - t0
        log(f"pod lost: every model answered again through every agent after {took:.1f} s")
        ok(back, f"one replica killed and its pod deleted: every model answers again ({took:.1f} s)")
        capacity_step(MODELS)

        stats = [r["agent"] for r in cluster.replicas.values()] + [ctrl]
        for p in stats:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=40)
                except Exception:  # noqa: BLE001
                    os.killpg(p.pid, signal.SIGKILL)
        bad = e2e.sanitizer_logs(work)
        ok(not bad, f"no sanitizer report in the controller and agent logs {bad}")
    except Exception as e:  # noqa: BLE001 - report as a failed step with the cause
        ok(False, f"unexpected error: {e!r}")
    finally:
        rc = e2e.finish(work, namespace=NS)
    return rc


if __name__ == "__main__":
    sys.exit(main())
