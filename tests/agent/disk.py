#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Nothing corrupt is ever Loaded (issue 29 item 3): `modelplane agent` on a small tmpfs model
directory, models served by a local HTTP server (plain http:// and a minimal S3 answering
ListObjectsV2 and GET), loads accepted by a fake model server that records what it loaded.

Run by test-agent-disk.sh inside `unshare -m` (the tmpfs never leaks into the host's mounts).
Usage: disk.py MODELPLANE_BINARY MODEL_DIR (MODEL_DIR: an empty tmpfs of TMPFS_MIB MiB)
"""
import base64
import hashlib
import http.server
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import ConfigDir, failures, free_port, log, ok, step_no  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
MODEL_DIR = sys.argv[2]
TMPFS_MIB = 16
MIB = 1 << 20
def tar_gz(files):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w:gz", compresslevel=1) as t:
        for name, data in files:
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
    return b.getvalue()


class Unseekable(io.RawIOBase):
    """What zipfile writes to when it cannot seek: sizes in data descriptors after the data."""

    def __init__(self):
        super().__init__()
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.data += b
        return len(b)


def zip_streamed(files):
    out = Unseekable()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for name, data in files:
            with z.open(name, "w") as f:
                f.write(data)
    return bytes(out.data)


SMALL = os.urandom(1 * MIB)
BIG = os.urandom(24 * MIB)            # more than the whole volume
STREAM = os.urandom(10 * MIB)         # more than half the free space: save-then-extract fails
MID = os.urandom(8 * MIB)
BODIES = {
    "/small.bin": SMALL,
    "/mid.bin": MID,
    "/big.bin": BIG,
    "/big-nolen.bin": BIG,
    "/stream.tar.gz": tar_gz([("model/weights.bin", STREAM), ("model/config.json", b"{}")]),
    "/bomb.tar.gz": tar_gz([("zeros.bin", bytes(256 * MIB))]),
    "/big.zip": zip_streamed([("w.bin", BIG)]),
    "/small.zip": zip_streamed([("m/w.bin", SMALL)]),
    "/lying-md5.bin": SMALL,
    "/truncated.bin": SMALL,
    "/bkt/etag.bin": SMALL,
    "/bkt/good.bin": SMALL,
}


class Files(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):  # noqa: N802
        path, _, query = self.path.partition("?")
        if path == "/bkt" or path == "/bkt/":  # S3 ListObjectsV2: nothing under any prefix
            body = (b'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>'
                    b"<IsTruncated>false</IsTruncated></ListBucketResult>")
            if "prefix=big%2F" in query or "prefix=big/" in query:
                body = (b'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>'
                        b"<Contents><Key>big/a.bin</Key><Size>25165824</Size></Contents>"
                        b"<IsTruncated>false</IsTruncated></ListBucketResult>")
            self.send_response(200)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        body = BODIES.get(path)
        if path == "/bkt/big/a.bin":
            body = BIG
        if body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        md5 = hashlib.md5(body).digest()
        if path == "/lying-md5.bin":
            md5 = hashlib.md5(b"something else").digest()
        if path in ("/lying-md5.bin", "/truncated.bin"):
            self.send_header("Content-MD5", base64.b64encode(md5).decode())
        if path == "/bkt/etag.bin":
            self.send_header("ETag", '"%s"' % hashlib.md5(b"not the body").hexdigest())
        if path == "/bkt/good.bin":
            self.send_header("ETag", '"%s"' % md5.hex())
        if path in ("/big-nolen.bin", "/truncated.bin"):
            # no Content-Length: the end of the body is the end of the connection
            self.send_header("Connection", "close")
            self.end_headers()
            if path == "/truncated.bin":
                body = body[: len(body) // 2]
            try:
                self.wfile.write(body)
            except OSError:
                pass
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass


class ModelServer(http.server.BaseHTTPRequestHandler):
    """The repository API of a model server: load records a digest of what is on disk."""
    protocol_version = "HTTP/1.1"
    loaded = {}  # name -> {relative path: sha256}
    lock = threading.Lock()

    def log_message(self, *a):
        pass

    def _answer(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):  # noqa: N802
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        parts = self.path.strip("/").split("/")
        if self.path.startswith("/v2/repository/index"):
            with self.lock:
                self._answer(200, [{"name": k, "state": "READY"} for k in self.loaded])
            return
        if len(parts) == 5 and parts[:3] == ["v2", "repository", "models"]:
            name, verb = parts[3], parts[4]
            with self.lock:
                if verb == "load":
                    self.loaded[name] = digest_dir(os.path.join(MODEL_DIR, name))
                else:
                    self.loaded.pop(name, None)
            self._answer(200, {})
            return
        self._answer(404, {"error": "no such route"})


def digest_dir(d):
    out = {}
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, d)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def serve(handler):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    srv.handle_error = lambda *a: None  # the agent hanging up on a refused body is expected
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1]


def states(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/modelplane/agent/models", timeout=10) as r:
        return {m["name"]: m for m in json.loads(r.read())}


def wait_state(port, name, want, timeout=60):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = states(port).get(name)
            if last and last["state"] in want:
                return last
        except OSError as e:
            last = e
        time.sleep(0.1)
    log(f"{name}: timed out waiting for {want}; last: {last!r}")
    return last if isinstance(last, dict) else {"state": "?", "reason": repr(last)}


def leftovers(name):
    return [e for e in os.listdir(MODEL_DIR) if e == name or e.startswith(".mp-tmp-" + name + "-")]


def sha(b):
    return hashlib.sha256(b).hexdigest()


def main():
    files_port = serve(Files)
    ms_port = serve(ModelServer)
    base = f"http://127.0.0.1:{files_port}"
    work = tempfile.mkdtemp(prefix="mp-agent-disk-")
    os.mkdir(os.path.join(work, "configs"))
    cfg = ConfigDir(os.path.join(work, "configs"))
    port = free_port()
    env = dict(os.environ, AWS_ENDPOINT_URL=base, AWS_ANONYMOUS_CREDENTIAL="true")
    agent_log = open(os.path.join(work, "agent.log"), "wb")
    extra = sys.argv[3:]
    p = subprocess.Popen([BIN, "agent", "--log-format", "text", "--enable-puller", "--api-watch", "off",
                          "--config-dir", cfg.path, "--model-dir", MODEL_DIR, "--port", str(port),
                          "--listen-address", "127.0.0.1", "--model-server-url",
                          f"http://127.0.0.1:{ms_port}", "--file-poll", "1", *extra],
                         stdout=agent_log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    print("1..18", flush=True)
    try:
        run(cfg, base, port)
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
        agent_log.close()
        with open(os.path.join(work, "agent.log"), "rb") as f:
            text = f.read().decode(errors="replace")
        ok(p.returncode == 0 and "Sanitizer" not in text and "runtime error" not in text,
           f"the agent exits 0 with no sanitizer report (exit {p.returncode})")
        if failures:
            with open(os.path.join(work, "agent.log"), "rb") as f:
                for line in f.read().decode(errors="replace").splitlines()[-40:]:
                    log("agent: " + line)
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


def failed_with(port, name, words):
    st = wait_state(port, name, ("FailedToDownload", "Loaded", "FailedToLoad"))
    reason = st.get("reason", "")
    log(f"{name}: {st['state']}: {reason}")
    good = st["state"] == "FailedToDownload" and all(w in reason for w in words)
    return good, st


def run(cfg, base, port):
    models = []

    def put(*entries):
        models.extend(entries)
        cfg.write(models)

    def drop(name):
        models[:] = [m for m in models if m[0] != name]
        cfg.write(models)

    # 1-2: a model bigger than the volume (Content-Length known): refused, nothing left behind
    put(("big", f"{base}/big.bin"))
    good, _ = failed_with(port, "big", ("space", "needed", "available"))
    ok(good, "a 24 MiB model on a 16 MiB volume is FailedToDownload naming the space needed and available")
    drop("big")
    time.sleep(1.5)
    ok(leftovers("big") == [] and "big" not in ModelServer.loaded,
       f"nothing of it is left in the model directory ({os.listdir(MODEL_DIR)})")

    # 3: the same without Content-Length: stopped as bytes arrive
    put(("nolen", f"{base}/big-nolen.bin"))
    good, _ = failed_with(port, "nolen", ("space",))
    ok(good and "nolen" not in ModelServer.loaded,
       "without Content-Length: FailedToDownload when the volume fills, never Loaded")
    drop("nolen")

    # 4: S3, the listing's sizes checked before any byte is downloaded
    put(("s3big", "s3://bkt/big"))
    good, _ = failed_with(port, "s3big", ("space", "needed", "available"))
    ok(good, "s3:// prefix whose listing exceeds the volume: FailedToDownload naming the space")
    drop("s3big")

    # 5: a model that fits loads, bytes intact
    put(("small", f"{base}/small.bin"))
    st = wait_state(port, "small", ("Loaded", "FailedToDownload", "FailedToLoad"))
    ok(st["state"] == "Loaded" and ModelServer.loaded.get("small", {}).get("small.bin") == sha(SMALL),
       f"a model that fits loads afterwards, intact ({st['state']})")

    # 6: streaming: archive content larger than half the free space extracts
    time.sleep(1)
    free = shutil.disk_usage(MODEL_DIR).free
    log(f"free before stream.tar.gz: {free / MIB:.1f} MiB, content {len(STREAM) / MIB:.0f} MiB")
    put(("stream", f"{base}/stream.tar.gz"))
    st = wait_state(port, "stream", ("Loaded", "FailedToDownload", "FailedToLoad"))
    log(f"stream: {st['state']}: {st.get('reason', '')}")
    ok(st["state"] == "Loaded" and
       ModelServer.loaded.get("stream", {}).get("model/weights.bin") == sha(STREAM),
       "a .tar.gz whose content is more than half the free space is streamed into place and loads")

    # 7: a model that does not fit now is retried (the reconciler's backoff) and loads once
    # space is freed
    put(("later", f"{base}/mid.bin"))
    good, _ = failed_with(port, "later", ("space",))
    drop("stream")
    st = wait_state(port, "later", ("Loaded",))
    ok(good and st["state"] == "Loaded" and
       ModelServer.loaded.get("later", {}).get("mid.bin") == sha(MID),
       f"a model refused for space loads on a retry once space is freed ({st['state']})")
    drop("later")
    time.sleep(1.5)

    # 8-9: an archive bomb (256 MiB of zeros in ~250 KiB): refused, nothing left behind
    put(("bomb", f"{base}/bomb.tar.gz"))
    good, st = failed_with(port, "bomb", ("zeros.bin", "space"))
    ok(good and "bomb" not in ModelServer.loaded,
       f"an archive bomb is FailedToDownload, never Loaded ({st['state']})")
    drop("bomb")
    time.sleep(1.5)
    ok(leftovers("bomb") == [], f"nothing of the bomb is left ({os.listdir(MODEL_DIR)})")

    # 10-12: zip, streamed: sizes unknown until each entry's end (data descriptors)
    put(("bigzip", f"{base}/big.zip"))
    good, st = failed_with(port, "bigzip", ("space", "needed", "available"))
    ok(good, "a .zip whose content exceeds the volume is FailedToDownload naming the space")
    drop("bigzip")
    time.sleep(1.5)
    ok(leftovers("bigzip") == [], f"nothing of it is left ({os.listdir(MODEL_DIR)})")
    put(("zip", f"{base}/small.zip"))
    st = wait_state(port, "zip", ("Loaded", "FailedToDownload", "FailedToLoad"))
    ok(st["state"] == "Loaded" and ModelServer.loaded.get("zip", {}).get("m/w.bin") == sha(SMALL),
       f"a .zip streamed into place loads intact ({st['state']}: {st.get('reason', '')})")
    drop("zip")

    # 13-14: Content-MD5 mismatch
    put(("liar", f"{base}/lying-md5.bin"))
    good, st = failed_with(port, "liar", ("MD5", "lying-md5.bin"))
    ok(good, "a body whose Content-MD5 differs is FailedToDownload naming the object and both sums")
    drop("liar")
    time.sleep(1.5)
    ok(leftovers("liar") == [], "the mismatching copy is removed")

    # 15: a truncated body (no Content-Length, the connection closed half way; Content-MD5 tells)
    put(("trunc", f"{base}/truncated.bin"))
    good, st = failed_with(port, "trunc", ("MD5",))
    ok(good, "a truncated body is FailedToDownload, never Loaded")
    drop("trunc")

    # 16-17: S3 ETag (single-part: the MD5 of the body)
    put(("etag", "s3://bkt/etag.bin"))
    good, st = failed_with(port, "etag", ("etag.bin", "MD5"))
    ok(good, "an S3 object whose ETag is not the body's MD5 is FailedToDownload")
    put(("s3good", "s3://bkt/good.bin"))
    st = wait_state(port, "s3good", ("Loaded", "FailedToDownload", "FailedToLoad"))
    ok(st["state"] == "Loaded", f"an S3 object whose ETag matches loads ({st['state']}: {st.get('reason', '')})")


if __name__ == "__main__":
    sys.exit(main())
