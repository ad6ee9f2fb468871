// bench/ui/first-paint.mjs — the console at the scale of issue 26: 1,000 registered models,
// 10,000 catalog models and 100 InferenceServices, on the real stack of the browser tests
// (tests/browser/stack.mjs: `modelplane registry` on SQLite, `modelplane catalog`, a test
// control plane, `modelplane ui`). For each of the three list screens it measures, in Debian's
// chromium, the time from navigation to the first row of the list in the page (a
// MutationObserver installed before the page's own scripts records performance.now() when the
// first row appears), over RUNS cold loads (a new browser context each); and the p50/p99 of
// the list call behind that screen through the BFF, with the same call made straight at the
// registry or the catalog beside it (interleaved request by request; keep-alive); and the bytes
// of the API answers a screen loaded (one page of a list, never the whole list). Prints the
// figures and the load average; asserts nothing about time.
//
//   scripts/ui-build && scripts/with-testenv env MODELPLANE_SOURCE_ROOT=$PWD \
//     MODELPLANE_BIN=build/src/cmd/modelplane node bench/ui/first-paint.mjs
//
// Environment: BENCH_MODELS (1000), BENCH_CATALOG (10000), BENCH_ISVCS (100), BENCH_RUNS (5),
// BENCH_CALLS (500 list calls per target).
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import { loadavg, cpus } from 'node:os';
import { join } from 'node:path';
import { Stack, FULL, ROOT, apply, registry } from '../../tests/browser/stack.mjs';
import { launch, userPage } from '../../tests/browser/browser.mjs';

const num = (name, dflt) => {
  const v = process.env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}=${v}: not a positive integer`);
  return n;
};
const MODELS = num('BENCH_MODELS', 1000);
const CATALOG = num('BENCH_CATALOG', 10000);
const ISVCS = num('BENCH_ISVCS', 100);
const RUNS = num('BENCH_RUNS', 5);
const CALLS = num('BENCH_CALLS', 500);

if (!FULL) {
  console.error('first-paint: needs `modelplane ui` and a test control plane (run under scripts/with-testenv)');
  process.exit(2);
}
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One GET on a kept-alive connection; resolves with the seconds it took; rejects unless 200. */
function timedGet(port, path, headers) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`GET ${path}: ${res.statusCode}`));
        else resolve(Number(process.hrtime.bigint() - t0) / 1e6);
      });
    });
    req.on('error', reject);
  });
}

const pct = (v, p) => {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.round((p / 100) * (s.length - 1)))];
};

const stack = new Stack();
try {
  // the catalog: BENCH_CATALOG models written by bench/catalog/gen.py (10,000 a file)
  const catDir = join(stack.dir, 'bench-catalog');
  mkdirSync(catDir);
  execFileSync('python3', [join(ROOT, 'bench/catalog/gen.py'), catDir, String(CATALOG)]);
  await stack.start({ catalogSources: join(catDir, 'sources.yaml') });

  let t0 = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < MODELS) {
      const i = next++;
      await registry(stack, 'POST', '/registered_models', { name: `scale-model-${String(i).padStart(5, '0')}`, description: `model ${i} of ${MODELS}`, owner: 'bench' });
    }
  }));
  console.log(`seeded ${MODELS} registered models in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  t0 = Date.now();
  apply({
    apiVersion: 'v1', kind: 'List',
    items: Array.from({ length: ISVCS }, (_, i) => ({
      apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService',
      metadata: { name: `isvc-${String(i).padStart(3, '0')}`, namespace: stack.nsA },
      spec: { predictor: { minReplicas: 1, sklearn: { protocolVersion: 'v2', resources: { limits: { memory: '4Gi' }, requests: { memory: '4Gi' } } } } },
    })),
  });
  console.log(`created ${ISVCS} InferenceServices in ${((Date.now() - t0) / 1000).toFixed(1)} s; catalog of ${CATALOG} models`);

  const screens = [
    { name: 'registered models', hash: '#/models', row: '[data-testid=models-table] tbody tr' },
    { name: 'catalog', hash: '#/catalog', row: '[data-testid=catalog-models-table] tbody tr, [data-testid=catalog-card]' },
    { name: `deployments (${stack.nsA})`, hash: `#/deployments/${stack.nsA}`, row: '[data-testid=isvc-table] tbody tr' },
  ];
  const browser = await launch();
  console.log(`first row of each list screen, ${RUNS} cold loads each, ms from navigation; load average ${load()} on ${cpus().length} CPUs`);
  for (const s of screens) {
    const times = [];
    const bytes = [];
    for (let r = 0; r < RUNS; r++) {
      const page = await userPage(browser, 'alice');
      await page.addInitScript((sel) => {
        const seen = () => {
          if (window.__firstRow === undefined && document.querySelector(sel)) window.__firstRow = performance.now();
        };
        new window.MutationObserver(seen).observe(document, { childList: true, subtree: true });
      }, s.row);
      let apiBytes = 0;
      page.on('response', async (res) => {
        if (res.url().includes('/api/v1/')) apiBytes += (await res.body().catch(() => Buffer.alloc(0))).length;
      });
      await page.goto(`${stack.url}/${s.hash}`);
      await page.locator(s.row).first().waitFor({ timeout: 120_000 });
      times.push(await page.evaluate(() => window.__firstRow));
      bytes.push(apiBytes);
      if (page.problems.length) throw new Error(`${s.name}: ${page.problems.join('; ')}`);
      await page.context().close();
    }
    console.log(`  ${s.name.padEnd(34)} median ${pct(times, 50).toFixed(0)} (runs ${times.map((t) => t.toFixed(0)).join(', ')}); ` +
      `API answers until then ${pct(bytes, 50)} bytes`);
  }
  await browser.close();

  const user = { 'kubeflow-userid': 'alice' };
  const calls = [
    ['registered_models pageSize=20', [stack.uiPort, '/api/v1/model_registry/modelplane/registered_models?pageSize=20&orderBy=LAST_UPDATE_TIME&sortOrder=DESC'],
      [stack.registryPort, '/api/model_registry/v1alpha3/registered_models?pageSize=20&orderBy=LAST_UPDATE_TIME&sortOrder=DESC']],
    ['catalog models pageSize=20', [stack.uiPort, '/api/v1/model_catalog/models?pageSize=20'],
      [stack.catalogPort, '/api/model_catalog/v1alpha1/models?pageSize=20']],
    [`InferenceServices (${ISVCS}) pageSize=100`, [stack.uiPort, `/api/v1/namespaces/${stack.nsA}/inferenceservices?pageSize=100`], null],
  ];
  console.log(`list calls, ${CALLS} per target, interleaved, p50 / p99 ms; load average ${load()}`);
  for (const [name, viaUi, direct] of calls) {
    const a = [];
    const b = [];
    for (let i = 0; i < 20; i++) { // warm-up: connections, pools, caches
      await timedGet(...viaUi, user);
      if (direct) await timedGet(...direct, {});
    }
    for (let i = 0; i < CALLS; i++) {
      a.push(await timedGet(...viaUi, user));
      if (direct) b.push(await timedGet(...direct, {}));
    }
    const line = `  ${name.padEnd(38)} ui ${pct(a, 50).toFixed(2)} / ${pct(a, 99).toFixed(2)}`;
    console.log(direct ? `${line}   direct ${pct(b, 50).toFixed(2)} / ${pct(b, 99).toFixed(2)}   p99 ratio ${(pct(a, 99) / pct(b, 99)).toFixed(2)}` : line);
  }
  console.log(`load average at the end ${load()}`);
} finally {
  agent.destroy();
  await stack.stop();
}
