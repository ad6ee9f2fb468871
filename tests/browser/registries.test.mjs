// Browser test of several model registries (docs/ui.md, "Several registries"): a second
// `modelplane registry` behind a Service labelled component=model-registry, which the console
// offers in the masthead's registry switcher to a user who may get that Service, and whose
// registered models the console shows once chosen. Real stack (stack.mjs), Debian's chromium,
// axe-core on every page visited.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { FULL, Stack, apply, registry } from './stack.mjs';
import { axe, launch, screenshot, userPage } from './browser.mjs';

let stack;
let browser;
const T = 60_000; // hang guard for one expectation, far above normal
const NEEDS_FULL = FULL ? false : 'needs `modelplane ui` and the test control plane (MODELPLANE_TESTENV_DIR)';

before(async () => {
  stack = await new Stack().start();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

async function noA11yViolations(page, screen) {
  const v = await axe(page);
  assert.deepEqual(v, [], `axe: serious/critical violations on ${screen}: ${JSON.stringify(v, null, 1)}`);
}

test('a second registry: offered in the switcher to a user who may get its Service, its models shown once chosen', { skip: NEEDS_FULL }, async () => {
  const pid = process.pid;
  const portB = await stack.serve('registry-b', ['registry', '-n', '127.0.0.1', '-p', '0', '--database', join(stack.dir, 'registry-b.db')]);
  const b = { registryUrl: `http://127.0.0.1:${portB}` };
  await registry(b, 'POST', '/registered_models', { name: `team-b-model-${pid}` });
  await registry(stack, 'POST', '/registered_models', { name: `team-a-model-${pid}` });
  apply({
    apiVersion: 'v1', kind: 'Service',
    metadata: {
      name: 'mr-b', namespace: stack.nsA, labels: { component: 'model-registry' },
      annotations: { displayName: 'Team B', 'modelregistry.kubeflow.org/external-address-rest': `127.0.0.1:${portB}` },
    },
    spec: { ports: [{ name: 'http-api', port: 8080 }] },
  });
  apply({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'registry-user-mr-b', namespace: stack.nsA },
    rules: [{ apiGroups: [''], resources: ['services'], verbs: ['get'], resourceNames: ['mr-b'] }],
  });
  apply({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'registry-user-mr-b-alice', namespace: stack.nsA },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'registry-user-mr-b' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
  });

  // alice may use both: the switcher offers both, the configured registry first
  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/models`);
  await page.getByRole('link', { name: `team-a-model-${pid}` }).waitFor({ timeout: T });
  const switcher = page.getByRole('combobox', { name: 'Model registry' });
  await switcher.waitFor({ timeout: T });
  assert.deepEqual(await switcher.locator('option').allTextContents(), ['Model registry (modelplane)', 'Team B (mr-b)']);
  await noA11yViolations(page, 'registered models with the switcher');

  // choosing Team B shows its models, and the choice survives a reload
  await switcher.selectOption('mr-b');
  await page.getByRole('link', { name: `team-b-model-${pid}` }).waitFor({ timeout: T });
  assert.equal(await page.getByRole('link', { name: `team-a-model-${pid}` }).count(), 0, 'team A\'s model shown in Team B');
  await page.reload();
  await page.getByRole('link', { name: `team-b-model-${pid}` }).waitFor({ timeout: T });
  assert.equal(await page.getByRole('combobox', { name: 'Model registry' }).inputValue(), 'mr-b');
  await screenshot(page, 'registry-switcher-team-b');
  await noA11yViolations(page, 'Team B\'s registered models');
  assert.deepEqual(page.problems, [], 'console errors or CSP violations in the page');

  // mallory may use neither: no switcher (only the configured registry is listed), and the
  // registry's refusal in words
  const other = await userPage(browser, 'mallory');
  await other.goto(`${stack.url}/#/models`);
  const banner = other.getByTestId('error-banner');
  await banner.waitFor({ timeout: T });
  assert.match(await banner.innerText(), /mallory" may not use the model registry "modelplane"/);
  assert.equal(await other.getByRole('combobox', { name: 'Model registry' }).count(), 0);
});
