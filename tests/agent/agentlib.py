# SPDX-License-Identifier: Apache-2.0
"""Pieces shared by tests/agent/e2e.py, bench/agent/bench.py and the TAP scripts of tests/agent
and tests/transfer (case(), expect()): models.json written the way
kubelet projects a ConfigMap volume, free loopback ports, the test control plane's kubectl
and service-account kubeconfigs (scripts/testenv), and Azure Shared Key uploads (Azurite)."""
import base64
import hashlib
import hmac
import http.client
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse
from email.utils import formatdate

SRC = os.environ.get("MODELPLANE_SOURCE_ROOT",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


# ---- TAP: one line per step, "# " comments; the steps failed so far in `failures` ----

failures = []
step_no = [0]


def log(msg):
    print(f"# {msg}", flush=True)


def ok(cond, what):
    step_no[0] += 1
    print(f"{'ok' if cond else 'not ok'} {step_no[0]} - {what}", flush=True)
    if not cond:
        failures.append(what)
    return cond


def expect(cond, msg):
    """The check inside a case(): raises AssertionError(msg) unless cond."""
    if not cond:
        raise AssertionError(msg)


def case(fn):
    """Runs fn() as one TAP step named after it: ok, or not ok with the exception it raised."""
    step_no[0] += 1
    try:
        fn()
        print(f"ok {step_no[0]} - {fn.__name__}", flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is a test failure
        failures.append(fn.__name__)
        print(f"not ok {step_no[0]} - {fn.__name__}: {type(e).__name__}: {e}", flush=True)


def skip(what, why):
    step_no[0] += 1
    print(f"ok {step_no[0]} # SKIP {what}: {why}", flush=True)


def wait_for(pred, what, timeout=120, interval=0.2):
    """pred() until it returns something true (returned) or timeout seconds pass (None, logged
    with the last answer or exception)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = pred()
            if last:
                return last
        except Exception as e:  # noqa: BLE001 - polling a server that may not be up yet
            last = e
        time.sleep(interval)
    log(f"timed out waiting for {what}; last: {last!r}")
    return None


SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def agent_port(p, out, timeout=20):
    """The port a `modelplane agent --port 0` announces ("listening on HOST:PORT" in its output
    file out), or None when it exits or announces none within timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(out) as f:
            for line in f:
                if line.startswith("listening on "):
                    return int(line.rsplit(":", 1)[1])
        if p.poll() is not None:
            return None
        time.sleep(0.05)
    return None


def sanitizer_clean(text):
    """True when a process log holds no ASan, LSan or UBSan report."""
    return not any(m in text for m in SANITIZER_MARKS)


def finish_work(work, log_path):
    """After a test: on a failure the last 40 lines of log_path go to the TAP output and work is
    kept; otherwise work is removed (kept with MODELPLANE_KEEP set)."""
    if failures:
        log(f"agent log ({log_path}), last lines:")
        try:
            for ln in open(log_path, errors="replace").read().splitlines()[-40:]:
                log("  " + ln)
        except OSError:
            pass
    elif not os.environ.get("MODELPLANE_KEEP"):
        shutil.rmtree(work, ignore_errors=True)
    else:
        log(f"kept {work}")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def azure_put(endpoint, path, body=b"", headers=None):
    """A Shared Key PUT to Azurite's well-known account (written from Azure's documentation,
    independently of the agent's signer): a container (path "/c?restype=container") or a blob
    (x-ms-blob-type: BlockBlob)."""
    headers = dict(headers or {})
    headers["x-ms-date"] = formatdate(usegmt=True)
    headers["x-ms-version"] = "2021-08-06"
    u = urllib.parse.urlsplit(endpoint + path)
    xms = "".join(f"{k}:{headers[k]}\n" for k in sorted(h for h in headers if h.startswith("x-ms-")))
    query = sorted(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
    res = f"/{AZURITE_ACCOUNT}{u.path}" + "".join(f"\n{k.lower()}:{v}" for k, v in query)
    sts = "\n".join(["PUT", "", "", str(len(body)) if body else "", headers.get("Content-MD5", ""),
                     headers.get("Content-Type", ""), "", "", "", "", "", ""]) + "\n" + xms + res
    sig = base64.b64encode(hmac.new(base64.b64decode(AZURITE_KEY), sts.encode(),
                                    hashlib.sha256).digest())
    headers["Authorization"] = f"SharedKey {AZURITE_ACCOUNT}:{sig.decode()}"
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("PUT", u.path + ("?" + u.query if u.query else ""), body=body, headers=headers)
    r = c.getresponse()
    data = r.read()
    if r.status not in (200, 201):
        raise RuntimeError(f"PUT {path}: {r.status} {data[:300]!r}")


def kubectl(*args, stdin=None):
    d = os.environ["MODELPLANE_TESTENV_DIR"]
    r = subprocess.run([os.path.join(SRC, "scripts", "testenv"), "kubectl", d, *args],
                       input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def sa_kubeconfig(sa):
    d = os.environ["MODELPLANE_TESTENV_DIR"]
    return subprocess.run([os.path.join(SRC, "scripts", "testenv"), "kubeconfig", d, sa],
                          capture_output=True, text=True, check=True).stdout.strip()


def controller_kubeconfig():
    """The shipped controller RBAC applied, and its service account's kubeconfig."""
    for f in ("namespace.yaml", "serviceaccount.yaml", "clusterrole.yaml", "clusterrolebinding.yaml",
              "role.yaml"):
        kubectl("apply", "-f", os.path.join(SRC, "deploy", "controller", f))
    return sa_kubeconfig("modelplane-system/modelplane-controller")


def ready_isvc(ns, name, memory="4Gi"):
    """A multi-model sklearn InferenceService, marked ready (no serving runtime runs here)."""
    isvc = {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"predictor": {"minReplicas": 1, "sklearn": {
                "name": "kserve-container",
                "resources": {"requests": {"cpu": "1", "memory": memory},
                              "limits": {"cpu": "1", "memory": memory}}}}}}
    kubectl("apply", "-f", "-", stdin=json.dumps(isvc))
    kubectl("-n", ns, "patch", "inferenceservice", name, "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": {"url": f"http://{name}.{ns}.example.com", "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
                for t in ("IngressReady", "PredictorReady", "Ready")]}}))


def trained_model(ns, name, isvc, uri, memory="256Mi"):
    return json.dumps({"apiVersion": "serving.kserve.io/v1alpha1", "kind": "TrainedModel",
                       "metadata": {"name": name, "namespace": ns},
                       "spec": {"inferenceService": isvc,
                                "model": {"storageUri": uri, "framework": "sklearn", "memory": memory}}})


class ConfigDir:
    """models.json projected as kubelet does: ..<ts>/models.json, ..data -> ..<ts>, models.json -> ..data/models.json."""

    def __init__(self, path):
        self.path = path
        self.n = 0
        os.symlink("..data/models.json", os.path.join(path, "models.json"))

    def write(self, entries):
        return self.write_bytes(json.dumps(
            [{"modelName": n, "modelSpec": {"storageUri": u, "framework": "sklearn", "memory": "1Gi"}}
             for n, u in entries], separators=(",", ":")).encode())

    def write_bytes(self, data):
        """models.json exactly as given (e.g. the bytes of a ConfigMap another controller wrote).
        Returns the time.monotonic() of the ..data swap (what an agent watching the dir sees),
        read just before the rename: read after it, a fast agent's reaction could be stamped
        earlier than the swap when this thread is preempted in between (the agent bench then
        missed an unload it had got, at load average 3)."""
        self.n += 1
        ts = os.path.join(self.path, f"..2026_12_01_{self.n:06d}")
        os.mkdir(ts)
        with open(os.path.join(ts, "models.json"), "wb") as f:
            f.write(data)
        old = os.path.realpath(os.path.join(self.path, "..data")) if os.path.islink(
            os.path.join(self.path, "..data")) else None
        tmp = os.path.join(self.path, "..data_tmp")
        os.symlink(os.path.basename(ts), tmp)
        swapped = time.monotonic()
        os.rename(tmp, os.path.join(self.path, "..data"))
        if old:
            shutil.rmtree(old)
        return swapped
