#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`modelplane agent` as an InferenceService's agent with KServe's logger and batcher flags
(docs/agent.md "Request logging", "Batching"), against real parts: MLServer 1.7.1 with
mlserver-sklearn serving a model trained here, a CloudEvents receiver that parses what it gets with
the CloudEvents Python SDK (cloudevents.http.from_http), and a counting pass-through in front of
MLServer that records every request the model server sees (and its rows).

Logger: the events checked field by field (type, source, id shared by request and response,
KServe's extension headers, metadata headers, annotations, body); a sink that answers slowly or is
down while inference answers at the same speed, the drop and failure counters rising; the json and
csv store files. Batcher: concurrent V2 requests answered one by one, correctly, while MLServer saw
fewer, larger requests; a batch below the size flushed at the latency; a failed upstream answer to
every caller; a malformed body passed through unbatched; a malformed V1 body refused (400)."""
import base64
import csv
import http.client
import http.server
import json
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentlib import agent_port, free_port  # noqa: E402

from cloudevents.http import from_http  # noqa: E402

HANG = 60
step_no = [0]
failed = [0]
procs = []


def note(msg):
    print(f"# {msg}", flush=True)


def ok(cond, what):
    step_no[0] += 1
    print(f"{'ok' if cond else 'not ok'} {step_no[0]} - {what}", flush=True)
    if not cond:
        failed[0] += 1
    return cond


def wait_for(pred, timeout=HANG, every=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if pred():
                return True
        except Exception:
            pass
        time.sleep(every)
    return False


def start(cmd, log_path, env=None):
    log = open(log_path, "w")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    procs.append(p)
    return p


def post(port, path, body, headers=None, timeout=30):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    c.request("POST", path, body=body if isinstance(body, bytes) else json.dumps(body).encode(),
              headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/modelplane/agent/metrics", timeout=5) as r:
        out = {}
        for line in r.read().decode().splitlines():
            if line and not line.startswith("#"):
                k, v = line.split()
                out[k] = int(v)
        return out


# ---- the CloudEvents receiver ----

class Receiver:
    """A sink: every POST parsed by the CloudEvents SDK; `delay` seconds before answering."""

    def __init__(self, tls=None):
        self.events = []
        self.raw = []
        self.delay = 0.0
        self.lock = threading.Lock()
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if outer.delay:
                    time.sleep(outer.delay)
                try:
                    ev = from_http(dict(self.headers.items()), body)
                    with outer.lock:
                        outer.events.append(ev)
                        outer.raw.append((dict(self.headers.items()), body))
                    self.send_response(200)
                except Exception as e:  # a malformed event is a test failure, shown
                    note(f"receiver: {e!r}")
                    self.send_response(400)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            self.srv.socket = ctx.wrap_socket(self.srv.socket, server_side=True)
        self.port = self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def by_id(self, id_):
        with self.lock:
            return [e for e in self.events if e["id"] == id_]

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


# ---- the counting pass-through in front of MLServer ----

class Counter:
    """Forwards to MLServer and records (path, rows of the first input) of each infer request."""

    def __init__(self, upstream):
        self.seen = []
        self.lock = threading.Lock()
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def forward(self, method):
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    body = b""
                    while True:
                        size = int(self.rfile.readline().split(b";")[0], 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            break
                        body += self.rfile.read(size)
                        self.rfile.readline()
                else:
                    n = int(self.headers.get("Content-Length", "0"))
                    body = self.rfile.read(n) if n else None
                if method == "POST" and self.path.endswith("/infer"):
                    try:
                        rows = json.loads(body)["inputs"][0]["shape"][0]
                    except Exception:
                        rows = None
                    with outer.lock:
                        outer.seen.append((self.path, rows))
                c = http.client.HTTPConnection("127.0.0.1", upstream, timeout=60)
                hd = {k: v for k, v in self.headers.items()
                      if k.lower() not in ("host", "connection", "content-length",
                                           "transfer-encoding")}
                c.request(method, self.path, body=body, headers=hd)
                r = c.getresponse()
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                c.close()

            def do_GET(self):
                self.forward("GET")

            def do_POST(self):
                self.forward("POST")

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        self.port = self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def take(self):
        with self.lock:
            s, self.seen = self.seen, []
        return s


def train(model_dir):
    import joblib
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4))
    y = (x[:, 0] > 0).astype(int)
    d = os.path.join(model_dir, "iris")
    os.makedirs(d)
    joblib.dump(LogisticRegression().fit(x, y), os.path.join(d, "model.joblib"))
    with open(os.path.join(d, "model-settings.json"), "w") as f:
        json.dump({"name": "iris", "implementation": "mlserver_sklearn.SKLearnModel",
                   "parameters": {"uri": "./model.joblib"}}, f)


def v2(rows):
    return {"inputs": [{"name": "x", "shape": [len(rows), 4], "datatype": "FP64",
                        "data": [v for r in rows for v in r]}]}


def agent(bin_, work, name, port_of, extra):
    out = os.path.join(work, f"{name}.log")
    p = start([bin_, "agent", "--port", "0", "--listen-address", "127.0.0.1",
               "--component-port", str(port_of), "--api-watch", "off", *extra], out,
              env=dict(os.environ, MODELPLANE_LOG_LEVEL="info"))
    port = agent_port(p, out)
    if port is None:
        with open(out) as f:
            note(f"{name} did not start: {f.read()[-2000:]}")
        return p, None
    return p, port


def stop(p):
    p.terminate()
    try:
        return p.wait(20)
    except subprocess.TimeoutExpired:
        p.kill()
        return -9


def logger_steps(bin_, work, counter_port, direct):
    rcv = Receiver()
    common = ["--log-url", f"http://127.0.0.1:{rcv.port}/events", "--source-uri",
              "http://iris-predictor.default/", "--log-mode", "all", "--inference-service", "iris",
              "--namespace", "default", "--component", "predictor", "--endpoint", "default",
              "--metadata-headers", "X-User,X-Tenant", "--metadata-annotations",
              "team=ml,env=test", "--workers", "2", "--log-queue-size", "8"]
    p, port = agent(bin_, work, "agent-logger", counter_port, common)
    if not ok(port is not None, "the agent starts with KServe's logger flags"):
        return
    body = v2([[1.0, 0.5, -0.2, 0.3]])
    st, resp = post(port, "/v2/models/iris/infer", body,
                    {"X-User": "alice", "X-Tenant": "t1", "X-Other": "nope", "Ce-Id": "req-1"})
    ok(st == 200 and json.loads(resp)["outputs"][0]["data"] == direct([[1.0, 0.5, -0.2, 0.3]]),
       "inference through the logging agent answers as MLServer does")
    wait_for(lambda: len(rcv.by_id("req-1")) == 2, 10)
    evs = {e["type"]: e for e in rcv.by_id("req-1")}
    rq, rs = evs.get("org.kubeflow.serving.inference.request"), evs.get(
        "org.kubeflow.serving.inference.response")
    ok(rq is not None and rs is not None,
       "the receiver parsed a request and a response event (CloudEvents SDK, binary mode)")
    if rq is None or rs is None:
        return
    ok(rq["specversion"] == "1.0" and rq["source"] == "http://iris-predictor.default/" and
       rs["source"] == rq["source"], "specversion 1.0, ce-source is --source-uri")
    ok(rq["id"] == rs["id"] == "req-1", "request and response share the request's Ce-Id")
    ok(all(e.get("inferenceservicename") == "iris" and e.get("namespace") == "default" and
           e.get("component") == "predictor" and e.get("endpoint") == "default" for e in (rq, rs)),
       "extensions inferenceservicename, namespace, component, endpoint")
    md = json.loads(rq.get("metadata", "null") or "null")
    ok(md == {"X-Tenant": ["t1"], "X-User": ["alice"]},
       f"ce-metadata holds the allowed headers only, as KServe's map of lists ({md})")
    ok(json.loads(rq.get("annotations", "null") or "null") == {"env": "test", "team": "ml"},
       "ce-annotations holds --metadata-annotations")
    ok(rq.data == body and rs.data == json.loads(resp),
       "the request event's body is the request, the response event's body the answer")
    ok(rq["time"] <= rs["time"] and rq.get("recordedtime"),
       "ce-time of the request precedes the response's; ce-recordedtime set")
    hdrs = {k.lower(): v for k, v in next(h for h, b in rcv.raw if h.get("Ce-Id") == "req-1" or
                                          h.get("ce-id") == "req-1").items()}
    ok(hdrs.get("content-type") == "application/json" and "ce-type" in hdrs,
       "binary mode: attributes in ce- headers, Content-Type of the body")

    # ids: X-Request-Id, else a UUID, shared by the pair
    post(port, "/v2/models/iris/infer", body, {"X-Request-Id": "xr-7"})
    post(port, "/v2/models/iris/infer", body)
    wait_for(lambda: len(rcv.events) >= 6, 10)
    ok(len(rcv.by_id("xr-7")) == 2, "without Ce-Id the X-Request-Id names the pair")
    others = [e["id"] for e in rcv.events if e["id"] not in ("req-1", "xr-7")]
    ok(len(others) == 2 and others[0] == others[1] and len(others[0]) == 36,
       f"without either, one generated UUID for request and response ({others})")

    # a slow sink: inference at the same speed, the queue drops
    def timed(n):
        t = []
        for _ in range(n):
            t0 = time.monotonic()
            s, _ = post(port, "/v2/models/iris/infer", body)
            t.append(time.monotonic() - t0)
            if s != 200:
                return None
        return t

    base = timed(30)
    rcv.delay = 2.0
    slow = timed(60)
    m = metrics(port)
    ok(base is not None and slow is not None, "every inference answered 200 with the sink slow")
    if base and slow:
        note(f"median latency: sink fast {statistics.median(base)*1000:.1f} ms, "
             f"sink answering in 2 s {statistics.median(slow)*1000:.1f} ms")
        ok(statistics.median(slow) < statistics.median(base) * 2 + 0.02,
           "a slow sink does not slow inference down (median within 2x + 20 ms)")
    ok(m.get("modelplane_agent_log_dropped_total", 0) > 0,
       f"the bounded queue dropped and counted ({m.get('modelplane_agent_log_dropped_total')} dropped)")
    rcv.delay = 0.0

    # the sink down: inference goes on, failures counted
    rcv.stop()
    time.sleep(2.5)  # the slow sends in flight end
    before = metrics(port)
    down = timed(20)
    ok(down is not None and statistics.median(down) < statistics.median(base) * 2 + 0.02,
       "with the sink down inference answers at the same speed")
    ok(wait_for(lambda: metrics(port)["modelplane_agent_log_failed_total"] >
                before["modelplane_agent_log_failed_total"], 10),
       "undeliverable events are counted as failed")
    ok(stop(p) == 0, "the logging agent exits 0 on SIGTERM")

    # the blob store: json and csv records
    for fmt in ("json", "csv"):
        d = os.path.join(work, f"store-{fmt}")
        os.makedirs(d)
        p, port = agent(bin_, work, f"agent-store-{fmt}", counter_port,
                        ["--log-url", f"file://{d}", "--log-store-format", fmt,
                         "--log-store-path", "logs", "--inference-service", "iris",
                         "--namespace", "default", "--component", "predictor",
                         "--source-uri", "http://src/"])
        if not ok(port is not None, f"the agent starts with --log-store-format {fmt}"):
            continue
        st, resp = post(port, "/v2/models/iris/infer", body, {"Ce-Id": f"s-{fmt}"})
        base_path = os.path.join(d, "default", "iris", "predictor", "logs", f"s-{fmt}")
        files = (base_path + f"-request.{fmt}", base_path + f"-response.{fmt}")
        ok(wait_for(lambda: all(os.path.exists(f) for f in files), 10),
           f"{fmt}: <ns>/<isvc>/<component>/<store-path>/<id>-request|response.{fmt} written")
        recs = []
        for f in files:
            if not os.path.exists(f):
                continue
            with open(f) as fh:
                if fmt == "json":
                    recs.append(json.load(fh))
                else:
                    rows = list(csv.DictReader(fh))
                    recs.append(rows[0] if len(rows) == 1 else {})
        good = len(recs) == 2 and all(r.get("id") == f"s-{fmt}" and
                                      r.get("inferenceService") == "iris" and
                                      r.get("namespace") == "default" and
                                      r.get("component") == "predictor" and
                                      r.get("sourceUri") == "http://src/" for r in recs)
        good = good and recs[0]["reqType"].endswith(".request") and \
            recs[1]["reqType"].endswith(".response") and \
            json.loads(base64.b64decode(recs[0]["bytes"])) == body and \
            json.loads(base64.b64decode(recs[1]["bytes"])) == json.loads(resp)
        ok(good, f"{fmt}: KServe's record fields, bodies base64 as KServe's marshaller")
        stop(p)

    # --log-mode response, and a chunked request: its event carries the body without the framing
    rcv = Receiver()
    p, port = agent(bin_, work, "agent-mode", counter_port,
                    ["--log-url", f"http://127.0.0.1:{rcv.port}/", "--log-mode", "response"])
    if ok(port is not None, "the agent starts with --log-mode response"):
        post(port, "/v2/models/iris/infer", body, {"Ce-Id": "only-response"})
        wait_for(lambda: rcv.by_id("only-response"), 10)
        time.sleep(0.3)
        ok([e["type"] for e in rcv.by_id("only-response")] ==
           ["org.kubeflow.serving.inference.response"], "--log-mode response logs responses only")
        stop(p)
    p, port = agent(bin_, work, "agent-chunked", counter_port,
                    ["--log-url", f"http://127.0.0.1:{rcv.port}/", "--log-mode", "request"])
    if ok(port is not None, "the agent starts with --log-mode request"):
        raw = json.dumps(body).encode()
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.request("POST", "/v2/models/iris/infer", body=iter([raw[:10], raw[10:]]),
                  headers={"Content-Type": "application/json", "Ce-Id": "chunked"},
                  encode_chunked=True)
        r = c.getresponse()
        r.read()
        c.close()
        wait_for(lambda: rcv.by_id("chunked"), 10)
        time.sleep(0.3)
        evs = rcv.by_id("chunked")
        ok(r.status == 200 and len(evs) == 1 and evs[0].data == body and
           evs[0]["type"] == "org.kubeflow.serving.inference.request",
           "--log-mode request: a chunked request's event holds its body without the framing")
        stop(p)
    rcv.stop()

    # an https sink: its CA given by --logger-ca-cert-file, or --logger-tls-skip-verify
    if shutil.which("openssl"):
        crt, key = os.path.join(work, "sink.crt"), os.path.join(work, "sink.key")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                        "-out", crt, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
                        "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
        tls = Receiver(tls=(crt, key))
        for name, extra, want in (("ca", ["--logger-ca-cert-file", crt], True),
                                  ("skip-verify", ["--logger-tls-skip-verify", "true"], True),
                                  ("unverified", [], False)):
            p, port = agent(bin_, work, f"agent-tls-{name}", counter_port,
                            ["--log-url", f"https://127.0.0.1:{tls.port}/", *extra])
            if port:
                post(port, "/v2/models/iris/infer", body, {"Ce-Id": f"tls-{name}"})
                got = wait_for(lambda: len(tls.by_id(f"tls-{name}")) == 2, 5 if want else 2)
                fails = metrics(port)["modelplane_agent_log_failed_total"]
                ok(got == want and (want or wait_for(
                    lambda: metrics(port)["modelplane_agent_log_failed_total"] == 2, 10)),
                   f"https sink, {name}: " + ("delivered" if want else
                                               f"not delivered, counted as failed ({fails})"))
            stop(p)
        tls.stop()
    else:
        note("SKIP https sink steps: no openssl to make a certificate")

    # what KServe has and this agent not (parquet, for a directory or a bucket), and a scheme
    # neither has: named, and serving goes on without logging (tests/agent/logger_store.py
    # uploads to s3://, gs:// and abfs://)
    for name, word, extra in (("parquet", "parquet", ["--log-url", f"file://{work}",
                                                      "--log-store-format", "parquet"]),
                              ("parquet-s3", "parquet", ["--log-url", "s3://bucket/logs",
                                                         "--log-store-format", "parquet"]),
                              ("ftp", "ftp://", ["--log-url", "ftp://host/logs"])):
        p, port = agent(bin_, work, f"agent-{name}", counter_port, extra)
        st = post(port, "/v2/models/iris/infer", body)[0] if port else None
        stop(p)
        with open(os.path.join(work, f"agent-{name}.log")) as f:
            log = f.read()
        ok(st == 200 and "request logging is OFF" in log and word in log,
           f"{name}: not supported, named in an error, and inference still served")
    rc = subprocess.run([bin_, "agent", "--port", "0", "--log-url", "http://x/", "--log-mode",
                         "metadata", "--api-watch", "off"], capture_output=True, text=True,
                        timeout=20)
    ok(rc.returncode != 0 and "--log-mode" in rc.stderr,
       "an invalid --log-mode fails the start, as KServe's agent")


class V1Server:
    """KServe's V1 protocol, which MLServer does not speak: each instance's prediction is the sum
    of its numbers; records the sizes of the requests it gets."""

    def __init__(self):
        self.sizes = []
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                inst = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["instances"]
                outer.sizes.append(len(inst))
                out = json.dumps({"predictions": [sum(i) for i in inst]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        self.port = self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()


def v1_steps(bin_, work):
    v1 = V1Server()
    p, port = agent(bin_, work, "agent-v1", v1.port,
                    ["--enable-batcher", "--max-batchsize", "6", "--max-latency", "500"])
    if not ok(port is not None, "the agent starts with --enable-batcher (V1 server)"):
        return
    reqs = [{"instances": [[1, 1]]}, {"instances": [[2, 2], [3, 3]]},
            {"instances": [[4, 4], [5, 5], [6, 6]]}]
    out = [None] * 3

    def one(i):
        out[i] = post(port, "/v1/models/m:predict", reqs[i])

    ts = [threading.Thread(target=one, args=(i,)) for i in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    got = [json.loads(b) for _, b in out]
    ok(all(s == 200 for s, _ in out) and
       [g["predictions"] for g in got] == [[2], [4, 6], [8, 10, 12]] and
       all(g["message"] == "" and len(g["batchId"]) == 36 for g in got) and
       len({g["batchId"] for g in got}) == 1,
       "V1: 3 concurrent :predict requests answered as KServe's batcher answers (predictions, "
       "one batchId, message)")
    ok(v1.sizes == [6], f"V1: the server saw one request of 6 instances ({v1.sizes})")
    stop(p)
    v1.srv.shutdown()


def batcher_steps(bin_, work, counter, direct):
    p, port = agent(bin_, work, "agent-batcher", counter.port,
                    ["--enable-batcher", "--max-batchsize", "8", "--max-latency", "500"])
    if not ok(port is not None, "the agent starts with --enable-batcher"):
        return
    counter.take()

    def concurrent(reqs, path="/v2/models/iris/infer"):
        out = [None] * len(reqs)

        def one(i):
            out[i] = post(port, path, reqs[i])

        ts = [threading.Thread(target=one, args=(i,)) for i in range(len(reqs))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return out

    rows = [[float(i) - 4, 0.1 * i, -0.3, 0.2 * (i % 3)] for i in range(8)]
    res = concurrent([v2([r]) for r in rows])
    want = direct(rows)
    got = [json.loads(b)["outputs"][0] if s == 200 else None for s, b in res]
    ok(all(g is not None and g["data"] == [w] and g["shape"][0] == 1 for g, w in zip(got, want)),
       "8 concurrent V2 requests each get their own row's answer")
    seen = counter.take()
    ok(len(seen) < 8 and sum(r for _, r in seen) == 8,
       f"MLServer saw fewer, larger requests: {[r for _, r in seen]} rows")

    # two callers with 2 and 3 rows, below the size: flushed at the latency, split in order
    t0 = time.monotonic()
    res = concurrent([v2(rows[:2]), v2(rows[2:5])])
    dt = time.monotonic() - t0
    ok(res[0][0] == 200 and res[1][0] == 200 and
       json.loads(res[0][1])["outputs"][0]["data"] == want[:2] and
       json.loads(res[1][1])["outputs"][0]["data"] == want[2:5] and
       json.loads(res[1][1])["outputs"][0]["shape"][0] == 3,
       "a 2-row and a 3-row request: each gets its rows, in order")
    seen = counter.take()
    ok(len(seen) == 1 and seen[0][1] == 5 and 0.4 < dt < 5,
       f"below --max-batchsize the batch goes at --max-latency ({dt:.2f}s, {seen})")

    # a model MLServer does not have: its failure to every caller
    res = concurrent([v2([rows[0]]), v2([rows[1]]), v2([rows[2]])], "/v2/models/nosuch/infer")
    ok(all(s == 404 for s, _ in res) and len(set(b for _, b in res)) == 1,
       f"MLServer's failure goes to every caller of the batch ({[s for s, _ in res]})")
    ok(len(counter.take()) == 1, "... in one upstream request")

    # malformed V2: passed through unbatched, MLServer judges it
    st, _ = post(port, "/v2/models/iris/infer", b'{"inputs": [')
    seen = counter.take()
    ok(st != 200 and len(seen) == 1 and seen[0][1] is None,
       f"a malformed V2 body goes to MLServer unbatched ({st})")
    # malformed V1: refused as KServe's batcher does
    st, b = post(port, "/v1/models/iris:predict", b'{"instances": []}')
    ok(st == 400 and not counter.take(), "a V1 body without instances is refused (400), as KServe")
    m = metrics(port)
    ok(m["modelplane_agent_batches_total"] >= 3 and m["modelplane_agent_batched_requests_total"] >= 13,
       f"batch counters ({m['modelplane_agent_batches_total']} batches, "
       f"{m['modelplane_agent_batched_requests_total']} requests)")
    ok(stop(p) == 0, "the batching agent exits 0 on SIGTERM")


def main():
    bin_ = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="mp-agent-logger-")
    venv_bin = os.path.dirname(sys.executable)
    try:
        model_dir = os.path.join(work, "models")
        os.makedirs(model_dir)
        train(model_dir)
        ml_port, grpc_port, metrics_port = free_port(), free_port(), free_port()
        env = dict(os.environ, MLSERVER_HOST="127.0.0.1", MLSERVER_HTTP_PORT=str(ml_port),
                   MLSERVER_GRPC_PORT=str(grpc_port), MLSERVER_METRICS_PORT=str(metrics_port),
                   MLSERVER_PARALLEL_WORKERS="0", MLSERVER_METRICS_ENDPOINT="")
        start([os.path.join(venv_bin, "mlserver"), "start", model_dir],
              os.path.join(work, "mlserver.log"), env=env)
        up = wait_for(lambda: urllib.request.urlopen(
            f"http://127.0.0.1:{ml_port}/v2/models/iris/ready", timeout=2).status == 200, 120)
        if not ok(up, "MLServer serves the model trained here"):
            return 1
        counter = Counter(ml_port)

        def direct(rows):
            st, b = post(ml_port, "/v2/models/iris/infer", v2(rows))
            return json.loads(b)["outputs"][0]["data"]

        logger_steps(bin_, work, counter.port, direct)
        batcher_steps(bin_, work, counter, direct)
        v1_steps(bin_, work)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        if failed[0]:
            for f in sorted(os.listdir(work)):
                if f.endswith(".log"):
                    with open(os.path.join(work, f)) as fh:
                        note(f"--- {f}: " + fh.read()[-1500:].replace("\n", "\n# "))
        shutil.rmtree(work, ignore_errors=True)
    print(f"1..{step_no[0]}", flush=True)
    return 1 if failed[0] else 0


if __name__ == "__main__":
    sys.exit(main())
