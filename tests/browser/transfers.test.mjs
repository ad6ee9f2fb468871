// Browser test of the console's Transfer jobs page (docs/ui.md, "Model transfer jobs"): a user
// holding the shipped ClusterRole modelplane-transfer-jobs in a namespace starts a job from the
// form (checked in the page first), sees it listed with its status, and deletes it; a user
// without rights there is refused in words. Real stack (stack.mjs), Debian's chromium, axe-core
// on every page visited.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { FULL, ROOT, Stack, apply, kubectl, waitFor } from './stack.mjs';
import { launch, noA11yViolations, screenshot, userPage } from './browser.mjs';

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

test('transfer jobs: a user with the shipped role starts one from the form, sees it and deletes it; a user without rights is refused in words', { skip: NEEDS_FULL }, async () => {
  const ns = stack.nsB;
  kubectl(['apply', '-n', 'modelplane-system', '-f', join(ROOT, 'deploy/base/ui/rbac.yaml')]);
  apply({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'transfer-alice', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'modelplane-transfer-jobs' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
  });
  const job = () => {
    try {
      return JSON.parse(kubectl(['-n', ns, 'get', 'job', 'iris-copy', '-o', 'json']));
    } catch {
      return null;
    }
  };

  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/transfers/${ns}`);
  await page.getByText(`No transfer jobs in ${ns}`).waitFor({ timeout: T });
  await noA11yViolations(page, 'transfer jobs, none');

  // a bad name is refused in the page, nothing sent
  const fill = async (label, value) => page.getByLabel(label, { exact: true }).fill(value);
  await fill('Job name', 'Iris_Copy');
  await fill('Display name', 'Iris copy');
  await fill('S3 bucket', 'models');
  await fill('S3 key (path of the model)', 'iris/v1');
  await fill('AWS access key ID', 'AKIA-BROWSER');
  await fill('AWS secret access key', 'browser-secret');
  await fill('Destination (OCI registry/repository:tag)', 'oci.example:5000/ml/iris:v1');
  await fill('OCI registry username', 'robot');
  await fill('OCI registry password', 'browser-password');
  await fill('Registered model name', 'iris');
  await fill('Version name', 'v1');
  await page.getByRole('button', { name: 'Start transfer job' }).click();
  await page.getByText('The job name must be').waitFor({ timeout: T });
  assert.equal(job(), null);

  // started: the Job as the user, listed with its status; no credential on the page
  await fill('Job name', 'iris-copy');
  await page.getByRole('button', { name: 'Start transfer job' }).click();
  await page.getByText(`Transfer job iris-copy started in ${ns}.`).waitFor({ timeout: T });
  const row = page.getByTestId('transfer-table').locator('tbody tr', { hasText: 'iris-copy' });
  await row.waitFor({ timeout: T });
  assert.match(await row.innerText(), /PENDING/);
  assert.match(await row.innerText(), /s3:\/\/models\/iris\/v1/);
  const created = job();
  assert.equal(created.spec.template.spec.containers[0].command.join(' '), 'modelplane async-upload');
  assert.equal(created.metadata.labels['modelregistry.kubeflow.org/model-registry-name'], 'modelplane');
  const text = await page.content();
  assert.ok(!text.includes('browser-secret') && !text.includes('browser-password'), 'a credential on the page');
  await screenshot(page, 'transfer-jobs');
  await noA11yViolations(page, 'transfer jobs, one');

  // deleted, after the confirmation
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Delete iris-copy' }).click();
  await page.getByText('Transfer job iris-copy deleted.').waitFor({ timeout: T });
  await waitFor('the row to go', async () => (await row.count()) === 0, T);
  assert.equal(job(), null);
  assert.deepEqual(page.problems, [], 'console errors or CSP violations in the page');

  // mallory may not list Jobs there: refused in words
  const other = await userPage(browser, 'mallory');
  await other.goto(`${stack.url}/#/transfers/${ns}`);
  const banner = other.getByTestId('error-banner');
  await banner.waitFor({ timeout: T });
  assert.match(await banner.innerText(), /mallory/);
  await noA11yViolations(other, 'transfer jobs, refused');
});
