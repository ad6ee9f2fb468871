#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Drop-in (issue 13): `modelplane agent` on models.json written by KServe's own controller.

KServe v0.20.0's TrainedModelReconciler (bench/peers/kserve-tm, built and cached by
bench/peers/kserve-tm/build; its path in MODELPLANE_KSERVE_TM) runs on a real control plane and
writes modelconfig-<isvc>-0 for TrainedModels, as on a KServe cluster. The bytes of that
ConfigMap's models.json are projected into the agent's config directory the way kubelet does
(a ..data swap), and `modelplane agent` (file path only, as with KServe's agent) downloads the
models from moto's S3 server and loads them on MLServer (mlserver-sklearn): both load and
answer inferences through the agent's port. Then a TrainedModel is deleted: KServe's controller
rewrites models.json, and the agent unloads and removes that model while the other keeps serving.

Usage: e2e_kserve.py MODELPLANE_BINARY (under scripts/with-testenv, in the agent venv)
"""
import json
import os
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402 - the agent e2e test's helpers (processes, TAP, models, S3)
from agentlib import ConfigDir, free_port, kubectl, ready_isvc, trained_model  # noqa: E402
from e2e import BIN, log, ok, start, wait_for  # noqa: E402

NS = f"kserve-tm-{os.getpid()}"
ISVC = "sklearn-mm"
CM = f"modelconfig-{ISVC}-0"


def models_json():
    cm = json.loads(kubectl("-n", NS, "get", "configmap", CM, "-o", "json"))
    return cm.get("data", {}).get("models.json")


def listed(data):
    try:
        return sorted(e["modelName"] for e in json.loads(data))
    except (TypeError, ValueError, KeyError):
        return None


def run(work):
    peer = os.environ["MODELPLANE_KSERVE_TM"]
    kubectl("create", "namespace", NS)
    ready_isvc(NS, ISVC)
    # created by KServe's InferenceService controller on a real cluster (its TrainedModel
    # reconciler only updates it)
    kubectl("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": CM, "namespace": NS}, "data": {"models.json": "[]"}}))
    ctrl = start([peer, "--kubeconfig", os.environ["MODELPLANE_KUBECONFIG"]],
                 os.path.join(work, "controller.log"))
    ok(wait_for(lambda: ctrl.poll() is None and "Starting workers" in open(
        os.path.join(work, "controller.log"), errors="replace").read(), "KServe's controller"),
       "KServe v0.20.0's TrainedModel controller runs")

    venv_bin = os.path.dirname(sys.executable)
    moto_port, ml_port, grpc_port, metrics_port, agent_port = (free_port() for _ in range(5))
    s3 = e2e.start_moto(work, moto_port)
    s3.create_bucket(Bucket="models")
    models = e2e.train(work)
    e2e.upload(s3, "models", "iris/v1", models["v1"])
    e2e.upload(s3, "models", "const/v2", models["v2"])

    for name, uri in (("iris", "s3://models/iris/v1"), ("const", "s3://models/const/v2")):
        kubectl("apply", "-f", "-", stdin=trained_model(NS, name, ISVC, uri))
    data = wait_for(lambda: (lambda d: d if listed(d) == ["const", "iris"] else None)(models_json()),
                    "KServe's controller lists both models")
    ok(data, "KServe's controller writes both TrainedModels into models.json")
    if not data:
        return
    log(f"models.json by KServe: {data}")

    ml_env = dict(os.environ, MLSERVER_HOST="127.0.0.1", MLSERVER_HTTP_PORT=str(ml_port),
                  MLSERVER_GRPC_PORT=str(grpc_port), MLSERVER_METRICS_PORT=str(metrics_port),
                  MLSERVER_LOAD_MODELS_AT_STARTUP="false", MLSERVER_PARALLEL_WORKERS="0",
                  MLSERVER_METRICS_ENDPOINT="")
    model_dir = os.path.join(work, "mnt-models")
    config_dir = os.path.join(work, "mnt-configs")
    os.makedirs(model_dir)
    os.makedirs(config_dir)
    start([os.path.join(venv_bin, "mlserver"), "start", model_dir],
          os.path.join(work, "mlserver.log"), env=ml_env)
    ok(wait_for(lambda: urllib.request.urlopen(f"http://127.0.0.1:{ml_port}/v2/health/ready",
                                               timeout=2).status == 200, "mlserver"),
       "MLServer is up")
    cfg = ConfigDir(config_dir)
    cfg.write_bytes(data.encode())
    agent_env = dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{moto_port}",
                     AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                     AWS_DEFAULT_REGION="us-east-1")
    agent_env.pop("KUBECONFIG", None)
    # KServe's pod mutator's arguments, plus the test's ports
    agent = start([BIN, "agent", "--log-format", "text", "--enable-puller", "--config-dir",
                   config_dir, "--model-dir", model_dir, "--port", str(agent_port),
                   "--component-port", str(ml_port), "--listen-address", "127.0.0.1",
                   "--api-watch", "off"], os.path.join(work, "agent.log"), env=agent_env)

    def states():
        return {n: m["state"] for n, m in e2e.agent_status(agent_port).items()}

    st = wait_for(lambda: (lambda s: s if s == {"iris": "Loaded", "const": "Loaded"} else None)(states()),
                  "both models loaded")
    ok(st, f"the agent loads both models of KServe's models.json ({st})")
    ok(wait_for(lambda: e2e.infer(agent_port, "iris") == [1, 0], "iris answers"),
       "iris answers a V2 inference through the agent's port")
    ok(wait_for(lambda: e2e.infer(agent_port, "const") == [7, 7], "const answers"),
       "const answers a V2 inference through the agent's port")

    kubectl("-n", NS, "delete", "trainedmodel", "const", "--wait=false")
    data = wait_for(lambda: (lambda d: d if listed(d) == ["iris"] else None)(models_json()),
                    "KServe's controller drops const")
    ok(data, "a TrainedModel deleted: KServe's controller rewrites models.json without it")
    if not data:
        return
    cfg.write_bytes(data.encode())
    st = wait_for(lambda: (lambda s: s if s == {"iris": "Loaded"} else None)(states()),
                  "const unloaded")
    ok(st and not os.path.exists(os.path.join(model_dir, "const")),
       f"the agent unloads and removes the deleted model ({st})")
    ok(e2e.infer(agent_port, "iris") == [1, 0], "the other model keeps serving")
    ok(agent.poll() is None, "the agent is still running")


def main():
    work = tempfile.mkdtemp(prefix="mp-agent-kserve-")
    try:
        run(work)
        e2e.stop_all()
        bad = e2e.sanitizer_logs(work, ["agent.log"])
        ok(not bad, "no sanitizer report in the agent's log")
    except Exception as e:  # noqa: BLE001 - report as a failed step with the cause
        ok(False, f"unexpected error: {e!r}")
    finally:
        rc = e2e.finish(work, ["controller.log", "moto.log", "mlserver.log", "agent.log"],
                        namespace=NS)
    return rc


if __name__ == "__main__":
    sys.exit(main())
