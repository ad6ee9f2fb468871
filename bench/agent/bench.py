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
import time

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--build", default=os.path.join(here, "..", "..", "build"))
ap.add_argument("--models", type=int, default=1000)
ap.add_argument("--models-prop", type=int, default=100)
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


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class ConfigDir:
    def __init__(self, path):
        self.path, self.n = path, 0
        os.symlink("..data/models.json", os.path.join(path, "models.json"))

    def write(self, entries):
        self.n += 1
        ts = os.path.join(self.path, f"..ts_{self.n:06d}")
        os.mkdir(ts)
        with open(os.path.join(ts, "models.json"), "w") as f:
            json.dump([{"modelName": n, "modelSpec": {"storageUri": u, "framework": "sklearn",
                                                      "memory": "1Mi"}} for n, u in entries], f)
        link = os.path.join(self.path, "..data")
        old = os.path.realpath(link) if os.path.islink(link) else None
        os.symlink(os.path.basename(ts), link + "_tmp")
        os.rename(link + "_tmp", link)
        if old:
            shutil.rmtree(old)
        return time.monotonic()


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
        print(f"agent RSS idle (puller on, 0 models): {rss_kib(p.pid) / 1024:.1f} MiB")

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
        print(f"agent RSS with {args.models} models tracked: {rss_kib(p.pid) / 1024:.1f} MiB")
        t0 = cfg.write([])
        wait(lambda: not any(n in loads for n, _ in entries), timeout=900)
        print(f"removing all {args.models}: {time.monotonic() - t0:.1f} s; "
              f"RSS after: {rss_kib(p.pid) / 1024:.1f} MiB")
        print(f"machine load average: {os.getloadavg()[0]:.2f} (2 cores shared)")
        p.terminate()
        p.wait(timeout=30)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
