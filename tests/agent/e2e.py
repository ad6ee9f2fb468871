#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end test of `modelplane agent`, all real parts, loopback only.

moto's S3 server (behind a small fault-injecting pass-through that makes chosen buckets answer
500 or 403), MLServer with mlserver-sklearn (multi-model, its repository = the agent's model
dir), scikit-learn models trained here, and the agent following models.json written the way
kubelet projects a ConfigMap (a ..data symlink swap). With MODELPLANE_KUBECONFIG set it also
runs `modelplane controller` and drives the agent through the API (TrainedModel -> ConfigMap ->
watch): see kube_phase().

Usage: e2e.py MODELPLANE_BINARY
"""
import http.client
import http.server
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentlib  # noqa: E402
from agentlib import (AZURITE_ACCOUNT, ConfigDir, azure_put, controller_kubeconfig,  # noqa: E402
                      free_port, kubectl, ready_isvc, sa_kubeconfig, trained_model)

BIN = os.path.abspath(sys.argv[1])
KUBE = "--kube" in sys.argv[2:]
SRC = os.environ.get("MODELPLANE_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
HANG = 120  # seconds: a bound an order of magnitude above normal, to detect a hang
procs = []
from agentlib import failures, log, ok, step_no  # noqa: E402,F401 - the TAP helpers, shared


def wait_for(pred, what, timeout=HANG):
    return agentlib.wait_for(pred, what, timeout, interval=0.2)


def start(cmd, log_path, env=None):
    f = open(log_path, "wb")
    p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    procs.append(p)
    return p


def stop_all():
    for p in reversed(procs):
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)


def http_json(method, url, body=None, timeout=30):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, json.loads(r.read() or b"null")


# ---- S3 fault injection: a pass-through to moto that fails chosen buckets ----

class Faults:
    lock = threading.Lock()
    fail500 = {}  # bucket -> remaining 500 answers
    deny = set()  # buckets answering 403
    drop = {}  # bucket -> remaining connections closed without an answer
    stall = set()  # buckets whose object bodies stop after a few bytes
    slow = set()  # buckets whose object bodies trickle (64 KiB per 0.2 s)
    hits = {}


def make_fault_proxy(upstream_port):
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def _bucket(self):
            return self.path.lstrip("/").split("/", 1)[0].split("?", 1)[0]

        def _any(self):
            b = self._bucket()
            with Faults.lock:
                Faults.hits[b] = Faults.hits.get(b, 0) + 1
                n500 = Faults.fail500.get(b, 0)
                if n500 > 0:
                    Faults.fail500[b] = n500 - 1
                denied = b in Faults.deny
                ndrop = Faults.drop.get(b, 0)
                if ndrop > 0:
                    Faults.drop[b] = ndrop - 1
                stall = b in Faults.stall and "list-type" not in self.path
                slow = b in Faults.slow and "list-type" not in self.path
            if ndrop > 0:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            if n500 > 0 or denied:
                code, err = (500, "InternalError") if n500 > 0 else (403, "AccessDenied")
                x = (f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{err}</Code>"
                     f"<Message>injected by the test</Message></Error>").encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(x)))
                self.end_headers()
                self.wfile.write(x)
                return
            c = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=30)
            hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("connection",)}
            c.request(self.command, self.path, body=body, headers=hdrs)
            r = c.getresponse()
            data = r.read()
            self.send_response(r.status)
            for k, v in r.getheaders():
                if k.lower() not in ("connection", "transfer-encoding", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            c.close()
            if stall:
                self.wfile.write(data[:10])
                self.wfile.flush()
                time.sleep(60)
                return
            if slow:
                for i in range(0, len(data), 65536):
                    self.wfile.write(data[i:i + 65536])
                    self.wfile.flush()
                    time.sleep(0.2)
                return
            self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _any

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def serve_dir(path):
    class H(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=path, **kw)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


# ---- models ----

def train(work):
    import joblib
    import numpy as np
    from sklearn.dummy import DummyClassifier
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4))
    y = (x[:, 0] > 0).astype(int)
    out = {}
    for name, model in (("v1", LogisticRegression().fit(x, y)),
                        ("v2", DummyClassifier(strategy="constant", constant=7).fit(x, np.full(200, 7)))):
        d = os.path.join(work, "models", name)
        os.makedirs(d)
        joblib.dump(model, os.path.join(d, "model.joblib"))
        out[name] = d
    d = os.path.join(work, "models", "corrupt")
    os.makedirs(d)
    with open(os.path.join(d, "model.joblib"), "wb") as f:
        f.write(b"this is not a joblib file\n" * 10)
    out["corrupt"] = d
    for d in out.values():
        with open(os.path.join(d, "model-settings.json"), "w") as f:
            json.dump({"implementation": "mlserver_sklearn.SKLearnModel",
                       "parameters": {"uri": "./model.joblib"}}, f)
    return out


def upload(s3, bucket, prefix, d):
    for root, _, files in os.walk(d):
        for fn in files:
            p = os.path.join(root, fn)
            s3.upload_file(p, bucket, prefix + "/" + os.path.relpath(p, d))


def start_gcs(work, models):
    """gcp-storage-emulator (PyPI, tests/agent/gcs-emulator.sh) with iris v1 under gs://models/iris/v1."""
    exe = os.environ.get("MODELPLANE_GCS_EMULATOR")
    if not exe:
        return None
    port = free_port()
    p = start([exe, "start", "--host", "127.0.0.1", "--port", str(port), "--in-memory",
               "--default-bucket", "models"], os.path.join(work, "gcs.log"))
    base = f"http://127.0.0.1:{port}"
    wait_for(lambda: urllib.request.urlopen(f"{base}/storage/v1/b/models/o", timeout=2), "gcs emulator")
    for fn in os.listdir(models["v1"]):
        with open(os.path.join(models["v1"], fn), "rb") as f:
            req = urllib.request.Request(
                f"{base}/upload/storage/v1/b/models/o?uploadType=media&name=iris/v1/{fn}",
                data=f.read(), method="POST")
            urllib.request.urlopen(req, timeout=30).read()
    return p, port


def gcs_steps(cfg, agent_port, gcs):
    """gs:// through the GCS JSON API against the emulator, then with the emulator gone."""
    if not gcs:
        step_no[0] += 1
        print(f"ok {step_no[0]} # SKIP gs://: the GCS emulator could not be installed", flush=True)
        return
    keep = [("iris", "s3://models/iris/v2"), ("other", "s3://models/other")]
    cfg.write(keep + [("fromgcs", "gs://models/iris/v1")])
    ok(wait_for(lambda: agent_status(agent_port).get("fromgcs", {}).get("state") == "Loaded",
                "fromgcs Loaded"), "gs:// model listed and downloaded through the GCS JSON API, loaded")
    ok(infer(agent_port, "fromgcs") == [1, 0], "the gs:// model answers")
    cfg.write(keep + [("fromgcs", "gs://models/iris/v1"), ("nogcs", "gs://models/iris/missing")])
    st = wait_for(lambda: agent_status(agent_port).get("nogcs", {}).get("state") == "FailedToDownload"
                  and agent_status(agent_port), "nogcs failed")
    reason = (st or {}).get("nogcs", {}).get("reason", "")
    ok("no such object or prefix" in reason, f"a missing gs:// prefix is named ({reason[:160]})")
    # the storage endpoint gone: a bounded failure with a reason, not a hang
    os.killpg(gcs[0].pid, signal.SIGKILL)
    gcs[0].wait()
    cfg.write(keep + [("fromgcs", "gs://models/iris/v1"), ("gcsgone", "gs://models/iris/v1")])
    st = wait_for(lambda: agent_status(agent_port).get("gcsgone", {}).get("state") == "FailedToDownload"
                  and agent_status(agent_port), "gcsgone failed")
    reason = (st or {}).get("gcsgone", {}).get("reason", "")
    ok("connect" in reason.lower(), f"GCS endpoint down: FailedToDownload with the reason ({reason[:160]})")
    ok(st and st.get("fromgcs", {}).get("state") == "Loaded", "the loaded gs:// model keeps serving")


def start_sources(work, models, agent_env):
    """The other storage sources of issue 29 item 6, each holding iris v1: Azurite (npm,
    tests/agent/azurite.sh) with Shared Key from a connection string, the fake Hugging Face hub
    (tests/catalog/fake-hf-hub.py) as HF_ENDPOINT, and a service-account key file whose token
    endpoint answers here (GOOGLE_APPLICATION_CREDENTIALS: the gs:// steps use its token).
    Returns what storage_steps() checks."""
    src = {"azure": None, "tokens": []}
    exe = os.environ.get("MODELPLANE_AZURITE")
    if exe:
        port = free_port()
        start([exe, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location",
               os.path.join(work, "azurite"), "--disableTelemetry", "--skipApiVersionCheck"],
              os.path.join(work, "azurite.log"))
        ep = f"http://127.0.0.1:{port}/{AZURITE_ACCOUNT}"
        wait_for(lambda: socket.create_connection(("127.0.0.1", port), timeout=1), "azurite")
        azure_put(ep, "/models?restype=container")
        for fn in os.listdir(models["v1"]):
            with open(os.path.join(models["v1"], fn), "rb") as f:
                azure_put(ep, f"/models/iris/v1/{fn}", f.read(), {"x-ms-blob-type": "BlockBlob"})
        agent_env["AZURE_STORAGE_CONNECTION_STRING"] = "UseDevelopmentStorage=true;BlobEndpoint=" + ep
        src["azure"] = ep
    files = os.path.join(work, "hf")
    shutil.copytree(models["v1"], os.path.join(files, "acme--iris"))
    hub = subprocess.Popen([sys.executable, os.path.join(SRC, "tests", "catalog", "fake-hf-hub.py"),
                            os.path.join(SRC, "tests", "fixtures", "catalog", "hf")],
                           env=dict(os.environ, FAKE_HF_FILES=files), stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    procs.append(hub)
    agent_env["HF_ENDPOINT"] = "http://127.0.0.1:" + hub.stdout.readline().split()[1]

    class Token(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            form = self.rfile.read(int(self.headers["Content-Length"])).decode()
            src["tokens"].append(form)
            body = json.dumps({"access_token": "ya29.e2e", "expires_in": 3599}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Token)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    pem = subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt",
                          "rsa_keygen_bits:2048"], capture_output=True, text=True, check=True).stdout
    key = os.path.join(work, "sa.json")
    with open(key, "w") as f:
        json.dump({"type": "service_account", "client_email": "e2e@p.iam.gserviceaccount.com",
                   "private_key": pem, "token_uri": f"http://127.0.0.1:{srv.server_address[1]}/token"}, f)
    agent_env["GOOGLE_APPLICATION_CREDENTIALS"] = key
    return src


def storage_steps(cfg, agent_port, src, gcs):
    """An Azure blob folder and a Hugging Face repository load on MLServer and answer; the gs://
    model came with the service account's token."""
    keep = [("iris", "s3://models/iris/v2"), ("other", "s3://models/other")]
    uris = [("fromhf", "hf://acme/iris")]
    if src["azure"]:
        uris.append(("fromazure", f"https://{AZURITE_ACCOUNT}.blob.core.windows.net/models/iris/v1"))
    else:
        step_no[0] += 1
        print(f"ok {step_no[0]} # SKIP Azure: azurite could not be installed", flush=True)
    cfg.write(keep + uris)
    for name, uri in uris:
        ok(wait_for(lambda: agent_status(agent_port).get(name, {}).get("state") == "Loaded",
                    f"{name} Loaded"), f"{uri} downloaded and loaded")
        ok(infer(agent_port, name) == [1, 0], f"the model from {uri} answers")
    if gcs:
        ok(len(src["tokens"]) == 1 and "jwt-bearer" in src["tokens"][0],
           f"gs:// used the service account's token, exchanged once ({len(src['tokens'])})")


def start_registry(work):
    """`modelplane registry` on SQLite with iris v2 registered (its artifact s3://models/iris/v2)
    and a version without an artifact."""
    port = free_port()
    start([BIN, "registry", "-n", "127.0.0.1", "-p", str(port), "-d",
           os.path.join(work, "mr.db")], os.path.join(work, "registry.log"))
    base = f"http://127.0.0.1:{port}/api/model_registry/v1alpha3"
    wait_for(lambda: urllib.request.urlopen(f"{base}/registered_models", timeout=2), "registry")
    _, m = http_json("POST", f"{base}/registered_models", {"name": "iris"})
    for name, uri in (("v2", "s3://models/iris/v2"), ("empty", None)):
        _, v = http_json("POST", f"{base}/registered_models/{m['id']}/versions",
                         {"name": name, "registeredModelId": m["id"]})
        if uri:
            http_json("POST", f"{base}/model_versions/{v['id']}/artifacts",
                      {"artifactType": "model-artifact", "name": "model", "uri": uri})
    return port


def registry_steps(cfg, agent_port):
    """model-registry:// in a TrainedModel's storageUri: resolved to the version's artifact
    (s3://, through moto) and loaded; an unknown version and a version without an artifact fail
    with the reason."""
    keep = [("iris", "s3://models/iris/v2"), ("other", "s3://models/other")]
    cfg.write(keep + [("fromreg", "model-registry://iris/v2"),
                      ("nover", "model-registry://iris/v9"),
                      ("noart", "model-registry://iris/empty")])
    ok(wait_for(lambda: agent_status(agent_port).get("fromreg", {}).get("state") == "Loaded",
                "fromreg Loaded"), "model-registry://iris/v2 resolved to s3:// and loaded")
    ok(infer(agent_port, "fromreg") == [7, 7], "the registered model answers (iris v2: [7, 7])")
    st = wait_for(lambda: all(agent_status(agent_port).get(n, {}).get("state") == "FailedToDownload"
                              for n in ("nover", "noart")) and agent_status(agent_port),
                  "nover and noart failed")
    why = {n: (st or {}).get(n, {}).get("reason", "") for n in ("nover", "noart")}
    ok('has no version named "v9"' in why["nover"], f"an unknown version is named ({why['nover'][:160]})")
    ok("has no model artifact with a URI" in why["noart"],
       f"a version without an artifact is named ({why['noart'][:160]})")
    cfg.write(keep)


def sanitizer_logs(work, names=None):
    """The logs in work (the given names, or every *.log) holding a sanitizer report."""
    names = names if names is not None else sorted(f for f in os.listdir(work) if f.endswith(".log"))
    return [f for f in names if os.path.exists(os.path.join(work, f)) and any(
        m in open(os.path.join(work, f), errors="replace").read()
        for m in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"))]


def finish(work, logs=None, tail=40, namespace=None):
    """Stops every process; on failure prints the tails of the logs (the given names, or every
    *.log); removes work and the test's namespace; prints the TAP plan. Returns the exit status."""
    stop_all()
    if failures:
        names = logs if logs is not None else sorted(f for f in os.listdir(work) if f.endswith(".log"))
        for f in names:
            p = os.path.join(work, f)
            if os.path.exists(p):
                log(f"---- {f} (tail) ----")
                for line in open(p, errors="replace").read().splitlines()[-tail:]:
                    log(line)
    shutil.rmtree(work, ignore_errors=True)
    if namespace:
        try:
            kubectl("delete", "namespace", namespace, "--wait=false")
        except RuntimeError as e:
            log(str(e))
    print(f"1..{step_no[0]}")
    return 1 if failures else 0


def main():
    work = tempfile.mkdtemp(prefix="mp-agent-e2e-")
    model_dir = os.path.join(work, "mnt-models")
    config_dir = os.path.join(work, "mnt-configs")
    os.makedirs(model_dir)
    os.makedirs(config_dir)
    try:
        run(work, model_dir, config_dir)
    finally:
        rc = finish(work, ["moto.log", "mlserver.log", "agent.log", "controller.log"], tail=60)
    return rc


def agent_status(port):
    _, st = http_json("GET", f"http://127.0.0.1:{port}/modelplane/agent/models")
    return {m["name"]: m for m in st}


def infer(port, name):
    body = {"inputs": [{"name": "x", "shape": [2, 4], "datatype": "FP64",
                        "data": [1.5, 0, 0, 0, -1.5, 0, 0, 0]}]}
    _, r = http_json("POST", f"http://127.0.0.1:{port}/v2/models/{name}/infer", body)
    return r["outputs"][0]["data"]


def start_mlserver(work, venv_bin, model_dir, tag):
    """MLServer (the venv's) on free loopback ports serving @model_dir, loading nothing at start;
    returns the process and its HTTP port."""
    port, grpc, metrics = free_port(), free_port(), free_port()
    env = dict(os.environ, MLSERVER_HOST="127.0.0.1", MLSERVER_HTTP_PORT=str(port),
               MLSERVER_GRPC_PORT=str(grpc), MLSERVER_METRICS_PORT=str(metrics),
               MLSERVER_LOAD_MODELS_AT_STARTUP="false", MLSERVER_PARALLEL_WORKERS="0",
               MLSERVER_METRICS_ENDPOINT="")
    p = start([os.path.join(venv_bin, "mlserver"), "start", model_dir],
              os.path.join(work, f"mlserver-{tag}.log"), env=env)
    return p, port


def start_moto(work, port):
    """moto's S3 server (the test venv's) on 127.0.0.1:port, once it answers; a boto3 client."""
    import boto3

    start([os.path.join(os.path.dirname(sys.executable), "moto_server"), "-H", "127.0.0.1",
           "-p", str(port)], os.path.join(work, "moto.log"))
    wait_for(lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2), "moto")
    return boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def run(work, model_dir, config_dir):
    venv_bin = os.path.dirname(sys.executable)
    moto_port, ml_port, grpc_port, metrics_port, agent_port = (free_port() for _ in range(5))

    s3 = start_moto(work, moto_port)
    faults = make_fault_proxy(moto_port)
    s3_port = faults.server_address[1]
    for b in ("models", "flaky", "denied"):
        s3.create_bucket(Bucket=b)
    models = train(work)
    upload(s3, "models", "iris/v1", models["v1"])
    upload(s3, "models", "iris/v2", models["v2"])
    upload(s3, "models", "broken", models["corrupt"])
    upload(s3, "models", "other", models["v1"])
    upload(s3, "flaky", "m", models["v1"])
    upload(s3, "denied", "m", models["v1"])
    for b in ("slow", "stall", "drop"):
        s3.create_bucket(Bucket=b)
        upload(s3, b, "m", models["v1"])
    s3.put_object(Bucket="slow", Key="m/pad.bin", Body=os.urandom(3 << 20))

    ml_env = dict(os.environ, MLSERVER_HOST="127.0.0.1", MLSERVER_HTTP_PORT=str(ml_port),
                  MLSERVER_GRPC_PORT=str(grpc_port), MLSERVER_METRICS_PORT=str(metrics_port),
                  MLSERVER_LOAD_MODELS_AT_STARTUP="false", MLSERVER_PARALLEL_WORKERS="0",
                  MLSERVER_METRICS_ENDPOINT="")
    start([os.path.join(venv_bin, "mlserver"), "start", model_dir], os.path.join(work, "mlserver.log"),
          env=ml_env)
    ok(wait_for(lambda: urllib.request.urlopen(f"http://127.0.0.1:{ml_port}/v2/health/ready",
                                               timeout=2).status == 200, "mlserver"),
       "MLServer is up")

    gcs = start_gcs(work, models) if not KUBE else None
    agent_env = dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{s3_port}",
                     AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                     AWS_DEFAULT_REGION="us-east-1",
                     SERVING_READINESS_PROBE=json.dumps({"httpGet": {"path": "/v2/health/ready",
                                                                     "port": ml_port}}),
                     )
    agent_env.pop("KUBECONFIG", None)
    if gcs:
        agent_env["STORAGE_EMULATOR_HOST"] = f"127.0.0.1:{gcs[1]}"
    sources = start_sources(work, models, agent_env) if not KUBE else None
    if not KUBE:
        agent_env["MODEL_REGISTRY_BASE_URL"] = f"127.0.0.1:{start_registry(work)}"
    w_ml = ml_port
    world = dict(ml_port=ml_port, agent_port=agent_port, agent_env=agent_env, models=models, s3=s3)
    if KUBE:
        return kube_phase(work, model_dir, config_dir, world)
    cfg = ConfigDir(config_dir)
    cfg.write([("iris", "s3://models/iris/v1")])
    start([BIN, "agent", "--log-format", "text", "--enable-puller", "--config-dir", config_dir, "--model-dir", model_dir,
           "--port", str(agent_port), "--component-port", str(ml_port), "--listen-address",
           "127.0.0.1", "--api-watch", "off", "--log-url", "http://logger", "--logger-tls-skip-verify",
           "false", "--log-batch-size", "1", "--log-marshaller-port", "9083"],
          os.path.join(work, "agent.log"), env=agent_env)

    # readiness on the agent's port, KServe/Knative style
    def probe():
        c = http.client.HTTPConnection("127.0.0.1", agent_port, timeout=5)
        c.request("GET", "/", headers={"K-Network-Probe": "queue"})
        r = c.getresponse()
        r.read()
        return r.status == 200
    ok(wait_for(probe, "agent readiness"), "agent answers K-Network-Probe: queue with 200")
    log = open(os.path.join(work, "agent.log")).read()
    ok("logging requests and responses to http://logger" in log and
       "not implemented, ignored: --log-marshaller-port" in log,
       "KServe's logger flags start the logger (a sink that cannot be reached: inference goes on); "
       "unimplemented ones are named in a warning")

    st = wait_for(lambda: agent_status(agent_port).get("iris", {}).get("state") == "Loaded" and
                  agent_status(agent_port), "iris Loaded")
    ok(st, "TM create: iris downloaded from s3 and loaded")
    ok(os.path.isfile(os.path.join(model_dir, "iris", "model.joblib")), "iris is on disk in the model dir")
    pred = wait_for(lambda: infer(agent_port, "iris"), "inference")
    ok(pred == [1, 0], f"V2 inference through the agent's port answers ({pred})")

    # keep-alive and streaming (chunked) request through the proxy
    c = http.client.HTTPConnection("127.0.0.1", agent_port, timeout=30)
    body = json.dumps({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP64",
                                   "data": [2, 0, 0, 0]}]}).encode()
    statuses = []
    for _ in range(3):
        c.putrequest("POST", "/v2/models/iris/infer")
        c.putheader("Content-Type", "application/json")
        c.putheader("Transfer-Encoding", "chunked")
        c.putheader("X-Test-Header", "passed-through")
        c.endheaders()
        for i in range(0, len(body), 7):
            part = body[i:i + 7]
            c.send(b"%x\r\n%s\r\n" % (len(part), part))
        c.send(b"0\r\n\r\n")
        r = c.getresponse()
        statuses.append((r.status, json.loads(r.read())["outputs"][0]["data"]))
    c.close()
    ok(statuses == [(200, [1])] * 3, f"3 chunked requests on one keep-alive connection ({statuses})")

    # storageUri change: new copy downloaded, swapped, reloaded
    cfg.write([("iris", "s3://models/iris/v2")])
    pred = wait_for(lambda: (lambda p: p if p == [7, 7] else None)(infer(agent_port, "iris")),
                    "iris v2 prediction")
    ok(pred == [7, 7], "storageUri change reloads the new model (prediction changes)")
    ok(open(os.path.join(model_dir, "iris", ".modelplane-source")).readline().strip() ==
       "s3://models/iris/v2", "the directory records its new source")
    ok(not [d for d in os.listdir(model_dir) if d.startswith(".mp-tmp-")], "no temp dirs left")

    # a corrupt model fails to load with the server's reason; others keep serving
    cfg.write([("iris", "s3://models/iris/v2"), ("broken", "s3://models/broken"),
               ("other", "s3://models/other")])
    st = wait_for(lambda: (lambda s: s if s.get("broken", {}).get("state") == "FailedToLoad" and
                           s.get("other", {}).get("state") == "Loaded" else None)(agent_status(agent_port)),
                  "broken FailedToLoad")
    ok(st is not None, "corrupt model: FailedToLoad")
    reason = (st or {}).get("broken", {}).get("reason", "")
    ok("load broken" in reason and "HTTP" in reason and reason == reason.strip(),
       f"the reason carries the server's answer, one trimmed line ({reason[:160]!r})")
    ok(infer(agent_port, "iris") == [7, 7] and infer(agent_port, "other") == [1, 0],
       "the other models keep serving")

    # an archive with ../ entries is refused; nothing is written outside
    web = os.path.join(work, "web")
    os.makedirs(web)
    with tarfile.open(os.path.join(web, "evil.tar.gz"), "w:gz") as t:
        data = b"owned\n"
        ti = tarfile.TarInfo("../../escaped.txt")
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
    with tarfile.open(os.path.join(web, "good.tgz"), "w:gz") as t:
        for fn in os.listdir(models["v1"]):
            t.add(os.path.join(models["v1"], fn), arcname="./" + fn)
    websrv = serve_dir(web)
    wport = websrv.server_address[1]
    cfg.write([("iris", "s3://models/iris/v2"), ("other", "s3://models/other"),
               ("evil", f"http://127.0.0.1:{wport}/evil.tar.gz"),
               ("fromtgz", f"http://127.0.0.1:{wport}/good.tgz")])
    st = wait_for(lambda: (lambda s: s if s.get("evil", {}).get("state") == "FailedToDownload" and
                           s.get("fromtgz", {}).get("state") == "Loaded" else None)(agent_status(agent_port)),
                  "evil refused")
    ok(st is not None, "archive with ../ entries refused; a good .tgz loads")
    reason = (st or {}).get("evil", {}).get("reason", "")
    ok("leaves the model directory" in reason, f"clear reason for the archive ({reason[:160]})")
    ok(not os.path.exists(os.path.join(work, "escaped.txt")) and
       not os.path.exists(os.path.join(model_dir, "escaped.txt")), "nothing escaped the model dir")
    ok(infer(agent_port, "fromtgz") == [1, 0], "the model from the .tgz answers")

    gcs_steps(cfg, agent_port, gcs)
    storage_steps(cfg, agent_port, sources, gcs)
    registry_steps(cfg, agent_port)

    # delete: unloaded and removed (and the failed ones forgotten)
    cfg.write([("other", "s3://models/other")])
    gone = wait_for(lambda: not os.path.exists(os.path.join(model_dir, "iris")) and
                    "iris" not in agent_status(agent_port), "iris removed")
    ok(gone, "delete: iris unloaded and its files removed")
    _, ix = http_json("POST", f"http://127.0.0.1:{ml_port}/v2/repository/index", {})
    ok(not [m for m in ix if m["name"] == "iris"], "iris is no longer in the server's repository")
    ok(infer(agent_port, "other") == [1, 0], "an unrelated delete leaves the other model serving")

    # S3 answering 500 (retried within the transfer) and 403 (reported, retried with backoff)
    Faults.fail500["flaky"] = 2
    Faults.deny.add("denied")
    cfg.write([("other", "s3://models/other"), ("flaky", "s3://flaky/m"), ("denied", "s3://denied/m")])
    st = wait_for(lambda: (lambda s: s if s.get("flaky", {}).get("state") == "Loaded" and
                           s.get("denied", {}).get("state") == "FailedToDownload" else None)(agent_status(agent_port)),
                  "flaky loaded, denied failed")
    ok(st is not None, "S3 500 twice: retried and loaded; S3 403: FailedToDownload")
    reason = (st or {}).get("denied", {}).get("reason", "")
    ok("HTTP 403" in reason and "AccessDenied" in reason, f"403 reason is clear ({reason[:160]})")
    agent_log = open(os.path.join(work, "agent.log")).read()
    ok("HTTP 500 InternalError" in agent_log and "retrying in" in agent_log, "500s are logged with the retry")
    hits0 = Faults.hits.get("denied", 0)
    Faults.deny.discard("denied")
    st = wait_for(lambda: agent_status(agent_port).get("denied", {}).get("state") == "Loaded", "denied recovers")
    ok(st and Faults.hits.get("denied", 0) > hits0, "after the 403 clears, the backoff retry loads it")

    # restart: no marker files; the agent adopts what disk and server agree on
    agent = procs[-1]
    os.killpg(agent.pid, signal.SIGKILL)
    agent.wait()
    start([BIN, "agent", "--log-format", "text", "--enable-puller", "--config-dir", config_dir, "--model-dir", model_dir,
           "--port", str(agent_port), "--component-port", str(ml_port), "--listen-address",
           "127.0.0.1", "--api-watch", "off", "--stall-timeout", "2"], os.path.join(work, "agent2.log"),
          env=agent_env)
    st = wait_for(lambda: (lambda s: s if all(s.get(n, {}).get("state") == "Loaded"
                                              for n in ("other", "flaky", "denied")) else None)(agent_status(agent_port)),
                  "restart converges")
    ok(st is not None, "after SIGKILL and restart every model is Loaded again")
    ok("already loaded" in open(os.path.join(work, "agent2.log")).read(),
       "restart adopts loaded models from the server's index (no reload)")

    # SIGKILL mid-download: nothing half-written counts; the restarted agent completes the work
    Faults.slow.add("slow")
    cfg.write([("other", "s3://models/other"), ("big", "s3://slow/m")])
    partial = wait_for(lambda: [d for d in os.listdir(model_dir) if d.startswith(".mp-tmp-big-")],
                       "download in progress")
    ok(partial and not os.path.exists(os.path.join(model_dir, "big")), "a download in progress lives in a hidden temp dir")
    agent = procs[-1]
    os.killpg(agent.pid, signal.SIGKILL)
    agent.wait()
    ok(not os.path.exists(os.path.join(model_dir, "big")), "SIGKILL mid-download leaves no model directory")
    _, ix = http_json("POST", f"http://127.0.0.1:{w_ml}/v2/repository/index", {})
    ok(not [m for m in ix if m["name"] == "big"], "the model server never saw the partial copy")
    Faults.slow.discard("slow")
    start([BIN, "agent", "--log-format", "text", "--enable-puller", "--config-dir", config_dir, "--model-dir", model_dir,
           "--port", str(agent_port), "--component-port", str(ml_port), "--listen-address",
           "127.0.0.1", "--api-watch", "off", "--stall-timeout", "2"], os.path.join(work, "agent3.log"),
          env=agent_env)
    ok(wait_for(lambda: agent_status(agent_port).get("big", {}).get("state") == "Loaded", "big after restart"),
       "after the restart the download completes and loads")
    ok(not [d for d in os.listdir(model_dir) if d.startswith(".mp-tmp-")], "the crash's temp dir was removed")
    ok(os.path.getsize(os.path.join(model_dir, "big", "pad.bin")) == 3 << 20, "the model is complete")

    # every model on its own track: while one download trickles (about 10 s), a create and a
    # delete are acted on at once (issue 29: a 65 s download delayed them by about 62 s)
    Faults.slow.add("slow")
    cfg.write([("other", "s3://models/other"), ("big", "s3://slow/m"), ("big2", "s3://slow/m")])
    inflight = wait_for(lambda: [d for d in os.listdir(model_dir) if d.startswith(".mp-tmp-big2-")],
                        "big2 downloading")
    ok(inflight, "a second slow download is in progress")
    cfg.write([("other", "s3://models/other"), ("big2", "s3://slow/m"), ("quick", "s3://models/other")])
    st = wait_for(lambda: (lambda s: s if s.get("quick", {}).get("state") == "Loaded" and "big" not in s
                           else None)(agent_status(agent_port)), "quick loaded and big deleted")
    still = [d for d in os.listdir(model_dir) if d.startswith(".mp-tmp-big2-")]
    ok(st is not None and still and st.get("big2", {}).get("state") == "Downloading",
       "a create and a delete were acted on while the slow download was still in flight")
    ok(not os.path.exists(os.path.join(model_dir, "big")), "the deleted model left the disk at once")
    Faults.slow.discard("slow")
    ok(wait_for(lambda: agent_status(agent_port).get("big2", {}).get("state") == "Loaded", "big2 loaded"),
       "the slow download then completes and loads")
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{agent_port}/modelplane/agent/metrics", timeout=5).read().decode()
    ok('modelplane_agent_downloads_total{result="ok"}' in metrics, "the agent's counters are served")

    # a stalled transfer times out (and is retried); dropped connections are retried
    Faults.stall.add("stall")
    Faults.drop["drop"] = 2
    cfg.write([("other", "s3://models/other"), ("stalled", "s3://stall/m"), ("dropped", "s3://drop/m")])
    st = wait_for(lambda: (lambda s: s if s.get("stalled", {}).get("state") == "FailedToDownload" and
                           s.get("dropped", {}).get("state") == "Loaded" else None)(agent_status(agent_port)),
                  "stall timeout")
    ok(st is not None, "stalled S3 body: FailedToDownload after the stall timeout; dropped connections: retried and loaded")
    reason = (st or {}).get("stalled", {}).get("reason", "")
    ok("too slow" in reason or "timed out" in reason.lower(), f"stall reason is clear ({reason[:160]})")
    ok(infer(agent_port, "other") == [1, 0], "the other model kept serving throughout")
    clean_exit(work, procs[-1], ["agent.log", "agent2.log", "agent3.log"])


def clean_exit(work, agent, logs):
    """SIGTERM: exit 0, and no sanitizer report in any of the agent's logs (ASan build)."""
    agent.send_signal(signal.SIGTERM)
    try:
        rc = agent.wait(timeout=60)
    except subprocess.TimeoutExpired:
        rc = None
    ok(rc == 0, f"the agent exits 0 on SIGTERM (got {rc})")
    bad = sanitizer_logs(work, logs)
    ok(not bad, f"no sanitizer report in the agent logs {bad}")


# ---- the API path: modelplane controller + TrainedModels + the agent's ConfigMap watch ----

def kube_phase(work, model_dir, config_dir, w):
    ns = f"agent-e2e-{os.getpid()}"
    agent_port = w["agent_port"]
    kubectl("create", "namespace", ns)
    ctrl_kc = controller_kubeconfig()
    kubectl("-n", ns, "apply", "-f", os.path.join(SRC, "deploy", "agent", "rbac.yaml"))
    agent_kc = wait_for(lambda: sa_kubeconfig(f"{ns}/default"), "default service account")
    ok(agent_kc, "the agent gets a kubeconfig of the namespace's default service account")

    start([BIN, "controller", "--kubeconfig", ctrl_kc, "--namespace", ns,
           "--health-probe-bind-address", "127.0.0.1:0", "--metrics-bind-address", "127.0.0.1:0"],
          os.path.join(work, "controller.log"))
    ready_isvc(ns, "sklearn-mm")

    pod = "sklearn-mm-predictor-0"
    kubectl("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": pod, "namespace": ns, "labels": {"serving.kserve.io/inferenceservice": "sklearn-mm"}},
        "spec": {"containers": [{"name": "kserve-container", "image": "example.invalid/none"}]}}))
    env = dict(w["agent_env"], POD_NAME=pod)
    # the mounted file never changes here: every model arrives through the API watch
    start([BIN, "agent", "--log-format", "text", "--enable-puller", "--config-dir", config_dir, "--model-dir", model_dir,
           "--port", str(agent_port), "--component-port", str(w["ml_port"]), "--listen-address",
           "127.0.0.1", "--api-watch", "on", "--kubeconfig", agent_kc, "--namespace", ns],
          os.path.join(work, "agent.log"), env=env)
    ok(wait_for(lambda: "watching ConfigMap" in open(os.path.join(work, "agent.log")).read(),
                "agent watch"), "the agent watches modelconfig-sklearn-mm-0 through the API")

    def tm(uri):
        return trained_model(ns, "iris", "sklearn-mm", uri)
    t0 = time.monotonic()
    kubectl("apply", "-f", "-", stdin=tm("s3://models/iris/v1"))
    st = wait_for(lambda: agent_status(agent_port).get("iris", {}).get("state") == "Loaded", "iris Loaded")
    log(f"TrainedModel create -> Loaded through the API watch: {time.monotonic() - t0:.2f} s "
        "(download and MLServer load included; kubelet's file path would add its sync period)")
    ok(st, "TrainedModel create -> ConfigMap -> API watch -> downloaded and loaded")
    ok(wait_for(lambda: infer(agent_port, "iris") == [1, 0], "inference"), "V2 inference through the agent")
    ok(not os.listdir(config_dir), "the mounted file played no part")

    def pod_status():
        cm = json.loads(kubectl("-n", ns, "get", "configmap", f"modelstatus-{pod}", "-o", "json"))
        return cm, {m["name"]: m for m in json.loads(cm["data"]["models.json"])}
    st = wait_for(lambda: (lambda cm, m: (cm, m) if m.get("iris", {}).get("state") == "Loaded" else None)(*pod_status()),
                  "per-pod status")
    ok(st, "the per-pod status ConfigMap reports iris Loaded (InferenceService found from the pod's label)")
    if st:
        cm = st[0]
        uid = json.loads(kubectl("-n", ns, "get", "pod", pod, "-o", "json"))["metadata"]["uid"]
        ok([o["uid"] for o in cm["metadata"].get("ownerReferences", [])] == [uid] and
           cm["metadata"]["labels"].get("serving.kserve.io/inferenceservice") == "sklearn-mm",
           "it is owned by the pod and labelled with the InferenceService")

    kubectl("apply", "-f", "-", stdin=tm("s3://models/iris/v2"))
    ok(wait_for(lambda: infer(agent_port, "iris") == [7, 7], "v2"), "TrainedModel storageUri change reloads")

    kubectl("-n", ns, "delete", "trainedmodel", "iris", "--wait=false")
    ok(wait_for(lambda: not os.path.exists(os.path.join(model_dir, "iris")) and
                "iris" not in agent_status(agent_port), "iris removed"),
       "TrainedModel delete unloads and removes the files")
    ok(wait_for(lambda: "iris" not in pod_status()[1], "status without iris"), "the per-pod status drops the deleted model")
    clean_exit(work, procs[-1], ["agent.log"])
    kubectl("-n", ns, "delete", "pod", pod, "--grace-period=0", "--force")
    ok(wait_for(lambda: not kubectl("-n", ns, "get", "configmap", "-l", "modelplane.io/model-status=agent",
                                    "-o", "name").strip(), "garbage collection"),
       "the pod gone, its status object is garbage-collected")
    try:
        kubectl("delete", "namespace", ns, "--wait=false")
    except RuntimeError as e:
        log(str(e))


if __name__ == "__main__":
    sys.exit(main())
