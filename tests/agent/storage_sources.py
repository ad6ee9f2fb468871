# SPDX-License-Identifier: Apache-2.0
"""`modelplane storage-initializer SRC DST` against the storage sources of issue 29 item 6, on
loopback, each in seconds:

* Azure Blob Storage on Azurite (npm, installed by tests/agent/azurite.sh): a folder with Shared
  Key (connection string), KServe's https://<account>.blob.core.windows.net form through the
  connection string's BlobEndpoint, a public container anonymously, a private one anonymously
  (refused), a wrong key (403 named), a missing prefix (404 named), a lying Content-MD5 (refused);
  a fake blob endpoint for a service principal's bearer (a local Azure AD token endpoint as
  AZURE_AUTHORITY_HOST; a wrong secret and a wrong tenant named), a stalled and a truncated body.
* hf://ORG/REPO[:REVISION] against tests/catalog/fake-hf-hub.py (the hub's wire format): files
  kept in folders, a revision, a private repository with and without HF_TOKEN (401 named), a
  missing repository and revision (404 named), an unsafe file name refused, a stall, a truncated
  body.
* gs:// with GOOGLE_APPLICATION_CREDENTIALS (a service-account key file): an RS256 JWT exchanged
  at a local token endpoint that verifies its signature with the key's public key (openssl), the
  token then the bearer on the GCS emulator (behind a guard that wants it, answers 403 for one
  bucket, stalls or cuts one body); a bad key file, a token endpoint answering 400 and a JWT the
  endpoint rejects each a FailedToDownload in words.

Nothing is left in DST after a failure. Usage: storage_sources.py (MODELPLANE_BUILD_ROOT).
"""
import base64
import hashlib
import http.client
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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import AZURITE_ACCOUNT, AZURITE_KEY, azure_put  # noqa: E402

BUILD = os.environ.get("MODELPLANE_BUILD_ROOT", "build")
SRC = os.environ.get("MODELPLANE_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.join(BUILD, "src", "cmd", "modelplane")
HERE = os.path.dirname(os.path.abspath(__file__))
T = tempfile.mkdtemp(prefix="storage-sources-")
procs = []
n = 0
failed = 0


def tap(fn):
    global n, failed
    n += 1
    t0 = time.monotonic()
    try:
        fn()
        print(f"ok {n} - {fn.__name__} ({time.monotonic() - t0:.1f}s)", flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is a test failure
        failed += 1
        print(f"not ok {n} - {fn.__name__}: {type(e).__name__}: {e}", flush=True)


def skip(what, why):
    global n
    n += 1
    print(f"ok {n} # SKIP {what}: {why}", flush=True)


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, what, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on {port}")


def fetch(uri, env, fast=True):
    """Runs storage-initializer; returns (rc, stderr, {relative path: bytes})."""
    dst = tempfile.mkdtemp(dir=T)
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("AZURE_", "GOOGLE_", "HF_", "STORAGE_EMULATOR"))}
    e.update(env)
    if fast:
        e["MODELPLANE_STALL_TIMEOUT"] = "2"
        e["MODELPLANE_FETCH_ATTEMPTS"] = "2"
    p = subprocess.run([BIN, "storage-initializer", uri, dst], env=e, capture_output=True,
                       text=True, timeout=120)
    for bad in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
        expect(bad not in p.stderr, f"{uri}: a sanitizer report: {p.stderr[-2000:]}")
    files = {}
    for root, _, names in os.walk(dst):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, dst)] = f.read()
    return p.returncode, p.stderr, files


def failed_with(uri, env, *words):
    rc, err, files = fetch(uri, env)
    expect(rc != 0, f"{uri}: succeeded")
    for w in words:
        expect(w in err, f"{uri}: {w!r} not in {err[-400:]!r}")
    expect(not files, f"{uri}: left {sorted(files)} behind")
    return err


class Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body, headers=()):
        body = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)


def serve(handler):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1]


# --- Azure ----------------------------------------------------------------------------------

AZ_ACCOUNT = AZURITE_ACCOUNT
AZ_KEY = AZURITE_KEY
az_put = azure_put


def azure_tests():
    try:
        exe = subprocess.run(["bash", os.path.join(HERE, "azurite.sh")], capture_output=True,
                             text=True, check=True).stdout.strip()
    except subprocess.CalledProcessError as e:
        return skip("Azure Blob Storage", (e.stderr.strip().splitlines() or ["azurite.sh"])[-1])
    port = free_port()
    log = open(os.path.join(T, "azurite.log"), "w")
    procs.append(subprocess.Popen([exe, "--blobHost", "127.0.0.1", "--blobPort", str(port),
                                   "--location", os.path.join(T, "azurite"), "--disableTelemetry",
                                   "--skipApiVersionCheck"], stdout=log, stderr=log,
                                  start_new_session=True))
    wait_port(port, "azurite")
    ep = f"http://127.0.0.1:{port}/{AZ_ACCOUNT}"
    az_put(ep, "/private?restype=container")
    az_put(ep, "/public?restype=container", headers={"x-ms-blob-public-access": "container"})
    model = {"iris/model.joblib": b"M" * 70000, "iris/sub dir/settings.json": b'{"a": 1}'}
    for c in ("private", "public"):
        for k, v in model.items():
            az_put(ep, f"/{c}/" + urllib.parse.quote(k), v,
                   {"x-ms-blob-type": "BlockBlob",
                    "Content-MD5": base64.b64encode(hashlib.md5(v).digest()).decode()})
    # a stored Content-MD5 that is not the body's
    az_put(ep, "/private/liar/model.bin", b"the real bytes", {"x-ms-blob-type": "BlockBlob"})
    az_put(ep, "/private/liar/model.bin?comp=properties",
           headers={"x-ms-blob-content-md5": base64.b64encode(hashlib.md5(b"other").digest()).decode()})
    conn = (f"DefaultEndpointsProtocol=http;AccountName={AZ_ACCOUNT};AccountKey={AZ_KEY};"
            f"BlobEndpoint={ep};")
    keyed = {"AZURE_STORAGE_CONNECTION_STRING": conn}
    want = {"model.joblib": model["iris/model.joblib"],
            "sub dir/settings.json": model["iris/sub dir/settings.json"]}

    def azure_shared_key_folder():
        rc, err, files = fetch(f"https://{AZ_ACCOUNT}.blob.core.windows.net/private/iris", keyed)
        expect(rc == 0, err[-400:])
        expect(files == want, sorted(files))

    def azure_azurite_url_form():
        rc, err, files = fetch(f"{ep}/private/iris/", keyed)
        expect(rc == 0, err[-400:])
        expect(files == want, sorted(files))

    def azure_single_blob():
        rc, err, files = fetch(f"{ep}/private/iris/model.joblib", keyed)
        expect(rc == 0 and list(files) == ["model.joblib"], (err[-300:], sorted(files)))

    def azure_anonymous_public_container():
        env = {"AZURE_STORAGE_CONNECTION_STRING": f"AccountName={AZ_ACCOUNT};BlobEndpoint={ep}"}
        rc, err, files = fetch(f"{ep}/public/iris", env)
        expect(rc == 0 and files == want, (err[-300:], sorted(files)))

    def azure_anonymous_private_container_refused():
        env = {"AZURE_STORAGE_CONNECTION_STRING": f"AccountName={AZ_ACCOUNT};BlobEndpoint={ep}"}
        # Azure answers 404 ResourceNotFound, Azurite 403 AuthorizationFailure
        failed_with(f"{ep}/private/iris", env, "HTTP 40")

    def azure_wrong_key_403():
        bad = base64.b64encode(b"x" * 64).decode()
        env = {"AZURE_STORAGE_CONNECTION_STRING": conn.replace(AZ_KEY, bad)}
        failed_with(f"{ep}/private/iris", env, "HTTP 403", "AuthorizationFailure")

    def azure_missing_404():
        failed_with(f"{ep}/private/nothing-here", keyed, "no such object or prefix")
        failed_with(f"{ep}/nocontainer/x", keyed, "HTTP 404", "ContainerNotFound")

    def azure_content_md5_mismatch():
        failed_with(f"{ep}/private/liar", keyed, "MD5 mismatch", "Content-MD5 says")

    class Faulty(Quiet):
        """A blob endpoint whose listing is fine and whose blob bodies stall or stop short."""

        def do_GET(self):
            path = urllib.parse.urlsplit(self.path).path
            kind = path.split("/")[2]
            if kind == "sp":  # a service principal's bearer, as Azure's RBAC wants it
                if self.headers.get("Authorization") != "Bearer sp-token-1" or \
                        not self.headers.get("x-ms-version"):
                    return self.send(403, "<?xml version=\"1.0\"?><Error><Code>"
                                          "AuthorizationPermissionMismatch</Code><Message>no"
                                          "</Message></Error>")
                if "comp=list" in self.path:
                    return self.send(200, "<EnumerationResults><Blobs><Blob><Name>m/a.bin</Name>"
                                          "</Blob><Blob><Name>m/b/c.bin</Name></Blob></Blobs>"
                                          "</EnumerationResults>")
                return self.send(200, path.encode())
            if "comp=list" in self.path:
                return self.send(200, "<EnumerationResults><Blobs><Blob><Name>m/model.bin</Name>"
                                      "<Properties><Content-Length>100000</Content-Length>"
                                      "</Properties></Blob></Blobs><NextMarker/></EnumerationResults>")
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            if kind == "stall":  # not a byte of the body: the stall timeout (2 s here) fires
                self.wfile.flush()
                time.sleep(8)
            else:
                self.wfile.write(b"x" * 1000)
            self.close_connection = True

    fport = serve(Faulty)
    fep = f"http://127.0.0.1:{fport}/{AZ_ACCOUNT}"
    faulty = {"AZURE_STORAGE_CONNECTION_STRING": f"AccountName={AZ_ACCOUNT};BlobEndpoint={fep}"}

    tokens = []

    class AzureAD(Quiet):
        """Azure AD's v2.0 token endpoint for the client-credentials grant."""

        def do_POST(self):
            form = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers["Content-Length"]))
                                               .decode()))
            tokens.append(self.path)
            if (self.path != "/tenant-1/oauth2/v2.0/token" or form.get("client_id") != "app-1"
                    or form.get("grant_type") != "client_credentials"
                    or form.get("scope") != "https://storage.azure.com/.default"):
                return self.send(400, json.dumps({"error": "invalid_request",
                                                  "error_description": "AADSTS900144: bad form"}))
            if form.get("client_secret") != "s3cr&t=":
                return self.send(401, json.dumps({"error": "invalid_client",
                                                  "error_description": "AADSTS7000215: Invalid "
                                                                       "client secret provided."}))
            self.send(200, json.dumps({"token_type": "Bearer", "expires_in": 3599,
                                       "access_token": "sp-token-%d" % len(tokens)}))

    ad = serve(AzureAD)
    sp = {**faulty, "AZURE_CLIENT_ID": "app-1", "AZURE_CLIENT_SECRET": "s3cr&t=",
          "AZURE_TENANT_ID": "tenant-1", "AZURE_AUTHORITY_HOST": f"http://127.0.0.1:{ad}"}

    def azure_service_principal():
        rc, err, files = fetch(f"{fep}/sp/m", sp)
        expect(rc == 0, err[-400:])
        expect(files == {"a.bin": f"/{AZ_ACCOUNT}/sp/m/a.bin".encode(),
                         "b/c.bin": f"/{AZ_ACCOUNT}/sp/m/b/c.bin".encode()}, files)
        expect(len(tokens) == 1, f"one token for the listing and both blobs: {tokens}")

    def azure_service_principal_refused():
        failed_with(f"{fep}/sp/m", {**sp, "AZURE_CLIENT_SECRET": "wrong"}, "HTTP 401",
                    "invalid_client: AADSTS7000215", "Azure service principal app-1")
        failed_with(f"{fep}/sp/m", {**sp, "AZURE_TENANT_ID": "other"}, "HTTP 400",
                    "AADSTS900144")

    def azure_stalled_body():
        failed_with(f"{fep}/stall/m", faulty, "Operation too slow")

    def azure_truncated_body():
        failed_with(f"{fep}/trunc/m", faulty, "GET " + fep + "/trunc/m/model.bin",
                    "99000 bytes remaining")

    for t in (azure_service_principal, azure_service_principal_refused, azure_stalled_body,
              azure_truncated_body, azure_shared_key_folder, azure_azurite_url_form, azure_single_blob,
              azure_anonymous_public_container, azure_anonymous_private_container_refused,
              azure_wrong_key_403, azure_missing_404, azure_content_md5_mismatch):
        tap(t)


# --- Hugging Face Hub -----------------------------------------------------------------------

def hf_tests():
    files = os.path.join(T, "hf-files")
    model = {"model.joblib": b"J" * 50000, "config.json": b'{"x": 1}',
             "tokenizer/vocab.txt": b"a\nb\n"}
    for repo in ("acme--iris", "hf-private--iris", "hf-unsafe--iris", "hf-stall--iris",
                 "hf-trunc--iris"):
        for k, v in model.items():
            os.makedirs(os.path.dirname(os.path.join(files, repo, k)), exist_ok=True)
            with open(os.path.join(files, repo, k), "wb") as f:
                f.write(v)
    log = open(os.path.join(T, "hub.log"), "w")
    hub = subprocess.Popen([sys.executable, os.path.join(SRC, "tests", "catalog", "fake-hf-hub.py"),
                            os.path.join(SRC, "tests", "fixtures", "catalog", "hf")],
                           env={**os.environ, "FAKE_HF_FILES": files}, stdout=subprocess.PIPE,
                           stderr=log, text=True, start_new_session=True)
    procs.append(hub)
    port = int(hub.stdout.readline().split()[1])
    env = {"HF_ENDPOINT": f"http://127.0.0.1:{port}"}

    def hf_repository_with_folders_and_lfs_redirects():
        rc, err, got = fetch("hf://acme/iris", env)
        expect(rc == 0, err[-400:])
        expect(got == model, sorted(got))

    def hf_revision():
        rc, err, got = fetch("hf://acme/iris:5ea1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3", env)
        expect(rc == 0 and got == model, (err[-300:], sorted(got)))
        failed_with("hf://acme/iris:v9", env, "HTTP 404", "Invalid rev id: v9")

    def hf_private_needs_token_401():
        failed_with("hf://hf-private/iris", env, "HTTP 401", "Invalid username or password",
                    "no HF_TOKEN set")
        failed_with("hf://hf-private/iris", {**env, "HF_TOKEN": "hf_bad"}, "HTTP 401")
        rc, err, got = fetch("hf://hf-private/iris", {**env, "HF_TOKEN": "hf_good"})
        expect(rc == 0 and got == model, (err[-300:], sorted(got)))

    def hf_missing_repository_404():
        failed_with("hf://acme/nothing", env, "HTTP 404", "Repository not found")

    def hf_unsafe_file_name_refused():
        failed_with("hf://hf-unsafe/iris", env, "'../evil.txt' leaves the model directory")

    def hf_stalled_body():
        failed_with("hf://hf-stall/iris", env, "Operation too slow")

    def hf_truncated_body():
        failed_with("hf://hf-trunc/iris", env, "bytes remaining to read")

    for t in (hf_repository_with_folders_and_lfs_redirects, hf_revision,
              hf_private_needs_token_401, hf_missing_repository_404, hf_unsafe_file_name_refused,
              hf_stalled_body, hf_truncated_body):
        tap(t)


# --- GCS service-account keys --------------------------------------------------------------

def b64url_decode(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def gcs_tests():
    venv = os.path.expanduser(os.environ.get("MODELPLANE_AGENT_VENV",
                                             "~/.cache/modelplane/venv-agent"))
    if not os.access(os.path.join(venv, "bin", "pip"), os.X_OK):
        return skip("gs:// service accounts", f"no agent venv at {venv} (tests/agent/venv.sh)")
    try:
        exe = subprocess.run(["bash", os.path.join(HERE, "gcs-emulator.sh"), venv],
                             capture_output=True, text=True, check=True).stdout.strip()
    except subprocess.CalledProcessError as e:
        return skip("gs:// service accounts", (e.stderr.strip().splitlines() or ["?"])[-1])
    keys = os.path.join(T, "keys")
    os.makedirs(keys)
    for name in ("good", "other"):
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                        "-out", os.path.join(keys, name + ".pem")], check=True, capture_output=True)
        subprocess.run(["openssl", "pkey", "-in", os.path.join(keys, name + ".pem"), "-pubout",
                        "-out", os.path.join(keys, name + ".pub")], check=True, capture_output=True)
    seen = {"exchanges": 0, "bearers": set()}

    class Token(Quiet):
        """Google's token endpoint as the JWT bearer grant needs it: the assertion's RS256
        signature verified with the service account's public key (openssl), its claims checked."""

        def do_POST(self):
            form = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers["Content-Length"]))
                                               .decode()))
            if "/status400" in self.path:
                return self.send(400, json.dumps({"error": "invalid_request",
                                                  "error_description": "the endpoint says no"}))
            if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
                return self.send(400, json.dumps({"error": "unsupported_grant_type",
                                                  "error_description": "grant_type"}))
            head, claims, sig = form["assertion"].split(".")
            with open(os.path.join(keys, "signed"), "wb") as f:
                f.write(f"{head}.{claims}".encode())
            with open(os.path.join(keys, "sig"), "wb") as f:
                f.write(b64url_decode(sig))
            v = subprocess.run(["openssl", "dgst", "-sha256", "-verify", os.path.join(keys, "good.pub"),
                                "-signature", os.path.join(keys, "sig"), os.path.join(keys, "signed")],
                               capture_output=True)
            c = json.loads(b64url_decode(claims))
            h = json.loads(b64url_decode(head))
            aud = f"http://127.0.0.1:{self.server.server_address[1]}{self.path}"
            if (v.returncode != 0 or h.get("alg") != "RS256" or c.get("aud") != aud
                    or c.get("iss") != "loader@proj.iam.gserviceaccount.com"
                    or c.get("scope") != "https://www.googleapis.com/auth/devstorage.read_only"
                    or not c["iat"] <= time.time() + 5 <= c["exp"] <= c["iat"] + 3600):
                return self.send(400, json.dumps({"error": "invalid_grant",
                                                  "error_description": "Invalid JWT Signature."}))
            seen["exchanges"] += 1
            self.send(200, json.dumps({"access_token": "ya29.token-%d" % seen["exchanges"],
                                       "expires_in": 3599, "token_type": "Bearer"}))

    tport = serve(Token)
    gport = free_port()
    log = open(os.path.join(T, "gcs.log"), "w")
    procs.append(subprocess.Popen([exe, "start", "--host", "127.0.0.1", "--port", str(gport),
                                   "--in-memory", "--default-bucket", "models"], stdout=log,
                                  stderr=log, start_new_session=True))
    wait_port(gport, "gcs emulator")
    model = {"model.joblib": b"G" * 30000, "model-settings.json": b'{"name": "x"}'}
    for k, v in list(model.items()) + [("../stall/model.bin", b"S" * 30000),
                                       ("../cut/model.bin", b"C" * 30000)]:
        for _ in range(100):
            try:
                c = http.client.HTTPConnection("127.0.0.1", gport, timeout=10)
                name = os.path.normpath(f"sa/{k}")
                c.request("POST", f"/upload/storage/v1/b/models/o?uploadType=media&name={name}", v)
                expect(c.getresponse().status == 200, "upload")
                break
            except ConnectionError:
                time.sleep(0.1)

    class Guard(Quiet):
        """In front of the emulator (which takes any token): only "Bearer ya29.*" passes."""

        def do_GET(self):
            auth = self.headers.get("Authorization", "")
            if not auth.startswith("Bearer ya29."):
                return self.send(401, json.dumps({"error": {"code": 401, "message": "no token"}}))
            seen["bearers"].add(auth)
            if "/b/denied/" in self.path:
                return self.send(403, json.dumps({"error": {"code": 403, "message": "loader@proj."
                                                  "iam.gserviceaccount.com does not have "
                                                  "storage.objects.list access"}}))
            c = http.client.HTTPConnection("127.0.0.1", gport, timeout=30)
            c.request("GET", self.path)
            r = c.getresponse()
            body = r.read()
            if "alt=media" in self.path and ("stall%2F" in self.path or "cut%2F" in self.path):
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if "stall%2F" in self.path:  # headers, then nothing
                    self.wfile.flush()
                    time.sleep(8)
                else:
                    self.wfile.write(body[:1000])
                self.close_connection = True
                return None
            self.send(r.status, body, [(k, v) for k, v in r.getheaders()
                                       if k.lower() in ("content-type", "x-goog-hash")])

    guard = serve(Guard)

    def sa_env(key="good", path="/token", **extra):
        doc = {"type": "service_account", "project_id": "proj", "private_key_id": "k1",
               "client_email": "loader@proj.iam.gserviceaccount.com",
               "token_uri": f"http://127.0.0.1:{tport}{path}"}
        with open(os.path.join(keys, key + ".pem")) as f:
            doc["private_key"] = f.read()
        doc.update(extra)
        fn = os.path.join(keys, f"sa-{key}-{len(os.listdir(keys))}.json")
        with open(fn, "w") as f:
            json.dump(doc, f)
        return {"GOOGLE_APPLICATION_CREDENTIALS": fn, "STORAGE_EMULATOR_HOST": f"127.0.0.1:{guard}"}

    def gcs_service_account_key():
        rc, err, files = fetch("gs://models/sa", sa_env())
        expect(rc == 0, err[-400:])
        expect(files == model, sorted(files))
        # one exchange for the listing and both objects (the token is cached)
        expect(seen["exchanges"] == 1 and seen["bearers"] == {"Bearer ya29.token-1"},
               (seen["exchanges"], seen["bearers"]))

    def gcs_403_404_stall_truncated():
        env = sa_env()
        failed_with("gs://denied/m", env, "HTTP 403", "does not have storage.objects.list access")
        failed_with("gs://models/sa-missing", env, "no such object or prefix")
        failed_with("gs://models/stall", env, "Operation too slow")
        failed_with("gs://models/cut", env, "bytes remaining to read")

    def gcs_no_credentials_refused_by_the_guard():
        failed_with("gs://models/sa", {"STORAGE_EMULATOR_HOST": f"127.0.0.1:{guard}"},
                    "HTTP 401", "no token")

    def gcs_bad_key_file():
        failed_with("gs://models/sa", {**sa_env(), "GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent"},
                    "GOOGLE_APPLICATION_CREDENTIALS /nonexistent", "No such file")
        failed_with("gs://models/sa", sa_env(private_key="-----BEGIN PRIVATE KEY-----\nAAAA\n"
                                                         "-----END PRIVATE KEY-----\n"),
                    "not a PEM private key")
        failed_with("gs://models/sa", sa_env(type="authorized_user"), "authorized_user",
                    "only service-account keys are read")

    def gcs_token_endpoint_400():
        failed_with("gs://models/sa", sa_env(path="/status400"), "HTTP 400",
                    "invalid_request: the endpoint says no", "loader@proj.iam.gserviceaccount.com")

    def gcs_jwt_rejected():
        # signed with another key than the one the endpoint knows
        failed_with("gs://models/sa", sa_env(key="other"), "HTTP 400",
                    "invalid_grant: Invalid JWT Signature.")

    for t in (gcs_service_account_key, gcs_403_404_stall_truncated,
              gcs_no_credentials_refused_by_the_guard, gcs_bad_key_file,
              gcs_token_endpoint_400, gcs_jwt_rejected):
        tap(t)


def main():
    if not os.access(BIN, os.X_OK):
        print(f"Bail out! {BIN} not built")
        return 1
    try:
        azure_tests()
        hf_tests()
        gcs_tests()
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, 9)
            except ProcessLookupError:
                pass
            p.wait()
    print(f"1..{n}")
    if not failed:
        shutil.rmtree(T, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
