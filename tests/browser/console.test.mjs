// Browser tests of the web console against the real stack (stack.mjs): Debian's chromium,
// playwright-core, axe-core. Screenshots of every screen go to the build directory.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FULL, Stack, apply, kubectl, registry, waitFor } from './stack.mjs';
import { launch, noA11yViolations, screenshot, userPage } from './browser.mjs';

let stack;
let browser;
const T = 60_000; // hang guard for one expectation, far above normal
// without `modelplane ui` or the test control plane, the registry and catalog flows run behind
// tests/browser/devserver.mjs (smoke tier) and the rest is skipped with this reason
const NEEDS_FULL = FULL ? false : 'needs `modelplane ui` and the test control plane (MODELPLANE_TESTENV_DIR)';
if (!FULL) console.log(`# smoke tier: ${NEEDS_FULL}`);

before(async () => {
  stack = await new Stack().start();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

function noProblems(page) {
  assert.deepEqual(page.problems, [], 'console errors or CSP violations in the page');
}

// Issue 26: "not a uri at all" was accepted; no object-storage fields; no owner filter.
test('the register form checks the URI first, builds one from object storage, and the owner filter finds it', async () => {
  const page = await userPage(browser, 'alice');
  const name = `browser-os-${process.pid}`;
  const owner = `olga-${process.pid}`;
  await page.goto(`${stack.url}/#/models`);
  await page.getByRole('heading', { name: 'Registered models', level: 1 }).waitFor({ timeout: T });
  await page.getByRole('button', { name: 'Register model' }).click();
  await page.getByLabel('Model name').fill(name);
  await page.getByLabel('Owner', { exact: true }).fill(owner);
  await page.getByLabel('Model artifact URI').fill('not a uri at all');
  await page.getByRole('button', { name: 'Register', exact: true }).click();
  const err = page.locator('.pf-v6-c-helper-text__item.pf-m-error');
  await err.waitFor({ timeout: T });
  assert.match(await err.innerText(), /no spaces/);
  const found = await registry(stack, 'GET', `/registered_model?name=${name}`).catch(() => null);
  assert.equal(found, null, 'the model was registered although its URI was refused');

  await page.getByLabel('Object storage').check();
  await page.getByLabel('Endpoint').fill('https://minio.example:9000');
  await page.getByLabel('Bucket').fill('My_Bucket');
  await page.getByRole('button', { name: 'Register', exact: true }).click();
  await page.getByText(/A bucket name has 3 to 63/).waitFor({ timeout: T });
  await page.getByLabel('Bucket').fill('models');
  await page.getByLabel('Region').fill('us-east-1');
  await page.getByLabel('Path').fill('iris/v1');
  await noA11yViolations(page, 'register model dialog, object storage');
  await page.getByRole('button', { name: 'Register', exact: true }).click();
  await page.getByTestId('model-name').filter({ hasText: name }).waitFor({ timeout: T });
  await page.getByTestId('version-detail')
    .getByText('s3://models/iris/v1?endpoint=https%3A%2F%2Fminio.example%3A9000&defaultRegion=us-east-1')
    .waitFor({ timeout: T });

  await page.goto(`${stack.url}/#/models?owner=${owner}`);
  await waitFor('the owner filter to show only this model', async () => {
    const names = await page.getByTestId('models-table').locator('tbody tr td:first-child').allInnerTexts();
    return names.length === 1 && names[0] === name;
  }, T);
  assert.equal(await page.getByLabel('Filter by owner').inputValue(), owner);
  noProblems(page);
  await page.close();
});

test('register a model with a version, find it by search, open it, archive and restore it', async () => {
  const page = await userPage(browser, 'alice');
  const name = `browser-model-${process.pid}`;
  await page.goto(`${stack.url}/#/models`);
  await page.getByRole('heading', { name: 'Registered models', level: 1 }).waitFor({ timeout: T });
  await page.getByRole('button', { name: 'Register model' }).click();
  await page.getByLabel('Model name').fill(name);
  await page.getByLabel('Description').fill('registered from the browser test');
  await page.getByLabel('Version name').fill('v1');
  await page.getByLabel('Model artifact URI').fill('s3://bucket/browser/model');
  await page.getByLabel('Model format').fill('sklearn');
  await screenshot(page, 'register-model');
  await noA11yViolations(page, 'register model dialog');
  await page.getByRole('button', { name: 'Register', exact: true }).click();
  await page.getByTestId('model-name').filter({ hasText: name }).waitFor({ timeout: T });
  await page.getByTestId('version-detail').getByText('s3://bucket/browser/model').waitFor({ timeout: T });
  await screenshot(page, 'model-detail');
  await noA11yViolations(page, 'model detail');

  // the same name again: the registry's message, inline under the name field
  await page.goto(`${stack.url}/#/models`);
  await page.getByRole('button', { name: 'Register model' }).click();
  await page.getByLabel('Model name').fill(name);
  await page.getByRole('button', { name: 'Register', exact: true }).click();
  const err = page.locator('.pf-v6-c-helper-text__item.pf-m-error');
  await err.waitFor({ timeout: T });
  assert.match(await err.innerText(), /\S/, 'an empty inline error');
  await screenshot(page, 'register-model-error');
  await page.getByRole('button', { name: 'Cancel' }).click();

  // search (typed: the list follows), open, archive, restore
  await page.getByLabel('Search models', { exact: true }).fill(name.slice(0, -2));
  await waitFor('the search in the URL', () => page.url().includes(`q=${name.slice(0, -2)}`), T);
  await waitFor('the list to show only matches', async () => {
    const names = await page.getByTestId('models-table').locator('tbody tr td:first-child').allInnerTexts();
    return names.length === 1 && names[0] === name;
  }, T);
  await screenshot(page, 'registered-models-search');
  await noA11yViolations(page, 'registered models');
  await page.getByRole('link', { name }).click();
  await page.getByRole('button', { name: 'Archive model' }).click();
  await page.getByLabel(`Type the model name, ${name}, to confirm`).fill(name);
  await page.getByRole('button', { name: 'Archive', exact: true }).click();
  await page.getByRole('button', { name: 'Restore model' }).waitFor({ timeout: T });
  const archived = await registry(stack, 'GET', `/registered_models?filterQuery=${encodeURIComponent(`name='${name}'`)}`);
  assert.equal(archived.items[0].state, 'ARCHIVED');
  await page.goto(`${stack.url}/#/models?state=ARCHIVED`);
  await page.getByRole('link', { name }).waitFor({ timeout: T });
  await page.getByRole('link', { name }).click();
  await page.getByRole('button', { name: 'Restore model' }).click();
  await page.getByRole('button', { name: 'Archive model' }).waitFor({ timeout: T });
  const restored = await registry(stack, 'GET', `/registered_models?filterQuery=${encodeURIComponent(`name='${name}'`)}`);
  assert.equal(restored.items[0].state, 'LIVE');
  noProblems(page);
});

test('the list pages on the server (pageSize 20, nextPageToken), never loading everything', async () => {
  const prefix = `page-${process.pid}-`;
  for (let i = 0; i < 45; i++) await registry(stack, 'POST', '/registered_models', { name: `${prefix}${String(i).padStart(2, '0')}` });
  const page = await userPage(browser, 'alice');
  const lists = [];
  page.on('request', (r) => {
    if (/\/registered_models\?/.test(r.url())) lists.push(new URL(r.url()).searchParams);
  });
  await page.goto(`${stack.url}/#/models?q=${prefix}&sort=created_asc`);
  const rows = page.getByTestId('models-table').locator('tbody tr');
  const first = async () => (await rows.first().innerText()).split('\t')[0].trim();
  await waitFor('page 1', async () => (await rows.count()) === 20 && (await first()) === `${prefix}00`, T);
  await page.getByRole('button', { name: 'Next page' }).click();
  await waitFor('page 2', async () => (await first()) === `${prefix}20`, T);
  assert.equal(await rows.count(), 20);
  await page.getByRole('button', { name: 'Next page' }).click();
  await waitFor('page 3', async () => (await first()) === `${prefix}40`, T);
  assert.equal(await rows.count(), 5);
  assert.equal(await page.getByRole('button', { name: 'Next page' }).isDisabled(), true);
  await page.getByRole('button', { name: 'Previous page' }).click();
  await waitFor('back to page 2', async () => (await first()) === `${prefix}20`, T);
  assert.ok(lists.length >= 4, `${lists.length} list requests`);
  for (const q of lists) {
    assert.equal(q.get('pageSize'), '20');
    assert.match(q.get('filterQuery') ?? '', /ILIKE/);
  }
  noProblems(page);
});

test('keyboard only: skip link, navigation, opening a model', async () => {
  const name = `keyboard-${process.pid}`;
  await registry(stack, 'POST', '/registered_models', { name });
  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/models?q=${name}`);
  await page.getByRole('link', { name }).waitFor({ timeout: T });
  const focused = () => page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
  await page.keyboard.press('Tab');
  assert.equal(await focused(), 'Skip to content');
  // Tab along until the Catalog entry of the navigation has the focus, then Enter
  for (let i = 0; i < 10 && (await focused()) !== 'Catalog'; i++) await page.keyboard.press('Tab');
  assert.equal(await focused(), 'Catalog');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Catalog', level: 1 }).waitFor({ timeout: T });
  await page.goBack();
  await page.getByRole('link', { name }).waitFor({ timeout: T });
  await page.getByRole('link', { name }).focus();
  await page.keyboard.press('Enter');
  await page.getByTestId('model-name').filter({ hasText: name }).waitFor({ timeout: T });
  noProblems(page);
});

test('a model name with HTML in it is shown as text', async () => {
  const evil = `<img src=x onerror="window.__pwned=1">${process.pid}`;
  await registry(stack, 'POST', '/registered_models', { name: evil });
  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/models?q=${encodeURIComponent(String(process.pid))}`);
  await page.getByRole('link', { name: evil }).waitFor({ timeout: T });
  assert.equal(await page.locator('img[src=x]').count(), 0, 'the name was rendered as HTML');
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
});

test('browse the catalog with a filter and open a model', async () => {
  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/catalog`);
  const sources = page.getByTestId('sources-table');
  await sources.getByText('Demo Models').waitFor({ timeout: T });
  await sources.getByText('Missing Models').waitFor({ timeout: T });
  await page.getByTestId('catalog-models').getByRole('link', { name: 'granite-demo' }).waitFor({ timeout: T });
  await screenshot(page, 'catalog');
  await noA11yViolations(page, 'catalog');
  await page.getByLabel('Filter by license').selectOption('mit');
  await waitFor('the license filter', async () => (await page.getByTestId('catalog-models').getByRole('link').allInnerTexts()).join(',') === 'vision-demo', T);
  await page.getByLabel('Filter by license').selectOption('apache-2.0');
  await page.getByRole('link', { name: 'granite-demo' }).waitFor({ timeout: T });
  await page.getByRole('link', { name: 'granite-demo' }).click();
  await page.getByTestId('catalog-model-name').filter({ hasText: 'granite-demo' }).waitFor({ timeout: T });
  await page.locator('table[aria-label="Artifacts"]').getByText('oci://registry.example.com/demo/granite-demo:1.0').waitFor({ timeout: T });
  await page.getByTestId('hardware-configurations').getByText('H100 × 1', { exact: true }).waitFor({ timeout: T });
  await screenshot(page, 'catalog-model');
  await noA11yViolations(page, 'catalog model');
  noProblems(page);
});

test('a TrainedModel goes from waiting (not enough memory) to Ready when the limit is raised, without reload', { skip: NEEDS_FULL }, async () => {
  const ns = stack.nsA;
  const isvc = 'sklearn-demo';
  const predictor = (mem) => ({ minReplicas: 1, sklearn: { name: 'kserve-container', resources: { requests: { cpu: '1', memory: mem }, limits: { cpu: '1', memory: mem } } } });
  // a registered model and version that the InferenceService serves (the registry controller links them)
  const rm = await registry(stack, 'POST', '/registered_models', { name: `served-${process.pid}` });
  const mv = await registry(stack, 'POST', `/registered_models/${rm.id}/versions`, { name: 'v1', registeredModelId: rm.id });
  apply({
    apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService',
    metadata: {
      name: isvc, namespace: ns,
      labels: { 'modelregistry.kubeflow.org/registered-model-id': rm.id, 'modelregistry.kubeflow.org/model-version-id': mv.id },
      annotations: { 'modelregistry.kubeflow.org/url': stack.registryUrl },
    },
    spec: { predictor: predictor('2Gi') },
  });
  kubectl(['-n', ns, 'patch', 'inferenceservice', isvc, '--subresource=status', '--type=merge', '-p', JSON.stringify({
    status: { url: `http://${isvc}.${ns}.example.com`, address: { url: `http://${isvc}-predictor.${ns}.svc.cluster.local` },
      conditions: ['IngressReady', 'PredictorReady', 'Ready'].map((type) => ({ type, status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' })) },
  })]);
  apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `modelconfig-${isvc}-0`, namespace: ns }, data: { 'models.json': '' } });
  apply({ apiVersion: 'serving.kserve.io/v1alpha1', kind: 'TrainedModel', metadata: { name: 'big-model', namespace: ns },
    spec: { inferenceService: isvc, model: { storageUri: 's3://bucket/big', framework: 'sklearn', memory: '3Gi' } } });
  stack.ensureController();

  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/deployments/${ns}`);
  await page.getByTestId('isvc-table').getByRole('link', { name: isvc }).waitFor({ timeout: T });
  await screenshot(page, 'deployments');
  await noA11yViolations(page, 'deployments');
  await page.getByRole('link', { name: isvc }).click();
  const tm = page.getByTestId('tm-big-model');
  await tm.getByText('MemoryResourceNotAvailable').first().waitFor({ timeout: T });
  await screenshot(page, 'inferenceservice-waiting');
  await noA11yViolations(page, 'InferenceService detail');
  await page.evaluate(() => {
    window.__noReload = true;
  });
  kubectl(['-n', ns, 'patch', 'inferenceservice', isvc, '--type=merge', '-p', JSON.stringify({ spec: { predictor: predictor('4Gi') } })]);
  await waitFor('the TrainedModel to show Ready', async () => (await tm.locator('h3 .pf-v6-c-label').first().innerText()).trim() === 'Ready', 120_000);
  assert.equal(await page.evaluate(() => window.__noReload), true, 'the page was reloaded');
  // the conditions are folded away until asked for
  const conditions = tm.locator('td', { hasText: /^MemoryResourceAvailable$/ });
  assert.equal(await conditions.isVisible(), false, 'conditions shown before they were asked for');
  await tm.getByRole('button', { name: /^Conditions \(/ }).click();
  await conditions.waitFor({ timeout: T });
  await screenshot(page, 'inferenceservice-ready');

  // the link both ways, by name: InferenceService -> registered version -> InferenceService
  await page.getByRole('link', { name: `served-${process.pid} / v1` }).first().click();
  await page.getByTestId('model-name').filter({ hasText: `served-${process.pid}` }).waitFor({ timeout: T });
  await page.getByTestId('version-detail').getByRole('heading', { name: 'Version v1' }).waitFor({ timeout: T });
  await page.getByTestId('model-deployments').getByTestId('linked-isvcs').getByRole('link', { name: isvc }).waitFor({ timeout: T });
  await waitFor('the registry controller to record the InferenceService', async () => {
    const r = await registry(stack, 'GET', `/inference_services?filterQuery=${encodeURIComponent(`registeredModelId = '${rm.id}'`)}`);
    return (r.items ?? []).length > 0;
  }, 120_000);
  await page.reload();
  await page.getByTestId('registry-isvcs').waitFor({ timeout: T });
  await page.getByTestId('model-deployments').getByTestId('linked-isvcs').getByText(/recorded as \d+/).waitFor({ timeout: T });
  await screenshot(page, 'model-detail-deployed');
  await noA11yViolations(page, 'model detail (deployed)');
  await page.getByTestId('model-deployments').getByTestId('linked-isvcs').getByRole('link', { name: isvc }).click();
  await page.getByTestId('tm-big-model').waitFor({ timeout: T });
  noProblems(page);
});

/** A serving replica as the agent shows itself to the controller: a Pod and its report. */
function fakeReplica(ns, isvc, pod) {
  apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name: pod, namespace: ns, labels: { 'serving.kserve.io/inferenceservice': isvc } },
    spec: { containers: [{ name: 'kserve-container', image: 'example.invalid/none' }] } });
  const uid = JSON.parse(kubectl(['-n', ns, 'get', 'pod', pod, '-o', 'json'])).metadata.uid;
  return (models) => apply({
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: `modelstatus-${pod}`, namespace: ns,
      labels: { 'serving.kserve.io/inferenceservice': isvc, 'modelplane.io/model-status': 'agent' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod, uid }] },
    data: { 'models.json': JSON.stringify(models), pod },
  });
}

test('deploy a registered version from its page: Ready, then n/m loaded live; clash, full and archive refused in words', { skip: NEEDS_FULL }, async () => {
  const ns = stack.nsA;
  const isvc = 'mms-deploy';
  const uri = 's3://bucket/deploy/iris';
  // alice may create TrainedModels in team A; dave may only read it
  apply({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'console-deployer', namespace: ns },
    rules: [{ apiGroups: ['serving.kserve.io'], resources: ['trainedmodels'], verbs: ['create'] }] });
  apply({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'console-deployer-alice', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'console-deployer' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }] });
  for (const [name, role] of [['console-reader-dave', 'console-reader'], ['registry-user-dave', 'registry-user']])
    apply({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name, namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dave' }] });
  const rm = await registry(stack, 'POST', '/registered_models', { name: `deployable-${process.pid}` });
  const mv = await registry(stack, 'POST', `/registered_models/${rm.id}/versions`, { name: 'v1', registeredModelId: rm.id });
  await registry(stack, 'POST', `/model_versions/${mv.id}/artifacts`, { artifactType: 'model-artifact', name: 'v1', uri, modelFormatName: 'sklearn' });
  // a multi-model InferenceService with 1 GiB, marked ready (no serving runtime runs here), and two replicas
  apply({ apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: isvc, namespace: ns },
    spec: { predictor: { minReplicas: 2, sklearn: { name: 'kserve-container', resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } } } } } });
  kubectl(['-n', ns, 'patch', 'inferenceservice', isvc, '--subresource=status', '--type=merge', '-p', JSON.stringify({
    status: { url: `http://${isvc}.${ns}.example.com`, address: { url: `http://${isvc}-predictor.${ns}.svc.cluster.local` },
      conditions: ['IngressReady', 'PredictorReady', 'Ready'].map((type) => ({ type, status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' })) },
  })]);
  apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `modelconfig-${isvc}-0`, namespace: ns }, data: { 'models.json': '' } });
  const replicaA = fakeReplica(ns, isvc, `${isvc}-predictor-a`);
  const replicaB = fakeReplica(ns, isvc, `${isvc}-predictor-b`);
  stack.ensureController();

  // dave may read the namespace but not deploy there: the dialog says so and offers no Deploy
  const dave = await userPage(browser, 'dave');
  await dave.goto(`${stack.url}/#/models/${rm.id}/versions/${mv.id}`);
  await dave.getByRole('button', { name: 'Deploy', exact: true }).click();
  const refusal = dave.getByTestId('deploy-not-allowed');
  await refusal.waitFor({ timeout: T });
  assert.match(await refusal.innerText(), new RegExp(`user dave may not create trainedmodels.serving.kserve.io in namespace ${ns}`));
  assert.equal(await dave.getByRole('button', { name: 'Deploy', exact: true }).last().isDisabled(), true);
  await dave.close();

  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/models/${rm.id}/versions/${mv.id}`);
  const version = page.getByTestId('version-detail');
  await version.getByRole('heading', { name: 'Version v1' }).waitFor({ timeout: T });
  await version.getByRole('button', { name: 'Deploy', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('combobox', { name: 'InferenceService', exact: true }).locator(`option[value="${isvc}"]`).waitFor({ state: 'attached', timeout: T });
  await dialog.getByRole('combobox', { name: 'InferenceService', exact: true }).selectOption(isvc);
  assert.match(await dialog.getByRole('combobox', { name: 'InferenceService', exact: true }).locator(`option[value="${isvc}"]`).innerText(), /0 B of 1.0 GiB assigned/);
  // checked in the page before anything is sent
  await dialog.getByRole('textbox', { name: 'TrainedModel name', exact: true }).fill('Iris_V1');
  await dialog.getByRole('textbox', { name: 'Memory', exact: true }).fill('a lot');
  await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
  await dialog.getByText("Only lower-case letters, digits and '-'.").waitFor({ timeout: T });
  await dialog.getByText('Not a Kubernetes quantity: write it as 256Mi, 1Gi or 500M.').waitFor({ timeout: T });
  await screenshot(page, 'deploy-dialog-invalid');
  await noA11yViolations(page, 'deploy dialog');
  await dialog.getByRole('textbox', { name: 'TrainedModel name', exact: true }).fill('iris-deployed');
  await dialog.getByRole('textbox', { name: 'Memory', exact: true }).fill('256Mi');
  await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
  await page.getByTestId('deploy-done').waitFor({ timeout: T });
  await page.evaluate(() => {
    window.__noReload = true;
  });

  // followed live on the version page: Ready, then the replicas load it one by one
  const row = version.getByTestId('version-deployments').getByTestId('deployed-iris-deployed');
  await waitFor('the TrainedModel to show Ready', async () => (await row.locator('td[data-label="Status"] .pf-v6-c-label').innerText()).trim() === 'Ready', 120_000);
  replicaA([{ name: 'iris-deployed', state: 'Loaded', storageUri: uri }]);
  replicaB([{ name: 'iris-deployed', state: 'Loading', storageUri: uri }]);
  const loaded = row.getByTestId('loaded').locator('.pf-v6-c-label');
  await waitFor('1/2 loaded', async () => (await loaded.innerText()).trim() === '1/2 loaded', 120_000);
  assert.match(await loaded.getAttribute('class'), /pf-m-orange/, '1/2 is not orange');
  replicaB([{ name: 'iris-deployed', state: 'Loaded', storageUri: uri }]);
  await waitFor('2/2 loaded', async () => (await loaded.innerText()).trim() === '2/2 loaded', 120_000);
  assert.match(await loaded.getAttribute('class'), /pf-m-green/, '2/2 is not green');
  assert.equal(await page.evaluate(() => window.__noReload), true, 'the page was reloaded');
  await version.getByText(/1 TrainedModel/).first().waitFor({ timeout: T });
  await screenshot(page, 'version-deployed');
  await noA11yViolations(page, 'version page (deployed)');
  const tm = JSON.parse(kubectl(['-n', ns, 'get', 'trainedmodel', 'iris-deployed', '-o', 'json']));
  assert.deepEqual(tm.spec, { inferenceService: isvc, model: { storageUri: uri, framework: 'sklearn', memory: '256Mi' } });
  assert.equal(tm.metadata.labels['modelregistry.kubeflow.org/model-version-id'], mv.id);

  // the same name again: a clash, in words
  await version.getByRole('button', { name: 'Deploy', exact: true }).click();
  await dialog.getByRole('combobox', { name: 'InferenceService', exact: true }).locator(`option[value="${isvc}"]`).waitFor({ state: 'attached', timeout: T });
  await dialog.getByRole('combobox', { name: 'InferenceService', exact: true }).selectOption(isvc);
  await dialog.getByRole('textbox', { name: 'TrainedModel name', exact: true }).fill('iris-deployed');
  await dialog.getByRole('textbox', { name: 'Memory', exact: true }).fill('256Mi');
  await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
  const err = dialog.getByTestId('deploy-error');
  await err.waitFor({ timeout: T });
  assert.match(await err.innerText(), new RegExp(`a TrainedModel named iris-deployed already exists in namespace ${ns}: choose another name`));
  // more than the InferenceService has room for: created, then refused by the controller in words
  await dialog.getByRole('textbox', { name: 'TrainedModel name', exact: true }).fill('iris-too-big');
  await dialog.getByRole('textbox', { name: 'Memory', exact: true }).fill('2Gi');
  await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
  const big = version.getByTestId('version-deployments').getByTestId('deployed-iris-too-big');
  await big.getByText('Inference Service does not have enough memory resources for Trained Model').waitFor({ timeout: 120_000 });
  assert.equal((await big.locator('td[data-label="Status"] .pf-v6-c-label').innerText()).trim(), 'MemoryResourceNotAvailable');

  // the InferenceService's page: names, memory against the limit, one row per replica, its own events
  await row.getByRole('link', { name: 'iris-deployed' }).click();
  const section = page.getByTestId('tm-iris-deployed');
  await section.getByRole('link', { name: `deployable-${process.pid} / v1` }).waitFor({ timeout: T });
  const replicas = section.getByTestId('replicas-table');
  await waitFor('both replicas Loaded', async () => (await replicas.locator('td[data-label="State"]').allInnerTexts()).join(',') === 'Loaded,Loaded', T);
  assert.deepEqual(await replicas.locator('td[data-label="Pod"]').allInnerTexts(), [`${isvc}-predictor-a`, `${isvc}-predictor-b`]);
  assert.match(await replicas.locator('td[data-label="Since"]').first().innerText(), /s ago|min ago/);
  await waitFor('the memory in use', async () => /256 MiB of 1.0 GiB assigned \(1 TrainedModel\); 2.0 GiB waiting for room \(1 TrainedModel\)/.test(await page.getByTestId('memory-use').innerText()), T);
  assert.equal(await section.locator('td', { hasText: /^MemoryResourceAvailable$/ }).isVisible(), false, 'conditions not folded');
  await page.getByTestId('tm-iris-too-big').getByTestId('tm-status-message').waitFor({ timeout: T });
  const objects = await page.getByTestId('events-table').locator('td[data-label="Object"]').allInnerTexts();
  assert.ok(objects.length > 0 && objects.every((o) => o === `InferenceService/${isvc}` || /^TrainedModel\/iris-(deployed|too-big)$/.test(o) || o.startsWith(`ConfigMap/modelconfig-${isvc}-`)), `events of other objects: ${objects}`);
  await screenshot(page, 'inferenceservice-deployed');
  await noA11yViolations(page, 'InferenceService (deployed from the console)');

  // archiving the deployed version is refused with the reason named
  await page.goto(`${stack.url}/#/models/${rm.id}/versions/${mv.id}`);
  await version.getByRole('button', { name: 'Archive version' }).click();
  await page.getByLabel('Type the version name, v1, to confirm').fill('v1');
  await page.getByRole('button', { name: 'Archive', exact: true }).click();
  const why = dialog.getByText(/cannot be archived while it is deployed/);
  await why.waitFor({ timeout: T });
  assert.match(await why.innerText(), new RegExp(`TrainedModel ${ns}/iris-deployed`));
  await screenshot(page, 'archive-refused');
  const after = await registry(stack, 'GET', `/model_versions/${mv.id}`);
  assert.equal(after.state, 'LIVE');
  noProblems(page);
});

test('a user without RBAC on a namespace does not see it and gets the 403 message', { skip: NEEDS_FULL }, async () => {
  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/deployments`);
  // The select itself (exact name): getByLabel('Namespace') also matches the spinner labelled
  // "Loading namespaces", which a slow namespace list leaves on screen.
  const select = page.getByRole('combobox', { name: 'Namespace', exact: true });
  await select.waitFor({ timeout: T });
  const options = await select.locator('option').evaluateAll((os) => os.map((o) => o.value));
  assert.ok(options.includes(stack.nsA), `alice does not see ${stack.nsA}: ${options}`);
  assert.ok(!options.includes(stack.nsB), `alice sees ${stack.nsB}`);
  await page.goto(`${stack.url}/#/deployments/${stack.nsB}`);
  const banner = page.getByTestId('error-banner');
  await banner.waitFor({ timeout: T });
  const text = await banner.innerText();
  assert.match(text, /Access denied/);
  assert.match(text, new RegExp(`alice.*${stack.nsB}`));
  await screenshot(page, 'deployments-forbidden');
  await noA11yViolations(page, 'deployments (403)');
});

test('a user without access to the registry gets the 403 in words, and changes nothing', { skip: NEEDS_FULL }, async () => {
  const owned = await registry(stack, 'POST', '/registered_models', { name: `alice-only-${process.pid}`, description: 'alice keeps this' });
  const page = await userPage(browser, 'mallory');
  await page.goto(`${stack.url}/#/models`);
  const banner = page.getByTestId('error-banner');
  await banner.waitFor({ timeout: T });
  const text = await banner.innerText();
  assert.match(text, /mallory/);
  assert.match(text, /may not use the model registry/);
  assert.match(text, /model-registry-service/);
  await screenshot(page, 'registry-forbidden');
  await noA11yViolations(page, 'registered models (403)');
  // the API refuses her writes too, with a valid CSRF token
  const res = await page.evaluate(async (id) => {
    const token = (await (await fetch('/api/v1/user')).json()).data.csrfToken;
    const mr = (await (await fetch('/api/v1/model_registry')).json()).data[0].name;
    const r = await fetch(`/api/v1/model_registry/${mr}/registered_models/${id}`, {
      method: 'PATCH', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': token },
      body: JSON.stringify({ data: { description: 'mallory was here' } }),
    });
    return { status: r.status, body: await r.text() };
  }, owned.id);
  assert.equal(res.status, 403, res.body);
  const after = await registry(stack, 'GET', `/registered_models/${owned.id}`);
  assert.equal(after.description, 'alice keeps this');
  await page.goto(`${stack.url}/#/catalog`);
  // (every catalog call on the page is refused alike; each says so)
  await page.getByTestId('error-banner').filter({ hasText: /may not use the model catalog/ }).first().waitFor({ timeout: T });
  noProblems(page);
});

test('a write without the CSRF token is refused', { skip: NEEDS_FULL }, async () => {
  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/models`);
  await page.getByRole('heading', { name: 'Registered models', level: 1 }).waitFor({ timeout: T });
  const res = await page.evaluate(async () => {
    const mr = (await (await fetch('/api/v1/model_registry')).json()).data[0].name;
    const r = await fetch(`/api/v1/model_registry/${mr}/registered_models`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ data: { name: 'csrf-forged' } }) });
    return { status: r.status, body: await r.text() };
  });
  assert.equal(res.status, 403);
  assert.match(res.body, /CSRF/);
  const found = await registry(stack, 'GET', `/registered_models?filterQuery=${encodeURIComponent("name='csrf-forged'")}`);
  assert.equal(found.items?.length ?? 0, 0, 'the forged write was stored');
});

test('a registry that is down shows a clear banner, and the catalog still works', { skip: NEEDS_FULL }, async () => {
  const dead = await stack.serve('ui-dead-registry', [
    'ui', '--listen', '127.0.0.1:0', '--static-dir', `${process.env.MODELPLANE_SOURCE_ROOT}/ui/dist`,
    '--registry-url', 'http://127.0.0.1:9', '--catalog-url', stack.catalogUrl,
    '--kubeconfig', stack.kubeconfig, '--trusted-proxy', '127.0.0.1/32', ...stack.accessArgs,
  ]);
  const page = await userPage(browser, 'alice');
  await page.goto(`http://127.0.0.1:${dead}/#/models`);
  const banner = page.getByTestId('error-banner');
  await banner.waitFor({ timeout: T });
  assert.match(await banner.innerText(), /unavailable/i);
  await screenshot(page, 'registry-down');
  await noA11yViolations(page, 'registered models (registry down)');
  await page.getByRole('link', { name: 'Catalog', exact: true }).click();
  await page.getByRole('link', { name: 'granite-demo' }).waitFor({ timeout: T });
});
