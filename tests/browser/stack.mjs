// The real stack of the browser tests: `modelplane registry` on SQLite, `modelplane catalog`,
// the test control plane (scripts/testenv, from MODELPLANE_TESTENV_DIR) with KServe's CRDs and
// `modelplane controller`, and `modelplane ui` in front of them, every server on a free
// loopback port. Everything started here is stopped by stop().
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, openSync, readFileSync, writeFileSync, rmSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devServer } from './devserver.mjs';

export const ROOT = process.env.MODELPLANE_SOURCE_ROOT;
export const BIN = process.env.MODELPLANE_BIN;
export const TESTENV = process.env.MODELPLANE_TESTENV_DIR;

/** Whether this modelplane has the `ui` subcommand (the real BFF). */
export function hasUi() {
  try {
    execFileSync(BIN, ['ui', '--help'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The full stack needs `modelplane ui` and the test control plane; else only the smoke tier runs. */
export const FULL = Boolean(TESTENV) && hasUi();

// The registry controller's settings, as upstream's deployment sets them
export const MRLINK_ENV = {
  INFERENCE_SERVICE_CONTROLLER: 'managed',
  NAMESPACE_LABEL: 'modelregistry.kubeflow.org/namespace',
  NAME_LABEL: 'modelregistry.kubeflow.org/name',
  URL_ANNOTATION: 'modelregistry.kubeflow.org/url',
  INFERENCE_SERVICE_ID_LABEL: 'modelregistry.kubeflow.org/inference-service-id',
  MODEL_VERSION_ID_LABEL: 'modelregistry.kubeflow.org/model-version-id',
  REGISTERED_MODEL_ID_LABEL: 'modelregistry.kubeflow.org/registered-model-id',
  FINALIZER: 'modelregistry.kubeflow.org/finalizer',
  SERVICE_ANNOTATION: 'routing.kubeflow.org/external-address-rest',
  REGISTRIES_NAMESPACE: 'modelplane-system',
  SKIP_TLS_VERIFY: 'false',
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls fn until it returns a truthy value; throws what after limitMs (a hang guard only). */
export async function waitFor(what, fn, limitMs = 120_000) {
  const end = Date.now() + limitMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
    await sleep(250);
  }
}

export function kubectl(args, input) {
  return execFileSync(join(ROOT, 'scripts/testenv'), ['kubectl', TESTENV, ...args], { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

export const apply = (obj) => kubectl(['apply', '-f', '-'], JSON.stringify(obj));

export class Stack {
  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'mp-browser-'));
    this.procs = [];
    this.namespaces = [];
    this.suffix = String(process.pid);
  }

  /** Starts BIN args... (env added to ours), logs in dir/name.log; resolves with the port of its "listening on" line. */
  async serve(name, args, env = {}) {
    const log = join(this.dir, `${name}.log`);
    const out = openSync(log, 'a');
    const p = spawn(BIN, args, { stdio: ['ignore', 'pipe', out], env: { ...process.env, ...env } });
    this.procs.push(p);
    let text = '';
    p.stdout.on('data', (b) => {
      text += b.toString();
      writeFileSync(log + '.stdout', text);
    });
    return waitFor(`${name} to listen (log ${log})`, () => {
      if (p.exitCode !== null) throw new Error(`${name} exited ${p.exitCode}: ${readFileSync(log, 'utf8').slice(-2000)}`);
      const m = /listening on \S*:(\d+)/.exec(text);
      return m ? Number(m[1]) : null;
    }, 60_000);
  }

  /** tests/catalog/fake-hf-hub.py on a free port; resolves with it. */
  async hub() {
    const p = spawn('python3', [join(ROOT, 'tests/catalog/fake-hf-hub.py'), join(ROOT, 'tests/fixtures/catalog/hf')], { stdio: ['ignore', 'pipe', 'ignore'] });
    this.procs.push(p);
    let text = '';
    p.stdout.on('data', (b) => {
      text += b.toString();
    });
    return waitFor('the hub stand-in to listen', () => {
      if (p.exitCode !== null) throw new Error(`fake-hf-hub.py exited ${p.exitCode}`);
      const m = /^port (\d+)/m.exec(text);
      return m ? Number(m[1]) : null;
    }, 60_000);
  }

  run(name, args, env = {}) {
    const log = join(this.dir, `${name}.log`);
    const p = spawn(BIN, args, { stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')], env: { ...process.env, ...env } });
    this.procs.push(p);
    return p;
  }

  log(name) {
    try {
      return readFileSync(join(this.dir, `${name}.log`), 'utf8');
    } catch {
      return '';
    }
  }

  /** opts.catalogSources: the catalog's sources file (default: tests/browser/fixtures' copy). */
  async start(opts = {}) {
    // registry and catalog
    this.registryPort = await this.serve('registry', ['registry', '-n', '127.0.0.1', '-p', '0', '--database', join(this.dir, 'registry.db')]);
    this.registryUrl = `http://127.0.0.1:${this.registryPort}`;
    let sources = opts.catalogSources;
    if (!sources) {
      const cat = join(this.dir, 'catalog');
      mkdirSync(cat);
      for (const f of ['sources.yaml', 'demo-models.yaml', 'paging-models.yaml', 'demo-mcp-servers.yaml']) copyFileSync(join(ROOT, 'tests/browser/fixtures', f), join(cat, f));
      sources = join(cat, 'sources.yaml');
    }
    // the catalog's hf previews go to the local stand-in for the Hugging Face hub (its wire
    // format; the catalog's hf tests' server), never to the internet
    this.hubPort = await this.hub();
    this.catalogPort = await this.serve('catalog', ['catalog', '--listen', '127.0.0.1:0', '--catalogs-path', sources], { HF_ENDPOINT: `http://127.0.0.1:${this.hubPort}` });
    this.catalogUrl = `http://127.0.0.1:${this.catalogPort}`;

    if (!FULL) {
      // smoke tier: ui/dist behind the development server, registry and catalog real
      this.dev = devServer({ dist: join(ROOT, 'ui/dist'), registryUrl: this.registryUrl, catalogUrl: this.catalogUrl });
      await new Promise((r) => this.dev.listen(0, '127.0.0.1', r));
      this.url = `http://127.0.0.1:${this.dev.address().port}`;
      return this;
    }

    // Kubernetes: CRDs, two namespaces, alice may read team A only
    execFileSync(join(ROOT, 'scripts/testenv'), ['install-crds', TESTENV, join(ROOT, 'deploy/crds')], { stdio: 'ignore' });
    this.nsA = `mp-ui-a-${this.suffix}`;
    this.nsB = `mp-ui-b-${this.suffix}`;
    for (const ns of [this.nsA, this.nsB]) {
      apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      this.namespaces.push(ns);
    }
    apply({
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'console-reader', namespace: this.nsA },
      rules: [
        { apiGroups: ['serving.kserve.io'], resources: ['inferenceservices', 'trainedmodels'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['events'], verbs: ['get', 'list', 'watch'] },
      ],
    });
    apply({
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'console-reader-alice', namespace: this.nsA },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'console-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    });
    // The registry and the catalog: users who may get their Services (alice; not mallory)
    apply({
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'registry-user', namespace: this.nsA },
      rules: [{ apiGroups: [''], resources: ['services'], verbs: ['get'], resourceNames: ['model-registry-service', 'model-catalog'] }],
    });
    apply({
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'registry-user-alice', namespace: this.nsA },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'registry-user' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    });
    this.kubeconfig = join(TESTENV, 'kubeconfig');
    this.accessArgs = ['--registry-service', `${this.nsA}/model-registry-service`, '--catalog-service', `${this.nsA}/model-catalog`];

    this.uiPort = await this.serve('ui', [
      'ui', '--listen', '127.0.0.1:0', '--static-dir', join(ROOT, 'ui/dist'),
      '--registry-url', this.registryUrl, '--catalog-url', this.catalogUrl,
      '--kubeconfig', this.kubeconfig, '--trusted-proxy', '127.0.0.1/32', ...this.accessArgs,
      // discovered registries at their external-address-rest (no cluster IP routes here)
      '--registry-external-address',
    ]);
    this.url = `http://127.0.0.1:${this.uiPort}`;
    return this;
  }

  /** The controller for team A's namespace, with the shipped RBAC (its own kubeconfig). */
  startController() {
    const kc = execFileSync(join(ROOT, 'scripts/testenv'), ['kubeconfig', TESTENV, 'modelplane-system/modelplane-controller'], { encoding: 'utf8' }).trim();
    kubectl(['apply', '-f', join(ROOT, 'deploy/controller/namespace.yaml'), '-f', join(ROOT, 'deploy/controller/serviceaccount.yaml'),
      '-f', join(ROOT, 'deploy/controller/clusterrole.yaml'), '-f', join(ROOT, 'deploy/controller/clusterrolebinding.yaml'),
      '-f', join(ROOT, 'deploy/controller/role.yaml')]);
    return this.run('controller', ['controller', '--kubeconfig', kc, '--namespace', this.nsA, '--enable-registry-controller',
      '--health-probe-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0'], MRLINK_ENV);
  }

  /** The controller, started once for all the tests of a file that need it. */
  ensureController() {
    this.controller ??= this.startController();
    return this.controller;
  }

  async stop() {
    if (this.dev) await new Promise((r) => this.dev.close(r));
    for (const p of this.procs) if (p.exitCode === null) p.kill('SIGTERM');
    await Promise.all(this.procs.map((p) => (p.exitCode === null ? new Promise((r) => p.once('exit', r)) : null)));
    for (const ns of this.namespaces) {
      try {
        kubectl(['delete', 'namespace', ns, '--wait=false']);
      } catch {
        /* the control plane may be gone already */
      }
    }
    if (!process.env.MODELPLANE_BROWSER_KEEP) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The registry's own REST API (for seeding; the console under test goes through the BFF). */
export async function registry(stack, method, path, body) {
  const r = await fetch(`${stack.registryUrl}/api/model_registry/v1alpha3${path}`, {
    method, headers: { 'Content-Type': 'application/json' }, body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`registry ${method} ${path}: ${r.status} ${text}`);
  return JSON.parse(text);
}
