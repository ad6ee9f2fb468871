#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/agent: figures of `modelplane agent` (printed, never asserted).

* RSS idle: the agent with --enable-puller and an empty models.json.
* RSS with N models tracked (default 1,000), and the time until all N are loaded.
* Propagation, file path: models.json rewritten kubelet-style (..data swap) adding one model at a
  time; time from the swap to the agent's load call, p50/p99 over --models-prop (default 100).

The model server here is a minimal loopback repository endpoint in this script that records when
each load call arrives and answers 200 at once: the figures are the agent's own (inotify, parse,
plan, local copy, load call), not a model server's load time. Models are local directories
(file:// URIs), so no network transfer is measured either.

Usage: bench/agent/bench.py [--build DIR] [--models N] [--models-prop N]
"""
import argparse
import http.server
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "agent"))
from agentlib import (ConfigDir, controller_kubeconfig, free_port, kubectl, ready_isvc,  # noqa: E402
                      sa_kubeconfig, trained_model)
import ssl  # noqa: E402
import urllib.request  # noqa: E402
ap = argparse.ArgumentParser()
ap.add_argument("--build", default=os.path.join(here, "..", "..", "build"))
ap.add_argument("--models", type=int, default=1000)
ap.add_argument("--models-prop", type=int, default=100)
ap.add_argument("--kube", action="store_true",
                help="also the API path (TrainedModel create -> load call): run under "
                     "MODELPLANE_TESTENV_ARGS='--crds deploy/crds' scripts/with-testenv")
args = ap.parse_args()
BIN = os.path.join(args.build, "src", "cmd", "modelplane")

loads = {}
lock = threading.Lock()


class Repo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(n)
        body = b"{}"
        parts = self.path.strip("/").split("/")
        if self.path == "/v2/repository/index":
            with lock:
                body = json.dumps([{"name": k, "state": "READY"} for k in loads]).encode()
        elif len(parts) == 5 and parts[4] == "load":
            with lock:
                loads.setdefault(parts[3], time.monotonic())
        elif len(parts) == 5 and parts[4] == "unload":
            with lock:
                loads.pop(parts[3], None)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def rss_kib(pid, field="VmRSS"):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return -1


def rss(pid):
    return (f"{rss_kib(pid) / 1024:.1f} MiB (anonymous {rss_kib(pid, 'RssAnon') / 1024:.1f} MiB, "
            f"file-backed {rss_kib(pid, 'RssFile') / 1024:.1f} MiB: the shared libraries of the one binary)")


def wait(pred, timeout=600):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return False


def main():
    work = tempfile.mkdtemp(prefix="mp-agent-bench-")
    try:
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Repo)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        src = os.path.join(work, "src-model")
        os.makedirs(src)
        with open(os.path.join(src, "model.bin"), "wb") as f:
            f.write(b"x" * 1024)
        cfg_dir, model_dir = os.path.join(work, "cfg"), os.path.join(work, "models")
        os.makedirs(cfg_dir)
        os.makedirs(model_dir)
        cfg = ConfigDir(cfg_dir)
        cfg.write([])
        p = subprocess.Popen([BIN, "agent", "--enable-puller", "--config-dir", cfg_dir, "--model-dir",
                              model_dir, "--port", str(free_port()), "--listen-address", "127.0.0.1",
                              "--model-server-url", f"http://127.0.0.1:{srv.server_address[1]}",
                              "--api-watch", "off", "--log-level", "warn"],
                             stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "agent.log"), "w"))
        time.sleep(2)
        print(f"agent RSS idle (puller on, 0 models): {rss(p.pid)}")

        # propagation over the file path, one model at a time
        lat = []
        entries = []
        for i in range(args.models_prop):
            name = f"p{i:05d}"
            entries.append((name, "file://" + src))
            t0 = cfg.write(entries)
            wait(lambda: name in loads, timeout=60)
            lat.append((loads.get(name, float("inf")) - t0) * 1000)
        lat.sort()
        print(f"propagation, file path (..data swap -> load call), {len(lat)} models: "
              f"p50 {statistics.median(lat):.1f} ms, p99 {lat[int(len(lat) * 0.99) - 1]:.1f} ms, "
              f"max {lat[-1]:.1f} ms")

        # N models at once
        entries = [(f"m{i:05d}", "file://" + src) for i in range(args.models)]
        t0 = cfg.write(entries)
        ok = wait(lambda: all(n in loads for n, _ in entries), timeout=900)
        t1 = time.monotonic()
        print(f"{args.models} models in one models.json: all load calls after {t1 - t0:.1f} s"
              f"{'' if ok else ' (TIMED OUT)'}")
        time.sleep(1)
        print(f"agent RSS with {args.models} models tracked: {rss(p.pid)}")
        t0 = cfg.write([])
        wait(lambda: not any(n in loads for n, _ in entries), timeout=900)
        print(f"removing all {args.models}: {time.monotonic() - t0:.1f} s; "
              f"RSS after: {rss(p.pid)}")
        p.terminate()
        p.wait(timeout=30)
        if args.kube:
            kube_propagation(work, src, srv.server_address[1])
        print(f"machine load average: {os.getloadavg()[0]:.2f} (2 cores shared)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def kube_propagation(work, src, repo_port):
    """TrainedModel create (API answer) -> the agent's load call, through the real controller
    (models.json in the ConfigMap) and the agent's ConfigMap watch; one model at a time."""
    ns = f"agent-bench-{os.getpid()}"
    kubectl("create", "namespace", ns)
    kubectl("-n", ns, "create", "serviceaccount", "bench")
    kubectl("create", "clusterrolebinding", ns, "--clusterrole=cluster-admin", f"--serviceaccount={ns}:bench")
    kc = sa_kubeconfig(f"{ns}/bench")
    text = open(kc).read()
    server = text.split("server: ")[1].split()[0]
    ca = text.split("certificate-authority: ")[1].split()[0]
    token = text.split("token: ")[1].split()[0]
    ctx = ssl.create_default_context(cafile=ca)
    ctrl = subprocess.Popen([BIN, "controller", "--kubeconfig", controller_kubeconfig(), "--namespace", ns,
                             "--health-probe-bind-address", "127.0.0.1:0", "--metrics-bind-address",
                             "127.0.0.1:0", "--log-level", "warn"],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "controller.log"), "w"))
    ready_isvc(ns, "bench", memory="64Gi")
    cfg_dir, model_dir = os.path.join(work, "cfg-kube"), os.path.join(work, "models-kube")
    os.makedirs(cfg_dir)
    os.makedirs(model_dir)
    agent = subprocess.Popen([BIN, "agent", "--enable-puller", "--config-dir", cfg_dir, "--model-dir",
                              model_dir, "--port", str(free_port()), "--listen-address", "127.0.0.1",
                              "--model-server-url", f"http://127.0.0.1:{repo_port}", "--api-watch", "on",
                              "--kubeconfig", kc, "--namespace", ns, "--inference-service", "bench",
                              "--log-level", "warn"],
                             stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "agent-kube.log"), "w"))
    try:
        time.sleep(2)
        lat = []
        url = f"{server}/apis/serving.kserve.io/v1alpha1/namespaces/{ns}/trainedmodels"
        for i in range(args.models_prop):
            name = f"k{i:05d}"
            req = urllib.request.Request(url, data=trained_model(ns, name, "bench", "file://" + src, "1Mi").encode(),
                                         method="POST", headers={"Authorization": f"Bearer {token}",
                                                                 "Content-Type": "application/json"})
            t0 = time.monotonic()
            urllib.request.urlopen(req, context=ctx, timeout=30).read()
            wait(lambda: name in loads, timeout=60)
            lat.append((loads.get(name, float("inf")) - t0) * 1000)
        lat.sort()
        print(f"propagation, API path (TrainedModel POST -> controller -> ConfigMap -> watch -> load call), "
              f"{len(lat)} models: p50 {statistics.median(lat):.1f} ms, p99 {lat[int(len(lat) * 0.99) - 1]:.1f} ms, "
              f"max {lat[-1]:.1f} ms")
    finally:
        agent.terminate()
        ctrl.terminate()
        agent.wait(timeout=30)
        ctrl.wait(timeout=30)


if __name__ == "__main__":
    main()
