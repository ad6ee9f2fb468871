# SPDX-License-Identifier: Apache-2.0
"""`modelplane async-upload` (upstream's model transfer job) against real parts on loopback: an
OCI registry (`crane registry serve`, go-containerregistry v0.22.1, bench/peers/crane), behind a
token-auth pass-through for the credential cases (Bearer challenge, token endpoint, Basic for
the token), moto's S3 server, a local HTTP server for URI sources and a real `modelplane
registry` on SQLite. Each intent's registry writes are checked field by field as upstream's job
makes them, the pushed image read back with `crane manifest` and `crane export`, and each error
a user can reach is driven: its exit status and its words.

usage: async_upload.py MODELPLANE CRANE (the venv's python: moto, boto3). With
MODELPLANE_ASYNC_UPLOAD_WRAPPER set (scripts/valgrind-check: "valgrind --error-exitcode=99 ...")
every `modelplane async-upload` runs under it, so a memcheck error or leak fails its case."""
import base64
import http.client
import http.server
import io
import json
import os
import secrets
import shlex
import shutil
import socket
import ssl
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "agent"))
from agentlib import case, expect, failures, free_port  # noqa: E402

BIN, CRANE = sys.argv[1], sys.argv[2]
WRAPPER = shlex.split(os.environ.get("MODELPLANE_ASYNC_UPLOAD_WRAPPER", ""))
T = tempfile.mkdtemp(prefix="async-upload-")
PROCS = []


def start(argv, log, env=None):
    p = subprocess.Popen(argv, stdout=open(os.path.join(T, log), "w"), stderr=subprocess.STDOUT,
                         env=env)
    PROCS.append(p)
    return p


def wait_for(fn, what, timeout=30):
    end = time.time() + timeout
    while True:
        try:
            return fn()
        except Exception:  # noqa: BLE001
            if time.time() > end:
                raise RuntimeError(f"{what} did not start")
            time.sleep(0.1)


# ---- the parts ----

OCI_PORT = free_port()
start([CRANE, "registry", "serve", "--address", f"127.0.0.1:{OCI_PORT}"], "crane.log")
OCI = f"127.0.0.1:{OCI_PORT}"
wait_for(lambda: urllib.request.urlopen(f"http://{OCI}/v2/", timeout=2), "crane registry")

MOTO_PORT = free_port()
start([os.path.join(os.path.dirname(sys.executable), "moto_server"), "-H", "127.0.0.1", "-p",
       str(MOTO_PORT)], "moto.log")
wait_for(lambda: urllib.request.urlopen(f"http://127.0.0.1:{MOTO_PORT}/", timeout=2), "moto")
import boto3  # noqa: E402 - the venv's, once moto answers

S3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{MOTO_PORT}", region_name="us-east-1",
                  aws_access_key_id="testing", aws_secret_access_key="testing")
S3.create_bucket(Bucket="models")
S3.put_object(Bucket="models", Key="iris/v1/model.joblib", Body=b"iris weights")
S3.put_object(Bucket="models", Key="iris/v1/config/settings.json", Body=b'{"k": 1}')
S3.put_object(Bucket="models", Key="other/x.bin", Body=b"not this one")

mr_log = open(os.path.join(T, "registry.log"), "w")
reg = subprocess.Popen([BIN, "registry", "-n", "127.0.0.1", "-p", "0", "-d",
                        os.path.join(T, "mr.db")], stdout=subprocess.PIPE, stderr=mr_log, text=True)
PROCS.append(reg)
line = reg.stdout.readline()
if not line.startswith("listening on "):
    print(f"Bail out! registry did not start: {line!r}")
    sys.exit(1)
MR_PORT = int(line.strip().rsplit(":", 1)[1])

# the URI source: files and archives under www/, 404 for anything else
WWW = os.path.join(T, "www")
os.makedirs(WWW)


def make_tgz(path, files):
    with tarfile.open(path, "w:gz") as tf:
        for name, data in files.items():
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))


make_tgz(os.path.join(WWW, "bert.tar.gz"), {"bert/weights.bin": b"B" * 5000,
                                            "bert/tokenizer.json": b'{"t": 1}'})
open(os.path.join(WWW, "corrupt.tar.gz"), "wb").write(b"\x1f\x8b\x08\x00" + os.urandom(4000))
HTTP_PORT = free_port()
start([sys.executable, "-m", "http.server", str(HTTP_PORT), "--bind", "127.0.0.1", "-d", WWW],
      "http.log")
wait_for(lambda: urllib.request.urlopen(f"http://127.0.0.1:{HTTP_PORT}/", timeout=2), "http")

# ---- a token-auth pass-through in front of crane ----

USER, PASSWORD = "robot", "s3cret"
TOKENS = set()
SEEN = {"token_requests": [], "push_auth": []}


class Auth(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def deny(self):
        body = b'{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}'
        self.send_response(401)
        self.send_header("WWW-Authenticate",
                         f'Bearer realm="http://127.0.0.1:{AUTH_PORT}/token",'
                         f'service="test-registry",scope="repository:x:pull"')
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def token(self):
        SEEN["token_requests"].append(self.path)
        want = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if self.headers.get("Authorization") != want:
            body = b'{"errors":[{"code":"DENIED","message":"bad credentials"}]}'
            self.send_response(401)
        else:
            t = secrets.token_hex(16)
            TOKENS.add(t)
            body = json.dumps({"token": t, "expires_in": 300}).encode()
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    require_auth = True

    def handle_any(self):
        if self.path.startswith("/token"):
            return self.token()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        a = self.headers.get("Authorization", "")
        if self.require_auth and not (a.startswith("Bearer ") and a[7:] in TOKENS):
            return self.deny()
        c = http.client.HTTPConnection("127.0.0.1", OCI_PORT, timeout=30)
        hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "authorization")}
        c.request(self.command, self.path, body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = handle_any


AUTH_PORT = free_port()
auth_srv = http.server.ThreadingHTTPServer(("127.0.0.1", AUTH_PORT), Auth)
threading.Thread(target=auth_srv.serve_forever, daemon=True).start()
AUTHED = f"127.0.0.1:{AUTH_PORT}"


class Open(Auth):
    require_auth = False


# the same registry over TLS, with a self-signed certificate nobody trusts
subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                "-keyout", os.path.join(T, "tls.key"), "-out", os.path.join(T, "tls.crt")],
               check=True, capture_output=True)
TLS_PORT = free_port()
tls_srv = http.server.ThreadingHTTPServer(("127.0.0.1", TLS_PORT), Open)
_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
_ctx.load_cert_chain(os.path.join(T, "tls.crt"), os.path.join(T, "tls.key"))
tls_srv.socket = _ctx.wrap_socket(tls_srv.socket, server_side=True)
threading.Thread(target=tls_srv.serve_forever, daemon=True).start()
TLS = f"127.0.0.1:{TLS_PORT}"

# ---- helpers ----


def api(method, path, body=None, ok=(200, 201)):
    c = http.client.HTTPConnection("127.0.0.1", MR_PORT, timeout=30)
    c.request(method, "/api/model_registry/v1alpha3" + path,
              body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    doc = json.loads(r.read() or b"null")
    expect(r.status in ok, f"{method} {path}: {r.status} {doc}")
    return doc


def metadata(name, keys):
    d = os.path.join(T, "meta-" + name)
    os.makedirs(d)
    for k, v in keys.items():
        open(os.path.join(d, k), "w").write(v)
    # a ConfigMap volume's bookkeeping, which the job must skip
    os.makedirs(os.path.join(d, "..2026_12_07_00_00_00.1"))
    os.symlink("..2026_12_07_00_00_00.1", os.path.join(d, "..data"))
    return d


def dockerconfig(name, registry, user, password, plain=False):
    p = os.path.join(T, f"dockerconfig-{name}.json")
    auth = f"{user}:{password}" if plain else base64.b64encode(f"{user}:{password}".encode()).decode()
    json.dump({"auths": {registry: {"auth": auth, "email": "robot@example.com"}}}, open(p, "w"))
    return p


def base_env(**kw):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_SYNC_", "AWS_"))}
    env.update({
        "MODEL_SYNC_DESTINATION_OCI_REGISTRY": OCI,
        "MODEL_SYNC_DESTINATION_OCI_BASE_IMAGE": "",
        "MODEL_SYNC_DESTINATION_OCI_ENABLE_TLS_VERIFY": "false",
        "MODEL_SYNC_REGISTRY_SERVER_ADDRESS": "http://127.0.0.1",
        "MODEL_SYNC_REGISTRY_PORT": str(MR_PORT),
        "MODEL_SYNC_REGISTRY_IS_SECURE": "False",
        "MODEL_SYNC_STORAGE_PATH": tempfile.mkdtemp(prefix="storage-", dir=T),
        "TERMINATION_MESSAGE_PATH": os.path.join(T, "termination-log"),
        "MODELPLANE_FETCH_ATTEMPTS": "1",
    })
    env.update({k: v for k, v in kw.items() if v is not None})
    for k in [k for k, v in kw.items() if v is None]:
        env.pop(k, None)
    return env


def run(env, args=()):
    if os.path.exists(env["TERMINATION_MESSAGE_PATH"]):
        os.unlink(env["TERMINATION_MESSAGE_PATH"])
    r = subprocess.run([*WRAPPER, BIN, "async-upload", "--log-format", "text", *args],
                       capture_output=True, text=True, env=env, timeout=600)
    # under ASan/UBSan (scripts/test's build-asan) a report fails the case whatever the exit
    expect("AddressSanitizer" not in r.stderr and "runtime error:" not in r.stderr
           and "LeakSanitizer" not in r.stderr, r.stderr[-3000:])
    term = ""
    if os.path.exists(env["TERMINATION_MESSAGE_PATH"]):
        term = open(env["TERMINATION_MESSAGE_PATH"]).read()
    return r.returncode, r.stderr, term


def succeeds(env, args=()):
    rc, err, term = run(env, args)
    expect(rc == 0, f"exit {rc}: {err[-1500:]}")
    return json.loads(term), err


def refused(env, words, rc_want=1, args=()):
    rc, err, term = run(env, args)
    expect(rc == rc_want, f"exit {rc}, want {rc_want}: {err[-1200:]}")
    for w in ([words] if isinstance(words, str) else words):
        expect(w in err, f"{w!r} not in: {err[-1200:]}")
    if rc_want == 1:
        expect(term.startswith("Unexpected error: "), f"termination message: {term!r}")
    return err


def image_files(ref, insecure=True):
    out = subprocess.run([CRANE, "export", *(["--insecure"] if insecure else []), ref, "-"],
                         capture_output=True, timeout=60, check=True).stdout
    files = {}
    with tarfile.open(fileobj=io.BytesIO(out)) as tf:
        for m in tf.getmembers():
            files[m.name] = tf.extractfile(m).read() if m.isfile() else None
    return files


def manifest(ref):
    out = subprocess.run([CRANE, "manifest", "--insecure", ref], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return json.loads(out)


def prop(obj, key):
    v = obj["customProperties"][key]
    return v.get("string_value", v.get("int_value", v.get("double_value", v.get("bool_value"))))


# ---- the intents ----


def test_create_model_from_an_http_archive():
    meta = metadata("create", {
        "RegisteredModel.name": "bert", "RegisteredModel.description": "a language model",
        "RegisteredModel.owner": "nlp-team",
        "RegisteredModel.custom_properties": '{"project": "search", "team": "nlp"}',
        "ModelVersion.name": "1.0.0", "ModelVersion.description": "first",
        "ModelVersion.author": "Jane Doe",
        "ModelVersion.custom_properties": '{"accuracy": 0.95, "epochs": 3, "tuned": true}',
        "ModelArtifact.name": "bert-onnx", "ModelArtifact.model_format_name": "onnx",
        "ModelArtifact.model_format_version": "1", "ModelArtifact.storage_key": "s3-conn",
        "ModelArtifact.custom_properties": '{"size_mb": 438}',
        "Other.key": "ignored",
    })
    env = base_env(MODEL_SYNC_SOURCE_TYPE="uri",
                   MODEL_SYNC_SOURCE_URI=f"http://127.0.0.1:{HTTP_PORT}/bert.tar.gz",
                   MODEL_SYNC_DESTINATION_OCI_URI=f"{OCI}/models/bert:1.0.0",
                   MODEL_SYNC_MODEL_UPLOAD_INTENT="create_model",
                   MODEL_SYNC_METADATA_CONFIGMAP_PATH=meta)
    res, _ = succeeds(env)
    expect(res["intent"] == "create_model", res)
    rm = api("GET", f"/registered_models/{res['RegisteredModel']['id']}")
    expect(rm["name"] == "bert" and rm["description"] == "a language model"
           and rm["owner"] == "nlp-team", rm)
    expect(prop(rm, "project") == "search" and prop(rm, "team") == "nlp", rm)
    mv = api("GET", f"/model_versions/{res['ModelVersion']['id']}")
    expect(mv["name"] == "1.0.0" and mv["author"] == "Jane Doe" and mv["description"] == "first"
           and mv["registeredModelId"] == rm["id"], mv)
    expect(mv["customProperties"]["accuracy"] == {"metadataType": "MetadataDoubleValue",
                                                  "double_value": 0.95}, mv)
    expect(mv["customProperties"]["epochs"] == {"metadataType": "MetadataIntValue",
                                                "int_value": "3"}, mv)
    expect(prop(mv, "tuned") is True, mv)
    ma = api("GET", f"/model_artifacts/{res['ModelArtifact']['id']}")
    expect(ma["uri"] == f"oci://{OCI}/models/bert:1.0.0" and ma["state"] == "LIVE", ma)
    expect(ma["name"] == "bert-onnx" and ma["modelFormatName"] == "onnx"
           and ma["modelFormatVersion"] == "1" and ma["storageKey"] == "s3-conn", ma)
    expect(prop(ma, "size_mb") == "438", ma)
    arts = api("GET", f"/model_versions/{mv['id']}/artifacts")["items"]
    expect([a["id"] for a in arts] == [ma["id"]], arts)
    files = image_files(f"{OCI}/models/bert:1.0.0")
    expect(files.get("models/bert/weights.bin") == b"B" * 5000, sorted(files))
    expect(files.get("models/bert/tokenizer.json") == b'{"t": 1}', sorted(files))
    m = manifest(f"{OCI}/models/bert:1.0.0")
    expect(m["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
           and len(m["layers"]) == 1
           and m["layers"][0]["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip", m)


def test_update_artifact_from_s3_with_a_credentials_folder():
    rm = api("POST", "/registered_models", {"name": "iris"})
    mv = api("POST", "/model_versions", {"name": "v1", "registeredModelId": rm["id"]})
    ma = api("POST", f"/model_versions/{mv['id']}/artifacts",
             {"artifactType": "model-artifact", "name": "iris", "uri": "pending://"})
    creds = os.path.join(T, "s3-creds")
    os.makedirs(creds)
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                 "AWS_DEFAULT_REGION": "us-east-1", "AWS_S3_BUCKET": "models",
                 "AWS_S3_ENDPOINT": f"http://127.0.0.1:{MOTO_PORT}"}.items():
        open(os.path.join(creds, k), "w").write(v)
    env = base_env(MODEL_SYNC_SOURCE_TYPE="s3", MODEL_SYNC_SOURCE_AWS_KEY="iris/v1",
                   MODEL_SYNC_SOURCE_S3_CREDENTIALS_PATH=creds,
                   MODEL_SYNC_DESTINATION_OCI_URI=f"{OCI}/models/iris:v1",
                   MODEL_SYNC_MODEL_ARTIFACT_ID=ma["id"], MODEL_SYNC_MODEL_ID=rm["id"])
    res, _ = succeeds(env)
    expect(res == {"intent": "update_artifact", "RegisteredModel": {"id": rm["id"]},
                   "ModelArtifact": {"id": ma["id"]}}, res)
    got = api("GET", f"/model_artifacts/{ma['id']}")
    expect(got["uri"] == f"oci://{OCI}/models/iris:v1" and got["state"] == "LIVE", got)
    files = image_files(f"{OCI}/models/iris:v1")
    expect(files.get("models/model.joblib") == b"iris weights", sorted(files))
    expect(files.get("models/config/settings.json") == b'{"k": 1}', sorted(files))
    expect(not any("x.bin" in f for f in files), sorted(files))


def test_create_version_on_a_base_image_through_token_auth():
    # the base: an image pushed by the job itself (no base), then used under the next one
    base_env_ = base_env(MODEL_SYNC_SOURCE_TYPE="uri",
                         MODEL_SYNC_SOURCE_URI=f"http://127.0.0.1:{HTTP_PORT}/bert.tar.gz",
                         MODEL_SYNC_DESTINATION_OCI_URI=f"{OCI}/base/runtime:1",
                         MODEL_SYNC_MODEL_UPLOAD_INTENT="create_model",
                         MODEL_SYNC_METADATA_CONFIGMAP_PATH=metadata("base", {
                             "RegisteredModel.name": "runtime", "ModelVersion.name": "1",
                             "ModelArtifact.name": "runtime"}))
    succeeds(base_env_)
    base_layer = manifest(f"{OCI}/base/runtime:1")["layers"][0]["digest"]
    rm = api("GET", "/registered_model?name=bert")
    # as the console writes it: RegisteredModel.id, and customProperties (camelCase, REST
    # MetadataValues), which upstream's job ignores and this one applies
    meta = metadata("version", {
        "RegisteredModel.id": rm["id"], "ModelVersion.name": "2.0.0",
        "ModelArtifact.model_format_name": "onnx",
        "ModelVersion.customProperties": json.dumps(
            {"origin": {"metadataType": "MetadataStringValue", "string_value": "console"}}),
        "ModelArtifact.description": "ignored, as upstream"})
    cfg = dockerconfig("ok", AUTHED, USER, PASSWORD)
    SEEN["token_requests"].clear()
    env = base_env(MODEL_SYNC_SOURCE_TYPE="uri",
                   MODEL_SYNC_SOURCE_URI=f"http://127.0.0.1:{HTTP_PORT}/bert.tar.gz",
                   MODEL_SYNC_DESTINATION_OCI_URI=f"{AUTHED}/models/bert:2.0.0",
                   MODEL_SYNC_DESTINATION_OCI_REGISTRY=AUTHED,
                   MODEL_SYNC_DESTINATION_OCI_CREDENTIALS_PATH=cfg,
                   MODEL_SYNC_DESTINATION_OCI_BASE_IMAGE=f"{AUTHED}/base/runtime:1",
                   MODEL_SYNC_MODEL_UPLOAD_INTENT="create_version",
                   MODEL_SYNC_MODEL_ID=rm["id"], MODEL_SYNC_REGISTRY_AUTHOR="ci-bot",
                   MODEL_SYNC_METADATA_CONFIGMAP_PATH=meta)
    res, _ = succeeds(env)
    expect(res["RegisteredModel"]["id"] == rm["id"], res)
    expect(SEEN["token_requests"] and "scope=repository%3Amodels%2Fbert%3Apull%2Cpush"
           in SEEN["token_requests"][0] and "service=test-registry" in SEEN["token_requests"][0],
           SEEN["token_requests"])
    mv = api("GET", f"/model_versions/{res['ModelVersion']['id']}")
    expect(mv["name"] == "2.0.0" and mv["author"] == "ci-bot", mv)
    expect(prop(mv, "origin") == "console", mv)
    ma = api("GET", f"/model_artifacts/{res['ModelArtifact']['id']}")
    # the artifact takes the model's name when the metadata gives none (upstream's default)
    expect(ma["name"] == "bert" and ma["state"] == "LIVE"
           and ma["uri"] == f"oci://{AUTHED}/models/bert:2.0.0", ma)
    m = manifest(f"{OCI}/models/bert:2.0.0")
    expect(len(m["layers"]) == 2 and m["layers"][0]["digest"] == base_layer, m)
    cfgblob = json.loads(subprocess.run([CRANE, "config", "--insecure", f"{OCI}/models/bert:2.0.0"],
                                        capture_output=True, text=True, check=True).stdout)
    expect(len(cfgblob["rootfs"]["diff_ids"]) == 2, cfgblob)


def test_args_win_over_the_environment():
    rm = api("POST", "/registered_models", {"name": "args"})
    mv = api("POST", "/model_versions", {"name": "v1", "registeredModelId": rm["id"]})
    ma = api("POST", f"/model_versions/{mv['id']}/artifacts",
             {"artifactType": "model-artifact", "name": "args"})
    env = base_env(MODEL_SYNC_SOURCE_TYPE="s3", MODEL_SYNC_SOURCE_URI="http://nowhere.invalid/x",
                   MODEL_SYNC_DESTINATION_OCI_URI=f"{OCI}/models/wrong:v1",
                   MODEL_SYNC_MODEL_ARTIFACT_ID="999999")
    succeeds(env, ["--source-type", "uri",
                   f"--source-uri=http://127.0.0.1:{HTTP_PORT}/bert.tar.gz",
                   "--destination-oci-uri", f"{OCI}/models/args:v1",
                   "--model-artifact-id", ma["id"]])
    got = api("GET", f"/model_artifacts/{ma['id']}")
    expect(got["uri"] == f"oci://{OCI}/models/args:v1", got)


# ---- refusals ----


def uri_env(**kw):
    return base_env(**{"MODEL_SYNC_SOURCE_TYPE": "uri",
                       "MODEL_SYNC_SOURCE_URI": f"http://127.0.0.1:{HTTP_PORT}/bert.tar.gz",
                       "MODEL_SYNC_DESTINATION_OCI_URI": f"{OCI}/models/refused:v1",
                       "MODEL_SYNC_MODEL_ARTIFACT_ID": ARTIFACT["id"], **kw})


ARTIFACT = {}


def test_configuration_errors_name_the_variable():
    refused(uri_env(MODEL_SYNC_REGISTRY_SERVER_ADDRESS=None),
            "MODEL_SYNC_REGISTRY_SERVER_ADDRESS is required")
    refused(uri_env(MODEL_SYNC_SOURCE_URI=None), "MODEL_SYNC_SOURCE_URI is required")
    refused(uri_env(MODEL_SYNC_DESTINATION_OCI_URI=None),
            "MODEL_SYNC_DESTINATION_OCI_URI is required")
    refused(uri_env(MODEL_SYNC_MODEL_ARTIFACT_ID=None), "MODEL_SYNC_MODEL_ARTIFACT_ID is required")
    refused(base_env(MODEL_SYNC_SOURCE_TYPE="s3", MODEL_SYNC_SOURCE_AWS_BUCKET="b",
                     MODEL_SYNC_SOURCE_AWS_KEY="k", MODEL_SYNC_DESTINATION_OCI_URI=f"{OCI}/a:b",
                     MODEL_SYNC_MODEL_ARTIFACT_ID="1"),
            "MODEL_SYNC_SOURCE_AWS_ACCESS_KEY_ID is required")
    refused(uri_env(MODEL_SYNC_SOURCE_TYPE="ftp"),
            "MODEL_SYNC_SOURCE_TYPE: invalid choice 'ftp' (choose from 's3', 'oci', 'uri')", 2)
    refused(uri_env(), "--model-upload-intent: invalid choice 'delete'", 2,
            ["--model-upload-intent", "delete"])
    refused(uri_env(MODEL_SYNC_DESTINATION_OCI_ENABLE_TLS_VERIFY="maybe"),
            "MODEL_SYNC_DESTINATION_OCI_ENABLE_TLS_VERIFY: invalid boolean value 'maybe'", 2)
    refused(uri_env(), "unknown option '--no-such-flag'", 2, ["--no-such-flag", "x"])
    refused(uri_env(MODEL_SYNC_MODEL_UPLOAD_INTENT="create_model",
                    MODEL_SYNC_METADATA_CONFIGMAP_PATH=None),
            "Intent create_model requires ConfigMap metadata but none provided")
    refused(uri_env(MODEL_SYNC_MODEL_UPLOAD_INTENT="create_version", MODEL_SYNC_MODEL_ID="1",
                    MODEL_SYNC_METADATA_CONFIGMAP_PATH=metadata("noversion", {
                        "ModelArtifact.name": "a"})),
            "create_version intent requires ModelVersion and ModelArtifact metadata")
    refused(uri_env(MODEL_SYNC_SIGN="true"), "sigstore signing is not supported")
    refused(uri_env(MODEL_SYNC_REGISTRY_IS_SECURE="true"),
            "user token must be provided for secure connection")
    refused(uri_env(MODEL_SYNC_DESTINATION_TYPE="s3", MODEL_SYNC_DESTINATION_AWS_BUCKET="b",
                    MODEL_SYNC_DESTINATION_AWS_KEY="k", MODEL_SYNC_DESTINATION_AWS_ACCESS_KEY_ID="a",
                    MODEL_SYNC_DESTINATION_AWS_SECRET_ACCESS_KEY="s"),
            "S3 upload destination is not supported")
    refused(uri_env(MODEL_SYNC_DESTINATION_OCI_CREDENTIALS_PATH=os.path.join(T, "none.json")),
            "credentials file not found")
    # an unknown MODEL_SYNC_ variable is a warning naming it (upstream ignores it)
    err = refused(uri_env(MODEL_SYNC_SOURCE_TYP="uri", MODEL_SYNC_REGISTRY_SERVER_ADDRESS=None),
                  "MODEL_SYNC_REGISTRY_SERVER_ADDRESS is required")
    expect("MODEL_SYNC_SOURCE_TYP is not a variable of the transfer job" in err, err[-800:])


def test_source_404_and_403():
    refused(uri_env(MODEL_SYNC_SOURCE_URI=f"http://127.0.0.1:{HTTP_PORT}/missing.tar.gz"),
            ["downloading http://127.0.0.1", "404"])
    # moto answers an unknown bucket with 404 NoSuchBucket; a 403 comes from a server that
    # denies every request (moto checks no signatures unless IAM is set up)
    refused(base_env(MODEL_SYNC_SOURCE_TYPE="s3", MODEL_SYNC_SOURCE_AWS_KEY="iris/v1",
                     MODEL_SYNC_SOURCE_AWS_BUCKET="no-such-bucket",
                     MODEL_SYNC_SOURCE_AWS_ACCESS_KEY_ID="testing",
                     MODEL_SYNC_SOURCE_AWS_SECRET_ACCESS_KEY="testing",
                     MODEL_SYNC_SOURCE_AWS_ENDPOINT=f"http://127.0.0.1:{MOTO_PORT}",
                     MODEL_SYNC_DESTINATION_OCI_URI=f"{OCI}/models/refused:v1",
                     MODEL_SYNC_MODEL_ARTIFACT_ID=ARTIFACT["id"]),
            ["downloading s3://no-such-bucket/iris/v1"])
    refused(uri_env(MODEL_SYNC_SOURCE_URI=f"http://127.0.0.1:{FORBIDDEN_PORT}/model.tar.gz"),
            ["downloading http://127.0.0.1", "403"])


def test_corrupt_download():
    refused(uri_env(MODEL_SYNC_SOURCE_URI=f"http://127.0.0.1:{HTTP_PORT}/corrupt.tar.gz"),
            "downloading http://127.0.0.1")


def test_push_refused_with_bad_credentials():
    cfg = dockerconfig("bad", AUTHED, USER, "wrong")
    refused(uri_env(MODEL_SYNC_DESTINATION_OCI_URI=f"{AUTHED}/models/refused:v1",
                    MODEL_SYNC_DESTINATION_OCI_REGISTRY=AUTHED,
                    MODEL_SYNC_DESTINATION_OCI_CREDENTIALS_PATH=cfg),
            [f"the OCI registry {AUTHED} refused", "401", "DENIED: bad credentials"])
    refused(uri_env(MODEL_SYNC_DESTINATION_OCI_URI=f"{AUTHED}/models/refused:v1",
                    MODEL_SYNC_DESTINATION_OCI_REGISTRY=AUTHED),
            [f"the OCI registry {AUTHED} refused", "no credentials were given"])
    # a registry missing from the docker config is upstream's error too
    refused(uri_env(MODEL_SYNC_DESTINATION_OCI_URI=f"{AUTHED}/models/refused:v1",
                    MODEL_SYNC_DESTINATION_OCI_REGISTRY="quay.io",
                    MODEL_SYNC_DESTINATION_OCI_CREDENTIALS_PATH=cfg),
            "no credentials for registry 'quay.io'")


def test_plain_text_auth_is_accepted_with_a_warning():
    cfg = dockerconfig("plain", AUTHED, USER, PASSWORD, plain=True)
    _, err = succeeds(uri_env(MODEL_SYNC_DESTINATION_OCI_URI=f"{AUTHED}/models/plain:v1",
                              MODEL_SYNC_DESTINATION_OCI_REGISTRY=AUTHED,
                              MODEL_SYNC_DESTINATION_OCI_CREDENTIALS_PATH=cfg))
    expect("plain text credentials" in err, err[-600:])


def test_oci_registry_unreachable_and_tls_on_by_default():
    port = free_port()
    refused(uri_env(MODEL_SYNC_DESTINATION_OCI_URI=f"127.0.0.1:{port}/models/x:v1"),
            f"cannot reach the OCI registry 127.0.0.1:{port}")
    # a registry over TLS with a certificate nobody trusts: refused unless verification is off,
    # and then pushed over https (not plain http)
    refused(uri_env(MODEL_SYNC_DESTINATION_OCI_URI=f"{TLS}/models/tls:v1",
                    MODEL_SYNC_DESTINATION_OCI_ENABLE_TLS_VERIFY=None),
            [f"the OCI registry {TLS}: TLS certificate verification failed"])
    succeeds(uri_env(MODEL_SYNC_DESTINATION_OCI_URI=f"{TLS}/models/tls:v1",
                     MODEL_SYNC_DESTINATION_OCI_ENABLE_TLS_VERIFY="False"))
    expect("models/bert/weights.bin" in image_files(f"{OCI}/models/tls:v1"), "not pushed")
    # verification is on unless turned off: crane serves plain http, so TLS fails in words
    refused(uri_env(MODEL_SYNC_DESTINATION_OCI_ENABLE_TLS_VERIFY=None),
            [f"the OCI registry {OCI}: TLS failed",
             "MODEL_SYNC_DESTINATION_OCI_ENABLE_TLS_VERIFY=false"])


def test_model_registry_errors():
    refused(uri_env(MODEL_SYNC_MODEL_ARTIFACT_ID="999999"), "Artifact 999999 not found")
    port = free_port()
    refused(uri_env(MODEL_SYNC_REGISTRY_PORT=str(port)),
            f"cannot use the Model Registry at http://127.0.0.1:{port}")
    refused(uri_env(MODEL_SYNC_MODEL_UPLOAD_INTENT="create_model",
                    MODEL_SYNC_METADATA_CONFIGMAP_PATH=metadata("dup", {
                        "RegisteredModel.name": "bert", "ModelVersion.name": "9",
                        "ModelArtifact.name": "x"})),
            "RegisteredModel with name 'bert' already exists")
    refused(uri_env(MODEL_SYNC_MODEL_UPLOAD_INTENT="create_version", MODEL_SYNC_MODEL_ID="999999",
                    MODEL_SYNC_METADATA_CONFIGMAP_PATH=metadata("nomodel", {
                        "ModelVersion.name": "9", "ModelArtifact.name": "x"})),
            "RegisteredModel with ID '999999' not found")


def test_registries_that_misbehave():
    def env(dest, base=""):
        return uri_env(MODEL_SYNC_DESTINATION_OCI_URI=f"{FAULTY}/{dest}",
                       MODEL_SYNC_DESTINATION_OCI_REGISTRY=FAULTY,
                       MODEL_SYNC_DESTINATION_OCI_BASE_IMAGE=base)

    refused(env("models/nolocation/m:v1"), f"the OCI registry {FAULTY} gave no usable upload "
                                           "location")
    err = refused(env("models/busy/m:v1"), f"the OCI registry {FAULTY} answered 503 to a blob "
                                           "check of models/busy/m")
    expect(err.count(": 503; retrying") == 3, err[-1500:])  # 4 attempts
    refused(env("models/badtoken/m:v1"), "the registry's token answer is not JSON")
    refused(env("models/x:v1", f"{FAULTY}/corrupt/base:1"),
            [f"the blob {BAD_DIGEST} from {FAULTY} is corrupt"])
    refused(env("models/x:v1", f"{FAULTY}/armonly/base:1"),
            [f"the base image has no linux/{platform_arch()} manifest"])
    refused(env("models/x:v1", f"{FAULTY}/missing/base:1"),
            [f"the OCI registry {FAULTY}: the manifest of missing/base not found (404",
             "MANIFEST_UNKNOWN"])
    refused(env("models/x:v1", "Not/A/Valid:Image"),
            ["MODEL_SYNC_DESTINATION_OCI_BASE_IMAGE", "is not an image reference"])
    refused(env("UPPER/case:v1"), ["MODEL_SYNC_DESTINATION_OCI_URI", "is not an image reference"])


class Forbidden(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        body = b"AccessDenied"
        self.send_response(403)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


# a registry that misbehaves, per repository: no upload Location, always 503, a garbage token
# answer, a corrupt base layer, an index without this machine's platform
BAD_DIGEST = "sha256:" + "ab" * 32


class Faulty(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        p = self.path
        arch = platform_arch()
        other = "s390x" if arch != "s390x" else "arm64"
        if p == "/v2/":
            return self.reply(200, b"{}")
        if p.startswith("/token"):
            return self.reply(200, b"<html>not a token</html>")
        if "/badtoken/" in p:
            return self.reply(401, b"", [("WWW-Authenticate",
                                          f'Bearer realm="http://127.0.0.1:{FAULTY_PORT}/token"')])
        if "/busy/" in p:
            return self.reply(503, b'{"errors":[{"code":"UNAVAILABLE","message":"try later"}]}')
        if "/nolocation/" in p and self.command == "POST":
            return self.reply(202)
        if "/nolocation/" in p and self.command == "HEAD":
            return self.reply(404)
        if p == "/v2/corrupt/base/manifests/1":
            m = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                 "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                            "digest": BAD_DIGEST, "size": 2},
                 "layers": []}
            return self.reply(200, json.dumps(m).encode(),
                              [("Content-Type", "application/vnd.oci.image.manifest.v1+json")])
        if p == f"/v2/corrupt/base/blobs/{BAD_DIGEST}":
            return self.reply(200, b"{}")  # 2 bytes, but not the digest the manifest says
        if p == "/v2/armonly/base/manifests/1":
            idx = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                   "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                                  "digest": BAD_DIGEST, "size": 100,
                                  "platform": {"os": "linux", "architecture": other}}]}
            return self.reply(200, json.dumps(idx).encode(),
                              [("Content-Type", "application/vnd.oci.image.index.v1+json")])
        if p.startswith("/v2/") and "/blobs/" in p and self.command == "HEAD":
            return self.reply(404)
        return self.reply(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest '
                               b'unknown"}]}')

    do_GET = do_HEAD = do_POST = do_PUT = handle_any


def platform_arch():
    m = os.uname().machine
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(m, m)


FAULTY_PORT = free_port()
faulty_srv = http.server.ThreadingHTTPServer(("127.0.0.1", FAULTY_PORT), Faulty)
threading.Thread(target=faulty_srv.serve_forever, daemon=True).start()
FAULTY = f"127.0.0.1:{FAULTY_PORT}"

FORBIDDEN_PORT = free_port()
forbidden_srv = http.server.ThreadingHTTPServer(("127.0.0.1", FORBIDDEN_PORT), Forbidden)
threading.Thread(target=forbidden_srv.serve_forever, daemon=True).start()

try:
    rm0 = api("POST", "/registered_models", {"name": "refusals"})
    mv0 = api("POST", "/model_versions", {"name": "v1", "registeredModelId": rm0["id"]})
    ARTIFACT.update(api("POST", f"/model_versions/{mv0['id']}/artifacts",
                        {"artifactType": "model-artifact", "name": "refusals"}))
    tests = [test_create_model_from_an_http_archive,
             test_update_artifact_from_s3_with_a_credentials_folder,
             test_create_version_on_a_base_image_through_token_auth,
             test_args_win_over_the_environment,
             test_configuration_errors_name_the_variable,
             test_source_404_and_403, test_corrupt_download,
             test_push_refused_with_bad_credentials,
             test_plain_text_auth_is_accepted_with_a_warning,
             test_oci_registry_unreachable_and_tls_on_by_default,
             test_registries_that_misbehave,
             test_model_registry_errors]
    print(f"1..{len(tests)}", flush=True)
    for t in tests:
        case(t)
finally:
    auth_srv.shutdown()
    tls_srv.shutdown()
    faulty_srv.shutdown()
    forbidden_srv.shutdown()
    for p in PROCS:
        p.terminate()
    for p in PROCS:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
    if not failures:
        shutil.rmtree(T, ignore_errors=True)
    else:
        print(f"# logs kept in {T}", flush=True)
sys.exit(1 if failures else 0)
