#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The controller's side of the agents' status and of models.json, on a real control plane.

Phase 1 (drift repair, issue 16): `modelplane controller` (shipped RBAC) writes models.json for
a TrainedModel; models.json is then edited by hand in several bad ways (garbage, an orphan
entry, wrong types, a NUL, the key removed) and each time the controller restores its bytes.

Phase 2 (issue 13, "two agents"): two Pod objects of one InferenceService and two
`modelplane agent` processes standing in for them, each with its own MLServer (mlserver-sklearn)
and model directory, downloading from moto's S3 server. The TrainedModel reads ModelLoaded
"2/2 replicas loaded"; one model server killed -> "1/2" with that replica's reason; its pod
deleted -> the garbage collector removes its report and the count is "1/1"; a corrupt model ->
FailedToLoad with MLServer's reason. Ready follows models.json (default), then, with the
controller restarted with --ready-requires-loaded, Ready is False for the model no replica
could load. Phase 3 (heartbeat): the last agent SIGKILLed while its pod lives -> "0/1 replicas
loaded; <pod>: Stale: ..." with no other event; restarted -> "1/1" again.

Usage: e2e_replicas.py MODELPLANE_BINARY (under scripts/with-testenv, in the agent venv)
"""
import json
import os
import signal
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402 - the agent e2e test's helpers (processes, TAP, models, S3)
from agentlib import (controller_kubeconfig, free_port, kubectl, ready_isvc,  # noqa: E402
                      sa_kubeconfig, trained_model)
from e2e import BIN, start_mlserver, HANG, log, ok, start, wait_for  # noqa: E402

NS = f"replicas-{os.getpid()}"
ISVC = "sklearn-mm"
CM = f"modelconfig-{ISVC}-0"


def tm_get(name):
    return json.loads(kubectl("-n", NS, "get", "trainedmodel", name, "-o", "json"))


def condition(name, ctype):
    for c in tm_get(name).get("status", {}).get("conditions", []):
        if c["type"] == ctype:
            return c
    return None


def wait_condition(name, ctype, status, message_prefix=None, reason=None):
    def check():
        c = condition(name, ctype)
        if c and c["status"] == status and (message_prefix is None or
                                            c.get("message", "").startswith(message_prefix)) and \
                (reason is None or c.get("reason") == reason):
            return c
        return None
    return wait_for(check, f"{name} {ctype}={status} {message_prefix or ''}")


def models_json():
    cm = json.loads(kubectl("-n", NS, "get", "configmap", CM, "-o", "json"))
    return cm.get("data", {}).get("models.json")


def start_controller(work, kc, extra=(), tag="1"):
    return start([BIN, "controller", "--kubeconfig", kc, "--namespace", NS,
                  "--health-probe-bind-address", "127.0.0.1:0",
                  "--metrics-bind-address", "127.0.0.1:0", *extra],
                 os.path.join(work, f"controller-{tag}.log"))


def stop(p):
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except Exception:  # noqa: BLE001
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def drift_phase():
    kubectl("apply", "-f", "-", stdin=trained_model(NS, "iris", ISVC, "s3://models/iris/v1"))
    want = wait_for(lambda: (lambda d: d if d and "iris" in d else None)(models_json()),
                    "models.json lists iris")
    ok(want, "the controller writes models.json for the TrainedModel")
    if not want:
        return
    cm = json.loads(kubectl("-n", NS, "get", "configmap", CM, "-o", "json"))
    ok(cm["metadata"].get("labels", {}).get("serving.kserve.io/inferenceservice") == ISVC,
       "the modelconfig ConfigMap carries the InferenceService label the controller watches by")
    ghost = json.loads(want) + [{"modelName": "ghost", "modelSpec": {
        "storageUri": "s3://x/ghost", "framework": "sklearn", "memory": "1Gi"}}]
    edits = [
        ("garbage", "{{{ this is not json"),
        ("an orphan entry", json.dumps(ghost, separators=(",", ":"))),
        ("wrong types", '[{"modelName":123,"modelSpec":"sklearn"}]'),
        ("an empty list", "[]"),
    ]
    for what, data in edits:
        t0 = time.monotonic()
        kubectl("-n", NS, "patch", "configmap", CM, "--type=merge", "-p",
                json.dumps({"data": {"models.json": data}}))
        back = wait_for(lambda: models_json() == want, f"models.json restored after {what}")
        log(f"{what}: restored after {time.monotonic() - t0:.2f} s")
        ok(back, f"a hand-edited models.json ({what}) is restored by the controller")
    kubectl("-n", NS, "patch", "configmap", CM, "--type=json", "-p",
            json.dumps([{"op": "remove", "path": "/data/models.json"}]))
    ok(wait_for(lambda: models_json() == want, "models.json restored after removal"),
       "a removed models.json key is restored")
    # A NUL: the API server accepts it; the informer decodes it (issue 16 item 3) and the
    # planner, which refuses a NUL in models.json, writes the list back.
    kubectl("-n", NS, "patch", "configmap", CM, "--type=merge", "-p",
            json.dumps({"data": {"models.json": want.replace("iris", "ir\u0000is", 1)}}))
    ok(wait_for(lambda: models_json() == want, "models.json restored after a NUL", timeout=30),
       "a hand-edited models.json (a NUL) is restored by the controller")
    # its own write ends there: the ConfigMap stays put (no write loop)
    rv = json.loads(kubectl("-n", NS, "get", "configmap", CM, "-o", "json"))["metadata"]["resourceVersion"]
    time.sleep(3)
    rv2 = json.loads(kubectl("-n", NS, "get", "configmap", CM, "-o", "json"))["metadata"]["resourceVersion"]
    ok(rv == rv2, f"no further writes once restored (resourceVersion {rv} -> {rv2})")


def replicas_phase(work, ctrl_kc):
    venv_bin = os.path.dirname(sys.executable)
    moto_port = free_port()
    s3 = e2e.start_moto(work, moto_port)
    s3.create_bucket(Bucket="models")
    models = e2e.train(work)
    e2e.upload(s3, "models", "iris/v1", models["v1"])
    e2e.upload(s3, "models", "broken", models["corrupt"])

    kubectl("-n", NS, "apply", "-f", os.path.join(e2e.SRC, "deploy", "agent", "rbac.yaml"))
    agent_kc = wait_for(lambda: sa_kubeconfig(f"{NS}/default"), "default service account")
    replicas = {}
    for tag in ("a", "b"):
        pod = f"{ISVC}-predictor-{tag}"
        model_dir = os.path.join(work, f"models-{tag}")
        config_dir = os.path.join(work, f"configs-{tag}")
        os.makedirs(model_dir)
        os.makedirs(config_dir)
        ml, ml_port = start_mlserver(work, venv_bin, model_dir, tag)
        kubectl("apply", "-f", "-", stdin=json.dumps({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": pod, "namespace": NS,
                         "labels": {"serving.kserve.io/inferenceservice": ISVC}},
            "spec": {"containers": [{"name": "kserve-container", "image": "example.invalid/none"}]}}))
        replicas[tag] = dict(pod=pod, model_dir=model_dir, config_dir=config_dir, ml=ml,
                             ml_port=ml_port, agent_port=free_port())
    for tag, r in replicas.items():
        ok(wait_for(lambda: urllib.request.urlopen(
            f"http://127.0.0.1:{r['ml_port']}/v2/health/ready", timeout=2).status == 200,
            f"mlserver {tag}"), f"MLServer {tag} is up")
        env = dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{moto_port}",
                   AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                   AWS_DEFAULT_REGION="us-east-1", POD_NAME=r["pod"])
        env.pop("KUBECONFIG", None)
        r["agent_env_s3"] = f"http://127.0.0.1:{moto_port}"
        r["agent_cmd"] = [BIN, "agent", "--log-format", "text", "--enable-puller",
                          "--config-dir", r["config_dir"], "--model-dir", r["model_dir"],
                          "--port", str(r["agent_port"]), "--component-port", str(r["ml_port"]),
                          "--listen-address", "127.0.0.1", "--api-watch", "on",
                          "--kubeconfig", agent_kc, "--namespace", NS,
                          "--status-heartbeat", "1"]
        r["agent"] = start(r["agent_cmd"], os.path.join(work, f"agent-{tag}.log"), env=env)

    pa, pb = replicas["a"]["pod"], replicas["b"]["pod"]
    c = wait_condition("iris", "ModelLoaded", "True", "2/2 replicas loaded", "Loaded")
    ok(c, "two agents: ModelLoaded True, '2/2 replicas loaded'")
    detail = json.loads(tm_get("iris")["status"].get("annotations", {}).get(
        "modelplane.io/replicas", "[]"))
    ok([{k: d.get(k) for k in ("pod", "state")} for d in detail] ==
       [{"pod": pa, "state": "Loaded"}, {"pod": pb, "state": "Loaded"}] and
       all(d.get("since", "").endswith("Z") for d in detail),
       f"per-replica detail (with since) in status.annotations survives the CRD schema: {detail}")
    ok(e2e.infer(replicas["a"]["agent_port"], "iris") == [1, 0] and
       e2e.infer(replicas["b"]["agent_port"], "iris") == [1, 0], "both replicas serve iris")

    # replica b's model server dies: the agent notices (its periodic pass) and reports it
    os.killpg(replicas["b"]["ml"].pid, signal.SIGKILL)
    replicas["b"]["ml"].wait()
    c = wait_condition("iris", "ModelLoaded", "False", f"1/2 replicas loaded; {pb}: FailedToLoad: ",
                       "FailedToLoad")
    ok(c and "model server unavailable" in c.get("message", ""),
       f"b's model server killed: 1/2 with b's reason ({c and c.get('message')})")
    ok((condition("iris", "Ready") or {}).get("status") == "True",
       "Ready still means listed in models.json (flag off)")

    # pod b deleted: its report is garbage-collected and b no longer counts
    stop(replicas["b"]["agent"])
    kubectl("-n", NS, "delete", "pod", pb, "--grace-period=0", "--force")
    c = wait_condition("iris", "ModelLoaded", "True", "1/1 replicas loaded", "Loaded")
    ok(c, "pod b deleted: the count shrinks to 1/1")

    kubectl("apply", "-f", "-", stdin=trained_model(NS, "broken", ISVC, "s3://models/broken"))
    c = wait_condition("broken", "ModelLoaded", "False", f"0/1 replicas loaded; {pa}: FailedToLoad: ",
                       "FailedToLoad")
    ok(c and len(c["message"]) > len(f"0/1 replicas loaded; {pa}: FailedToLoad: "),
       f"a corrupt model: FailedToLoad with the model server's reason ({c and c.get('message')})")
    ok((condition("broken", "Ready") or {}).get("status") == "True",
       "flag off (default): Ready is True although no replica loaded it, as in KServe")
    return replicas


def ready_phase(work, ctrl_kc, ctrl):
    stop(ctrl)
    ctrl = start_controller(work, ctrl_kc, ["--ready-requires-loaded"], tag="2")
    c = wait_condition("broken", "Ready", "False", None, "FailedToLoad")
    ok(c, f"--ready-requires-loaded: Ready False for the model no replica loaded ({c and c.get('message')})")
    c = wait_condition("iris", "Ready", "True")
    ok(c, "--ready-requires-loaded: Ready True for the model one replica loaded")
    return ctrl


def stale_phase(work, replicas):
    """Replica a's agent SIGKILLed while its pod lives: its report stays (no garbage collection)
    but its heartbeat stops, and the controller stops counting it as loaded with no other event;
    restarted, it counts again."""
    a = replicas["a"]
    cm = json.loads(kubectl("-n", NS, "get", "configmap", f"modelstatus-{a['pod']}", "-o", "json"))
    ok(cm["data"].get("heartbeat") and cm["data"].get("heartbeatPeriodSeconds") == "1",
       f"the report carries the heartbeat and its period ({cm['data'].get('heartbeat')})")
    os.killpg(a["agent"].pid, signal.SIGKILL)
    a["agent"].wait()
    c = wait_condition("iris", "ModelLoaded", "Unknown",
                       f"0/1 replicas loaded; {a['pod']}: Stale: no heartbeat since ", "Stale")
    ok(c, f"agent SIGKILLed, pod alive: ModelLoaded 0/1 with the stale reason ({c and c.get('message')})")
    detail = json.loads(tm_get("iris")["status"].get("annotations", {}).get(
        "modelplane.io/replicas", "[]"))
    ok([d.get("state") for d in detail] == ["Stale"], f"the per-replica detail says Stale: {detail}")
    rv = tm_get("iris")["metadata"]["resourceVersion"]
    time.sleep(3)
    ok(tm_get("iris")["metadata"]["resourceVersion"] == rv,
       "a stale replica's status is written once, not on every pass")
    env = dict(os.environ, AWS_ENDPOINT_URL=a["agent_env_s3"], AWS_ACCESS_KEY_ID="testing",
               AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1", POD_NAME=a["pod"])
    env.pop("KUBECONFIG", None)
    a["agent"] = start(a["agent_cmd"], os.path.join(work, "agent-a2.log"), env=env)
    c = wait_condition("iris", "ModelLoaded", "True", "1/1 replicas loaded", "Loaded")
    ok(c, "the agent restarted: its heartbeat counts again, 1/1 replicas loaded")


def main():
    work = tempfile.mkdtemp(prefix="mp-replicas-")
    try:
        kubectl("create", "namespace", NS)
        ctrl_kc = controller_kubeconfig()
        ctrl = start_controller(work, ctrl_kc)
        ready_isvc(NS, ISVC)
        drift_phase()
        replicas = replicas_phase(work, ctrl_kc)
        ctrl = ready_phase(work, ctrl_kc, ctrl)
        stale_phase(work, replicas)
        for p in list(e2e.procs):
            if p.args[0] == BIN:
                stop(p)
        bad = e2e.sanitizer_logs(work)
        ok(not bad, f"no sanitizer report in the controller and agent logs {bad}")
    except Exception as e:  # noqa: BLE001 - report as a failed step with the cause
        ok(False, f"unexpected error: {e!r}")
    finally:
        rc = e2e.finish(work, namespace=NS)
    return rc


if __name__ == "__main__":
    sys.exit(main())
