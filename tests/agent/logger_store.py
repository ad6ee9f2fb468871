#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`modelplane agent --log-url s3://|gs://|abfs://` (docs/agent.md "Blob store"): the request
logger's records uploaded to moto's S3 server, the GCS emulator and Azurite (the stores the
download tests use), in front of a small fake model server, each checked by its key
(<prefix>/<namespace>/<isvc>/<component>/<store-path>/<id>-request|response.<ext>) and its body
(KServe's json and csv records). S3's SigV4 verified with botocore's signer (moto checks none);
a GCS service-account key (the JWT verified with openssl, the read-write scope, one exchange);
Azurite refusing a wrong key; an Azure service principal's token. Then a store that answers
500 (retried a bounded number of times, then dropped and counted as failed), one that answers
403 (not retried, counted) and one that stalls (a full queue drops and counts; inference
answers every request; the agent stops at SIGTERM). Batches (--log-batch-size, with and
without --log-batch-interval) into a directory; a marshaller of one's own (--log-marshaller-url:
KServe's request, its answer stored under its extension; a 500 and a bad extension fail the
batch); and KServe v0.20.0's own agent as the marshaller (its csv equal to ours, its Parquet), in
a network namespace of its own. No wall-clock assertion.
Usage: logger_store.py MODELPLANE_BINARY (run with the agent test venv's python)."""
import base64
import csv
import hashlib
import http.client
import http.server
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentlib  # noqa: E402
from agentlib import (AZURITE_ACCOUNT, AZURITE_KEY, agent_port, azure_put, failures,  # noqa: E402
                      free_port, ok, sanitizer_clean, skip, step_no)
from agentlib import log as note  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
procs = []
BODY = {"inputs": [{"name": "x", "shape": [1, 2], "datatype": "FP64", "data": [1.0, 2.0]}]}
NAMES = ["--inference-service", "iris", "--namespace", "default", "--component", "predictor",
         "--source-uri", "http://src/", "--log-store-path", "sp"]


def wait_for(pred, timeout=30):
    return agentlib.wait_for(pred, "the condition", timeout, 0.05)


def wait_port(port):
    return wait_for(lambda: socket.create_connection(("127.0.0.1", port), timeout=1).close() or 1)


def start(cmd, log_path, env=None):
    log = open(log_path, "w")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                         start_new_session=True)
    procs.append(p)
    return p


def serve(handler):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


class Quiet(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def send(self, status, body=b"", ctype="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Model(Quiet):
    """The model server: every infer answered with its input's data doubled."""

    def do_POST(self):
        req = json.loads(self.body())
        out = {"outputs": [{"name": "y", "shape": [1, 2], "datatype": "FP64",
                            "data": [2 * v for v in req["inputs"][0]["data"]]}]}
        self.send(200, json.dumps(out).encode())


def agent(bin_, work, name, model_port, extra, env):
    out = os.path.join(work, f"{name}.log")
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("AWS_", "AZURE_", "GOOGLE_", "STORAGE_EMULATOR", "S3_"))}
    e.update(env, MODELPLANE_LOG_LEVEL="info")
    p = start([bin_, "agent", "--port", "0", "--listen-address", "127.0.0.1", "--component-port",
               str(model_port), "--api-watch", "off", *extra], out, env=e)
    port = agent_port(p, out)
    if port is None:
        with open(out) as f:
            note(f"{name} did not start: {f.read()[-2000:]}")
    return p, port


def infer(port, ce_id):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("POST", "/v2/models/iris/infer", body=json.dumps(BODY).encode(),
              headers={"Content-Type": "application/json", "Ce-Id": ce_id})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/modelplane/agent/metrics",
                                timeout=5) as r:
        return {k: int(v) for k, v in (ln.split() for ln in r.read().decode().splitlines()
                                       if ln and not ln.startswith("#"))}


def stop(p):
    p.terminate()
    try:
        return p.wait(20)
    except subprocess.TimeoutExpired:
        p.kill()
        return -9


def check_records(what, fmt, get, prefix, ce_id, answer):
    """Both records of ce_id under KServe's key, with KServe's fields and the bodies."""
    base = f"{prefix}default/iris/predictor/sp/{ce_id}"
    keys = (f"{base}-request.{fmt}", f"{base}-response.{fmt}")
    got = wait_for(lambda: all(get(k) is not None for k in keys) and [get(k) for k in keys], 15)
    if not ok(bool(got), f"{what}: {keys[0]} and the response's record uploaded"):
        return
    recs = []
    for data in got:
        if fmt == "json":
            recs.append(json.loads(data))
        else:
            rows = list(csv.DictReader(io.StringIO(data.decode())))
            recs.append(rows[0] if len(rows) == 1 else {})
    good = all(r.get("id") == ce_id and r.get("inferenceService") == "iris" and
               r.get("namespace") == "default" and r.get("component") == "predictor" and
               r.get("sourceUri") == "http://src/" for r in recs)
    good = good and recs[0]["reqType"].endswith(".request") and \
        recs[1]["reqType"].endswith(".response") and \
        json.loads(base64.b64decode(recs[0]["bytes"])) == BODY and \
        json.loads(base64.b64decode(recs[1]["bytes"])) == json.loads(answer)
    ok(good, f"{what}: KServe's {fmt} records, the request's and the answer's bodies")


def logged(bin_, work, model_port, name, url, fmt, env, get, prefix):
    p, port = agent(bin_, work, name, model_port,
                    ["--log-url", url, "--log-store-format", fmt, *NAMES], env)
    if not ok(port is not None, f"{name}: the agent starts with --log-url {url}"):
        return
    st, answer = infer(port, f"id-{name}")
    ok(st == 200 and json.loads(answer)["outputs"][0]["data"] == [2.0, 4.0],
       f"{name}: inference answered through the logging agent")
    check_records(name, fmt, get, prefix, f"id-{name}", answer)
    # an object is visible before its worker counts it: wait for the count
    m = wait_for(lambda: (lambda m: m.get("modelplane_agent_log_sent_total") == 2 and m)(
        metrics(port)), 10) or metrics(port)
    ok(m.get("modelplane_agent_log_sent_total") == 2 and
       m.get("modelplane_agent_log_failed_total") == 0,
       f"{name}: 2 records counted as sent ({m.get('modelplane_agent_log_sent_total')})")
    ok(stop(p) == 0, f"{name}: the agent exits 0")


# ---- the stores ----

def s3_steps(bin_, work, model_port, venv_bin):
    import boto3
    from botocore.exceptions import ClientError

    port = free_port()
    start([os.path.join(venv_bin, "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
          os.path.join(work, "moto.log"))
    if not ok(wait_for(lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)),
              "moto's S3 server answers"):
        return
    s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                      aws_access_key_id="test", aws_secret_access_key="test")
    s3.create_bucket(Bucket="logs")

    def get(key):
        try:
            return s3.get_object(Bucket="logs", Key=key)["Body"].read()
        except ClientError:
            return None

    env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "test",
           "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"}
    logged(bin_, work, model_port, "s3-json", "s3://logs/pfx/", "json", env, get, "pfx/")
    logged(bin_, work, model_port, "s3-csv", "s3://logs", "csv", env, get, "")
    sigv4_step(bin_, work, model_port)


def sigv4_step(bin_, work, model_port):
    """moto takes any signature: a store that checks each PUT's SigV4 with botocore's signer
    (the headers the request names in SignedHeaders) and its x-amz-content-sha256."""
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    seen = []

    class H(Quiet):
        def do_PUT(self):
            body = self.body()
            auth = self.headers.get("Authorization", "")
            names = auth.split("SignedHeaders=")[-1].split(",")[0].split(";")
            req = AWSRequest(method="PUT", url=f"http://{self.headers['Host']}{self.path}",
                             data=body, headers={h: self.headers[h] for h in names})
            req.context["timestamp"] = self.headers.get("x-amz-date", "")
            signer = S3SigV4Auth(Credentials("key-id", "secret"), "s3", "eu-west-1")
            want = signer.signature(signer.string_to_sign(req, signer.canonical_request(req)),
                                    req)
            seen.append(auth.endswith("Signature=" + want) and "content-type" in names and
                        self.headers.get("x-amz-content-sha256") ==
                        hashlib.sha256(body).hexdigest())
            self.send(200)

    srv = serve(H)
    env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{srv.server_address[1]}",
           "AWS_ACCESS_KEY_ID": "key-id", "AWS_SECRET_ACCESS_KEY": "secret",
           "AWS_REGION": "eu-west-1"}
    p, port = agent(bin_, work, "s3-sigv4", model_port,
                    ["--log-url", "s3://logs/with space+plus", *NAMES], env)
    if ok(port is not None, "s3-sigv4: the agent starts"):
        infer(port, "id a+b")
        ok(wait_for(lambda: len(seen) == 2) and all(seen),
           f"s3: each PUT's SigV4 signature and payload hash verify with botocore ({seen})")
        stop(p)
    srv.shutdown()


def gcs_steps(bin_, work, model_port, venv_bin):
    try:
        exe = subprocess.run(["bash", os.path.join(HERE, "gcs-emulator.sh"),
                              os.path.dirname(venv_bin)], capture_output=True, text=True,
                             check=True).stdout.strip()
    except subprocess.CalledProcessError as e:
        return skip("gs:// store", (e.stderr.strip().splitlines() or ["gcs-emulator.sh"])[-1])
    port = free_port()
    start([exe, "start", "--host", "127.0.0.1", "--port", str(port), "--in-memory",
           "--default-bucket", "logs"], os.path.join(work, "gcs.log"))
    base = f"http://127.0.0.1:{port}"
    if not ok(wait_for(lambda: urllib.request.urlopen(f"{base}/storage/v1/b/logs/o", timeout=2)),
              "the GCS emulator answers"):
        return

    def get(key):
        try:
            with urllib.request.urlopen(f"{base}/storage/v1/b/logs/o/"
                                        f"{urllib.parse.quote(key, safe='')}?alt=media",
                                        timeout=5) as r:
                return r.read()
        except urllib.error.HTTPError:
            return None

    logged(bin_, work, model_port, "gcs-json", "gs://logs/a/b", "json",
           {"STORAGE_EMULATOR_HOST": f"127.0.0.1:{port}"}, get, "a/b/")
    gcs_key_step(bin_, work, model_port, port)


def b64url_decode(v):
    return base64.urlsafe_b64decode(v + "=" * (-len(v) % 4))


def gcs_key_step(bin_, work, model_port, gport):
    """GOOGLE_APPLICATION_CREDENTIALS: a token endpoint that verifies the JWT's RS256 signature
    with the key's public half (openssl) and wants the read-write scope; a guard in front of
    the emulator that passes only its bearer. One exchange for both records."""
    if not shutil.which("openssl"):
        return skip("gs:// with a service-account key", "no openssl")
    pem, pub = os.path.join(work, "sa.pem"), os.path.join(work, "sa.pub")
    subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                    "-out", pem], check=True, capture_output=True)
    subprocess.run(["openssl", "pkey", "-in", pem, "-pubout", "-out", pub], check=True,
                   capture_output=True)
    seen = {"exchanges": 0, "scopes": [], "bearers": []}

    class Token(Quiet):
        def do_POST(self):
            form = dict(urllib.parse.parse_qsl(self.body().decode()))
            head, claims, sig = form.get("assertion", "..").split(".")
            signed, sigf = os.path.join(work, "signed"), os.path.join(work, "sig")
            with open(signed, "wb") as f:
                f.write(f"{head}.{claims}".encode())
            with open(sigf, "wb") as f:
                f.write(b64url_decode(sig))
            v = subprocess.run(["openssl", "dgst", "-sha256", "-verify", pub, "-signature", sigf,
                                signed], capture_output=True)
            scope = json.loads(b64url_decode(claims)).get("scope")
            seen["scopes"].append(scope)
            if v.returncode != 0 or \
                    scope != "https://www.googleapis.com/auth/devstorage.read_write":
                return self.send(400, json.dumps({"error": "invalid_scope"}).encode())
            seen["exchanges"] += 1
            self.send(200, json.dumps({"access_token": "ya29.writer", "expires_in": 3599,
                                       "token_type": "Bearer"}).encode())

    class Guard(Quiet):
        def do_POST(self):
            body = self.body()
            auth = self.headers.get("Authorization", "")
            seen["bearers"].append(auth)
            if auth != "Bearer ya29.writer":
                return self.send(401, b'{"error": {"code": 401, "message": "no token"}}')
            c = http.client.HTTPConnection("127.0.0.1", gport, timeout=10)
            c.request("POST", self.path, body=body,
                      headers={"Content-Type": self.headers.get("Content-Type", "")})
            r = c.getresponse()
            self.send(r.status, r.read())

    token, guard = serve(Token), serve(Guard)
    key = os.path.join(work, "sa.json")
    with open(pem) as f, open(key, "w") as out:
        json.dump({"type": "service_account", "project_id": "proj", "private_key_id": "k1",
                   "client_email": "logger@proj.iam.gserviceaccount.com", "private_key": f.read(),
                   "token_uri": f"http://127.0.0.1:{token.server_address[1]}/token"}, out)

    def get(k):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{gport}/storage/v1/b/logs/o/"
                                        f"{urllib.parse.quote(k, safe='')}?alt=media",
                                        timeout=5) as r:
                return r.read()
        except urllib.error.HTTPError:
            return None

    logged(bin_, work, model_port, "gcs-key", "gs://logs/sa", "csv",
           {"STORAGE_EMULATOR_HOST": f"127.0.0.1:{guard.server_address[1]}",
            "GOOGLE_APPLICATION_CREDENTIALS": key}, get, "sa/")
    ok(seen["exchanges"] == 1 and seen["bearers"] == ["Bearer ya29.writer"] * 2,
       f"gcs-key: one exchange for the read-write scope, its bearer on both uploads ({seen})")
    token.shutdown()
    guard.shutdown()


def azure_steps(bin_, work, model_port):
    try:
        exe = subprocess.run(["bash", os.path.join(HERE, "azurite.sh")], capture_output=True,
                             text=True, check=True).stdout.strip()
    except subprocess.CalledProcessError as e:
        return skip("abfs:// store", (e.stderr.strip().splitlines() or ["azurite.sh"])[-1])
    port = free_port()
    start([exe, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location",
           os.path.join(work, "azurite"), "--disableTelemetry", "--skipApiVersionCheck"],
          os.path.join(work, "azurite.log"))
    if not ok(wait_port(port), "Azurite listens"):
        return
    ep = f"http://127.0.0.1:{port}/{AZURITE_ACCOUNT}"
    # public read access lets the test read anonymously; writes still need the Shared Key
    azure_put(ep, "/pub?restype=container", headers={"x-ms-blob-public-access": "container"})
    conn = (f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};"
            f"AccountKey={AZURITE_KEY};BlobEndpoint={ep};")

    def get_pub(key):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("GET", f"/{AZURITE_ACCOUNT}/pub/{urllib.parse.quote(key)}")
        r = c.getresponse()
        data = r.read()
        return data if r.status == 200 else None

    logged(bin_, work, model_port, "azure-json",
           f"abfs://pub@{AZURITE_ACCOUNT}.dfs.core.windows.net/logs", "json",
           {"AZURE_STORAGE_CONNECTION_STRING": conn}, get_pub, "logs/")
    # a wrong key: Azurite refuses the signature, the record is counted as failed
    bad = conn.replace(AZURITE_KEY, base64.b64encode(b"x" * 64).decode())
    p, aport = agent(bin_, work, "azure-wrong-key", model_port,
                     ["--log-url", f"abfs://pub@{AZURITE_ACCOUNT}", "--log-mode", "request",
                      *NAMES], {"AZURE_STORAGE_CONNECTION_STRING": bad})
    if ok(aport is not None, "azure-wrong-key: the agent starts"):
        st, _ = infer(aport, "id-wrong-key")
        ok(st == 200 and wait_for(lambda: metrics(aport)["modelplane_agent_log_failed_total"] == 1),
           "abfs with a wrong key: inference answered, the refused upload counted as failed")
        ok(get_pub("default/iris/predictor/sp/id-wrong-key-request.json") is None,
           "abfs with a wrong key: nothing written")
        stop(p)


def azure_principal_step(bin_, work, model_port):
    """A service principal (AZURE_CLIENT_ID...): its client-credentials token from a local Azure
    AD endpoint (AZURE_AUTHORITY_HOST), the bearer of Put Blob on a blob endpoint in the script
    that wants it (and x-ms-blob-type: BlockBlob). One exchange for both records."""
    seen = {"forms": [], "auth": []}
    blobs = {}

    class Token(Quiet):
        def do_POST(self):
            form = dict(urllib.parse.parse_qsl(self.body().decode()))
            seen["forms"].append((self.path, form))
            if form.get("client_secret") != "s3cret":
                return self.send(401, b'{"error": "invalid_client"}')
            self.send(200, json.dumps({"access_token": "aad-token", "expires_in": 3599,
                                       "token_type": "Bearer"}).encode())

    class Blob(Quiet):
        def do_PUT(self):
            body = self.body()
            seen["auth"].append(self.headers.get("Authorization"))
            if self.headers.get("Authorization") != "Bearer aad-token" or \
                    self.headers.get("x-ms-blob-type") != "BlockBlob":
                return self.send(403, b"<Error><Code>AuthorizationFailure</Code></Error>",
                                 "application/xml")
            blobs[urllib.parse.unquote(self.path)] = body
            self.send(201)

    token, blob = serve(Token), serve(Blob)
    env = {"AZURE_CLIENT_ID": "app", "AZURE_CLIENT_SECRET": "s3cret", "AZURE_TENANT_ID": "tenant",
           "AZURE_AUTHORITY_HOST": f"http://127.0.0.1:{token.server_address[1]}",
           "AZURE_STORAGE_CONNECTION_STRING":
               f"AccountName=acct;BlobEndpoint=http://127.0.0.1:{blob.server_address[1]}/acct"}
    logged(bin_, work, model_port, "azure-principal", "abfs://c@acct/p", "json", env,
           lambda k: blobs.get(f"/acct/c/{k}"), "p/")
    ok(len(seen["forms"]) == 1 and seen["forms"][0][0] == "/tenant/oauth2/v2.0/token" and
       seen["forms"][0][1].get("scope") == "https://storage.azure.com/.default" and
       seen["auth"] == ["Bearer aad-token"] * 2,
       f"azure-principal: one client-credentials exchange, its bearer on both uploads ({seen})")
    token.shutdown()
    blob.shutdown()


# ---- stores that fail ----

class FailingStore:
    """An S3 endpoint that answers every request with `status` (or never answers: `stall`),
    counting the requests it gets."""

    def __init__(self, status=500, stall=False):
        self.n = 0
        self.lock = threading.Lock()
        self.release = threading.Event()
        outer = self

        class H(Quiet):
            def do_PUT(self):
                self.body()
                with outer.lock:
                    outer.n += 1
                if stall:
                    outer.release.wait(60)
                    return
                self.send(status, b"<Error><Code>Nope</Code><Message>the store says no"
                                  b"</Message></Error>", "application/xml")

        self.srv = serve(H)
        self.port = self.srv.server_address[1]

    def count(self):
        with self.lock:
            return self.n

    def stop(self):
        self.release.set()
        self.srv.shutdown()
        self.srv.server_close()


def failing_steps(bin_, work, model_port):
    for status, attempts in ((500, 3), (403, 1)):
        store = FailingStore(status)
        env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{store.port}", "AWS_ACCESS_KEY_ID": "k",
               "AWS_SECRET_ACCESS_KEY": "s"}
        p, port = agent(bin_, work, f"store-{status}", model_port,
                        ["--log-url", "s3://logs", "--log-mode", "request", *NAMES], env)
        if not ok(port is not None, f"store answering {status}: the agent starts"):
            continue
        st, answer = infer(port, f"id-{status}")
        ok(st == 200 and json.loads(answer)["outputs"][0]["data"] == [2.0, 4.0],
           f"store answering {status}: inference answered")
        ok(wait_for(lambda: metrics(port)["modelplane_agent_log_failed_total"] == 1),
           f"store answering {status}: the record dropped and counted as failed")
        ok(store.count() == attempts,
           f"store answering {status}: {attempts} attempt(s) ({store.count()})")
        ok(metrics(port)["modelplane_agent_log_sent_total"] == 0, f"{status}: nothing counted sent")
        ok(stop(p) == 0, f"store answering {status}: the agent exits 0")
        store.stop()

    # a stalled store: one worker blocked, a queue of 2; every request still answered
    store = FailingStore(stall=True)
    env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{store.port}", "AWS_ACCESS_KEY_ID": "k",
           "AWS_SECRET_ACCESS_KEY": "s"}
    p, port = agent(bin_, work, "store-stalled", model_port,
                    ["--log-url", "s3://logs", "--workers", "1", "--log-queue-size", "2", *NAMES],
                    env)
    if ok(port is not None, "stalled store: the agent starts"):
        res = [infer(port, f"id-stall-{i}") for i in range(10)]
        ok(all(st == 200 and json.loads(b)["outputs"][0]["data"] == [2.0, 4.0] for st, b in res),
           "stalled store: all 10 inferences answered")
        m = metrics(port)
        ok(m["modelplane_agent_log_dropped_total"] > 0 and
           m["modelplane_agent_log_sent_total"] == 0,
           f"stalled store: the full queue dropped and counted "
           f"({m['modelplane_agent_log_dropped_total']} dropped)")
        ok(store.count() >= 1, "stalled store: the worker's upload is in flight")
        ok(stop(p) == 0, "stalled store: SIGTERM ends the upload in flight, exit 0")
    store.stop()


# ---- batches and marshallers (KServe's --log-batch-size, --log-batch-interval,
# --log-marshaller-url) ----

def records_in(path, fmt):
    with open(path, "rb") as f:
        data = f.read()
    if fmt == "csv":
        return list(csv.DictReader(io.StringIO(data.decode())))
    j = json.loads(data)
    return j if isinstance(j, list) else [j]


def batch_run(bin_, work, model_port, name, extra, ids):
    """An agent storing into file://DIR with extra flags; one inference per id. Returns
    (process, port, store dir) or None when it did not start."""
    d = os.path.join(work, name)
    os.makedirs(d)
    p, port = agent(bin_, work, name, model_port,
                    ["--log-url", f"file://{d}", *NAMES, *extra], {})
    if not ok(port is not None, f"{name}: the agent starts with {' '.join(extra)}"):
        return None
    res = [infer(port, i) for i in ids]
    ok(all(st == 200 for st, _ in res), f"{name}: {len(ids)} inference(s) answered")
    return p, port, os.path.join(d, "default/iris/predictor/sp")


def batch_steps(bin_, work, model_port):
    # a batch of 4 records is one blob, under the key of its first, in KServe's two formats
    for fmt in ("json", "csv"):
        name = f"batch-{fmt}"
        run = batch_run(bin_, work, model_port, name,
                        ["--log-batch-size", "4", "--log-store-format", fmt, "--workers", "1"],
                        [f"{name}-a", f"{name}-b"])
        if not run:
            continue
        p, port, d = run
        path = os.path.join(d, f"{name}-a-request.{fmt}")
        got = wait_for(lambda: os.path.exists(path) and
                       metrics(port)["modelplane_agent_log_sent_total"] == 4)
        ok(bool(got), f"{name}: one object {os.path.basename(path)} for the batch")
        if got:
            recs = records_in(path, fmt)
            ok(sorted((r["id"], r["reqType"].rsplit(".", 1)[1]) for r in recs) ==
               [(f"{name}-a", "request"), (f"{name}-a", "response"),
                (f"{name}-b", "request"), (f"{name}-b", "response")],
               f"{name}: the object holds the 4 records ({len(recs)})")
            ok(all(json.loads(base64.b64decode(r["bytes"])) == BODY
                   for r in recs if r["reqType"].endswith(".request")),
               f"{name}: the requests' bodies")
            ok(sorted(os.listdir(d)) == [os.path.basename(path)],
               f"{name}: nothing else stored ({sorted(os.listdir(d))})")
            m = metrics(port)
            ok(m["modelplane_agent_log_blobs_total"] == 1, f"{name}: 1 blob counted")
        ok(stop(p) == 0, f"{name}: the agent exits 0")

    # a partial batch: stored after --log-batch-interval, held without one
    run = batch_run(bin_, work, model_port, "batch-interval",
                    ["--log-batch-size", "10", "--log-batch-interval", "200ms"], ["bi-a"])
    if run:
        p, port, d = run
        path = os.path.join(d, "bi-a-request.json")
        ok(bool(wait_for(lambda: os.path.exists(path))),
           "batch-interval: the partial batch of 2 stored once its interval passed")
        if os.path.exists(path):
            ok(len(records_in(path, "json")) == 2, "batch-interval: as a JSON array of 2")
        ok(stop(p) == 0, "batch-interval: the agent exits 0")
    run = batch_run(bin_, work, model_port, "batch-held", ["--log-batch-size", "10"], ["bh-a"])
    if run:
        p, port, d = run
        ok(bool(wait_for(lambda: metrics(port)["modelplane_agent_log_queued_total"] == 2)),
           "batch-held: 2 records queued")
        time.sleep(1)
        ok(not os.path.exists(d) and metrics(port)["modelplane_agent_log_sent_total"] == 0,
           "batch-held: without an interval a partial batch waits (KServe's SizeBatch)")
        ok(stop(p) == 0, "batch-held: the agent exits 0 at SIGTERM")
    for flags, why in ((["--log-batch-interval", "5 s"], "invalid --log-batch-interval"),
                       (["--log-batch-size", "many"], "invalid --log-batch-size"),
                       (["--log-batch-size", "100001"], "invalid --log-batch-size")):
        r = subprocess.run([bin_, "agent", "--log-url", "file:///tmp", *flags],
                           capture_output=True, text=True, timeout=30)
        ok(r.returncode == 2 and why in r.stderr,
           f"{' '.join(flags)}: refused at start ({r.returncode}: "
           f"{' '.join(r.stderr.split())[:120]})")
    marshaller_steps(bin_, work, model_port)


class Marshaller:
    """A --log-marshaller-url of one's own: checks that each batch is the JSON array of Go's
    LogRequest (url and sourceUri as url.URL structures) and answers `status` with the ids, one
    per line, and the extension `ext`."""

    def __init__(self, status=200, ext="ndjson"):
        self.batches = []
        self.lock = threading.Lock()
        outer = self

        class H(Quiet):
            def do_POST(self):
                batch = json.loads(self.body())
                with outer.lock:
                    outer.batches.append(batch)
                text = "".join(r["id"] + "\n" for r in batch).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("X-Log-Marshal-Extension", ext)
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                self.wfile.write(text)

        self.srv = serve(H)
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}/marshal"

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


def marshaller_steps(bin_, work, model_port):
    mar = Marshaller()
    run = batch_run(bin_, work, model_port, "marshaller",
                    ["--log-batch-size", "2", "--log-marshaller-url", mar.url,
                     "--log-store-format", "parquet"], ["mr-a"])
    if run:
        p, port, d = run
        path = os.path.join(d, "mr-a-request.ndjson")
        ok(bool(wait_for(lambda: os.path.exists(path))),
           "marshaller: the batch stored as the marshaller answered, with its extension")
        if os.path.exists(path):
            with open(path) as f:
                ok(f.read() == "mr-a\nmr-a\n", "marshaller: the answer's bytes")
        b = mar.batches[0] if mar.batches else [{}]
        u = b[0].get("url") or {}
        ok(len(b) == 2 and u.get("Scheme") == "file" and u.get("Path", "").endswith("/marshaller")
           and b[0].get("sourceUri", {}).get("Host") == "src" and
           json.loads(base64.b64decode(b[0]["bytes"])) == BODY,
           f"marshaller: got KServe's request, Go url.URL structures ({json.dumps(b)[:200]})")
        ok(stop(p) == 0, "marshaller: the agent exits 0")
    mar.stop()
    # a marshaller that answers 500, one that names an extension no key may end in, and one that
    # is not there at all (its port closed): each batch counted as failed and named, nothing stored
    gone = free_port()
    cases = ((Marshaller(500, "json"), "answers 500", "answered 500"),
             (Marshaller(200, "../x"), "names '../x'", "X-Log-Marshal-Extension '../x'"),
             (None, "is not there", "Couldn't connect"))
    for i, (bad, what, said) in enumerate(cases):
        url = bad.url if bad else f"http://127.0.0.1:{gone}/marshal"
        name = f"marshaller-bad-{i}"
        run = batch_run(bin_, work, model_port, name,
                        ["--log-marshaller-url", url, "--log-mode", "request"], ["mb-a"])
        if run:
            p, port, d = run
            ok(bool(wait_for(lambda: metrics(port)["modelplane_agent_log_failed_total"] == 1)),
               f"a marshaller that {what}: the record counted as failed, inference answered")
            ok(not os.path.exists(d), f"a marshaller that {what}: nothing stored")
            with open(os.path.join(work, f"{name}.log")) as f:
                text = f.read()
            ok(f"marshaller {url}" in text and said in text,
               f"a marshaller that {what}: the warning names it and says '{said}'")
            ok(stop(p) == 0, f"a marshaller that {what}: the agent exits 0")
        if bad:
            bad.stop()
    # a marshaller URL that is no http(s) URL fails the start, as a malformed --log-url does
    r = subprocess.run([bin_, "agent", "--port", "0", "--api-watch", "off", "--log-url",
                        f"file://{work}/never", "--log-marshaller-url", "ftp://m/marshal"],
                       capture_output=True, text=True, timeout=30)
    ok(r.returncode != 0 and "--log-marshaller-url ftp://m/marshal: expected an http(s) URL"
       in r.stderr, f"--log-marshaller-url ftp://: refused at start ({r.returncode}: "
       f"{' '.join(r.stderr.split())[:160]})")
    # parquet with no marshaller: named at start, serving goes on
    run = batch_run(bin_, work, model_port, "parquet", ["--log-store-format", "parquet"], ["pq"])
    if run:
        p, port, d = run
        with open(os.path.join(work, "parquet.log")) as f:
            text = f.read()
        ok("parquet needs a marshaller" in text, "parquet without a marshaller: the start says so")
        ok(stop(p) == 0, "parquet without a marshaller: the agent exits 0")


# ---- KServe's own marshaller ----

KSERVE_BUILD = os.path.join(HERE, "..", "..", "bench", "peers", "kserve-agent", "build")


def kserve_marshaller_steps(bin_, work):
    """KServe v0.20.0's own agent (bench/peers/kserve-agent/build) as --log-marshaller-url: it
    decodes our batches into its LogRequest type and writes its csv and Parquet. Run in a network
    namespace of its own (unshare -n), since KServe's agent listens on every interface; there
    only loopback exists. The child's TAP lines are relayed."""
    what = "KServe's agent as the log marshaller"
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        skip(what, "needs root and unshare/ip for a loopback-only network namespace")
        return
    kbin = os.environ.get("MODELPLANE_KSERVE_AGENT", "")
    if not kbin:  # outside scripts/test: the build script prints the cached binary, or builds it
        b = subprocess.run([KSERVE_BUILD], capture_output=True, text=True, timeout=1800)
        if b.returncode != 0:
            ok(False, f"{what}: KServe's agent builds ({' '.join(b.stderr.split())[-300:]})")
            return
        kbin = b.stdout.strip()
    if not os.access(kbin, os.X_OK):
        ok(False, f"{what}: MODELPLANE_KSERVE_AGENT={kbin} is no executable")
        return
    r = subprocess.run(["unshare", "-n", sys.executable, os.path.abspath(__file__),
                        "--kserve-child", bin_, kbin, work],
                       capture_output=True, text=True, timeout=600)
    seen = 0
    for line in r.stdout.splitlines():
        t = line.split(" - ", 1)
        if line.startswith(("ok ", "not ok ")) and len(t) == 2:
            ok(line.startswith("ok "), t[1])
            seen += 1
        elif line.startswith("#"):
            note(line[1:].strip())
    ok(r.returncode == 0 and seen > 0,
       f"{what}: the namespaced steps ran ({r.returncode}, {seen}; "
       f"{' '.join(r.stderr.split())[-300:]})")


def kserve_child(bin_, kbin, work):
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    model = serve(Model)
    model_port = model.server_address[1]
    env = dict(os.environ, AWS_REGION="us-east-1", SERVING_READINESS_PROBE=json.dumps(
        {"tcpSocket": {"port": model_port, "host": "127.0.0.1"}, "successThreshold": 1}))
    rows = {}
    for fmt in ("csv", "parquet"):
        mport = free_port()
        # one at a time: KServe's agent also binds the abstract socket @/kserve/agent.sock
        for k in procs:
            if k.poll() is None:
                k.kill()
                k.wait()
        start([kbin, "--port", str(free_port()), "--component-port", str(model_port),
               "--log-url", "s3://unused/p", "--log-store-path", "sp", "--log-store-format", fmt,
               "--log-marshaller-port", str(mport)], os.path.join(work, f"kserve-{fmt}.out"), env)
        ok(bool(wait_port(mport)), f"KServe's {fmt} marshaller listens")
        name = f"kserve-{fmt}"
        run = batch_run(bin_, work, model_port, name,
                        ["--log-batch-size", "2", "--log-mode", "all", "--log-store-format", fmt,
                         "--log-marshaller-url", f"http://127.0.0.1:{mport}/marshal"],
                        ["ks-1"])
        if not run:
            continue
        p, port, d = run
        path = os.path.join(d, f"ks-1-request.{fmt}")
        ok(bool(wait_for(lambda: os.path.exists(path))),
           f"{name}: the batch stored as {os.path.basename(path)}, KServe's extension")
        if os.path.exists(path) and fmt == "csv":
            rows["kserve"] = records_in(path, "csv")
        if os.path.exists(path) and fmt == "parquet":
            with open(path, "rb") as f:
                data = f.read()
            ok(data[:4] == b"PAR1" and data[-4:] == b"PAR1" and len(data) > 100,
               f"{name}: a Parquet file ({len(data)} bytes) written by KServe's marshaller")
        ok(stop(p) == 0, f"{name}: the agent exits 0")
    # the same batch marshalled in process: KServe's csv of our request is ours, column by column
    run = batch_run(bin_, work, model_port, "ours-csv",
                    ["--log-batch-size", "2", "--log-store-format", "csv"], ["ks-1"])
    if run:
        p, port, d = run
        path = os.path.join(d, "ks-1-request.csv")
        if wait_for(lambda: os.path.exists(path)):
            rows["ours"] = records_in(path, "csv")
        ok(stop(p) == 0, "ours-csv: the agent exits 0")
    k, o = rows.get("kserve", []), rows.get("ours", [])
    same = len(k) == 2 and len(o) == 2 and all(
        {c: v for c, v in a.items() if c != "url"} == {c: v for c, v in b.items() if c != "url"}
        for a, b in zip(k, o)) and k[0]["url"].endswith("/kserve-csv") and \
        o[0]["url"].endswith("/ours-csv")
    ok(same, "KServe's marshaller decodes our request: its csv is ours but for the log URL "
       f"({k[:1]} / {o[:1]})")
    for p in procs:  # KServe's agent sleeps 30 s at SIGTERM
        if p.poll() is None:
            p.kill()
    print(f"1..{step_no[0]}", flush=True)
    return 1 if failures else 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--kserve-child":
        return kserve_child(*sys.argv[2:])
    bin_ = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="mp-logger-store-")
    venv_bin = os.path.dirname(sys.executable)
    model = serve(Model)
    model_port = model.server_address[1]
    try:
        s3_steps(bin_, work, model_port, venv_bin)
        gcs_steps(bin_, work, model_port, venv_bin)
        azure_steps(bin_, work, model_port)
        azure_principal_step(bin_, work, model_port)
        failing_steps(bin_, work, model_port)
        batch_steps(bin_, work, model_port)
        kserve_marshaller_steps(bin_, work)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        logs = sorted(f for f in os.listdir(work) if f.endswith(".log"))
        for f in logs:
            with open(os.path.join(work, f), errors="replace") as fh:
                text = fh.read()
            if not sanitizer_clean(text):
                ok(False, f"{f}: a sanitizer report")
            if failures:
                note(f"--- {f}: " + text[-1500:].replace("\n", "\n# "))
        shutil.rmtree(work, ignore_errors=True)
    print(f"1..{step_no[0]}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
