// Browser test of several model registries (docs/ui.md, "Several registries"): a second
// `modelplane registry` behind a Service labelled component=model-registry, which the console
// offers in the masthead's registry switcher to a user who may get that Service, and whose
// registered models the console shows once chosen. Real stack (stack.mjs), Debian's chromium,
// axe-core on every page visited.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { join } from 'node:path';
import { FULL, ROOT, Stack, apply, kubectl, registry, waitFor } from './stack.mjs';
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

test('registry settings: an administrator grants and removes the use of a registry; a user without the right is refused in words', { skip: NEEDS_FULL }, async () => {
  const ns = stack.nsA;
  apply({
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 'mr-p', namespace: ns, labels: { component: 'model-registry' }, annotations: { displayName: 'Team P', description: 'team P\'s models' } },
    spec: { ports: [{ name: 'http-api', port: 8080 }] },
  });
  apply({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'registry-user-mr-p', namespace: ns },
    rules: [{ apiGroups: [''], resources: ['services'], verbs: ['get'], resourceNames: ['mr-p'] }],
  });
  // rb-admin administers the registries' namespace: its Services and RoleBindings
  apply({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'registry-admin', namespace: ns },
    rules: [
      { apiGroups: [''], resources: ['services'], verbs: ['get', 'list'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'], verbs: ['get', 'list', 'create', 'update', 'delete'] },
    ],
  });
  apply({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'registry-admin-rb-admin', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'registry-admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'rb-admin' }],
  });
  const bindings = () => JSON.parse(kubectl(['-n', ns, 'get', 'rolebindings', '-l', 'app.kubernetes.io/name=mr-p', '-o', 'json'])).items.flatMap((rb) => rb.subjects.map((s) => `${s.kind}:${s.name}`)).sort();

  const page = await userPage(browser, 'rb-admin');
  const row = (who) => page.getByTestId('permissions-table').locator('tbody tr', { hasText: who });
  await page.goto(`${stack.url}/#/settings`);
  await page.getByRole('link', { name: 'Manage permissions of Team P' }).waitFor({ timeout: T });
  await noA11yViolations(page, 'registry settings');
  await page.getByRole('link', { name: 'Manage permissions of Team P' }).click();
  await page.getByRole('heading', { name: 'Permissions of mr-p' }).waitFor({ timeout: T });
  await page.getByText('Nobody is granted this registry').waitFor({ timeout: T });

  // a bad name is refused in the page, nothing sent
  await page.getByLabel('Name').fill('a\tb');
  await page.getByRole('button', { name: 'Grant access' }).click();
  await page.getByText('A name has no control characters.').waitFor({ timeout: T });
  assert.deepEqual(bindings(), []);

  // a user, then a group
  await page.getByLabel('Name').fill('gina');
  await page.getByRole('button', { name: 'Grant access' }).click();
  await page.getByText('User gina may now use mr-p.').waitFor({ timeout: T });
  await row('gina').waitFor({ timeout: T });
  await page.getByLabel('Kind').selectOption('Group');
  await page.getByLabel('Name').fill('p-team');
  await page.getByRole('button', { name: 'Grant access' }).click();
  await row('p-team').waitFor({ timeout: T });
  assert.deepEqual(bindings(), ['Group:p-team', 'User:gina']);
  await screenshot(page, 'registry-permissions');
  await noA11yViolations(page, 'registry permissions');

  // removed: the RoleBinding with its last subject goes
  await page.getByRole('button', { name: 'Remove the access of User gina' }).click();
  await page.getByText('User gina may no longer use mr-p.').waitFor({ timeout: T });
  await waitFor('gina\'s row to go', async () => (await row('gina').count()) === 0, T);
  assert.deepEqual(bindings(), ['Group:p-team']);
  assert.deepEqual(page.problems, [], 'console errors or CSP violations in the page');

  // mallory may not list the RoleBindings: refused in words
  const other = await userPage(browser, 'mallory');
  await other.goto(`${stack.url}/#/settings/registries/${ns}/mr-p`);
  const banner = other.getByTestId('error-banner');
  await banner.waitFor({ timeout: T });
  assert.match(await banner.innerText(), /mallory may not list rolebindings/);
  await noA11yViolations(other, 'registry permissions, refused');
});

test('registries made by the console: an administrator with the shipped role creates, edits and deletes one; a user without rights is refused in words', { skip: NEEDS_FULL }, async () => {
  const ns = stack.nsA; // the registries' namespace (--registry-service)
  kubectl(['apply', '-n', 'modelplane-system', '-f', join(ROOT, 'deploy/base/ui/rbac.yaml')]);
  apply({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'registry-admin-reg-admin', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'modelplane-registry-admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'reg-admin' }],
  });
  const obj = (kind, name) => {
    try {
      return JSON.parse(kubectl(['-n', ns, 'get', kind, name, '-o', 'json']));
    } catch {
      return null;
    }
  };

  const page = await userPage(browser, 'reg-admin');
  const create = page.getByRole('form', { name: 'Create a model registry' });
  await page.goto(`${stack.url}/#/settings`);
  await page.getByRole('heading', { name: 'Create a model registry' }).waitFor({ timeout: T });
  await noA11yViolations(page, 'registry settings, create form');

  // a bad name is refused in the page, nothing sent
  await create.locator('#registry-name').fill('Mr_Web');
  await create.getByLabel('Display name').fill('Team Web');
  await create.getByRole('button', { name: 'Create registry' }).click();
  await page.getByText("The registry's name is its Service's").waitFor({ timeout: T });
  assert.equal(obj('deployment', 'mr-web'), null);

  // created as the user: the Deployment, Service and Role, listed with its actions
  await create.locator('#registry-name').fill('mr-web');
  await create.getByRole('button', { name: 'Create registry' }).click();
  await page.getByText('Model registry mr-web created').waitFor({ timeout: T });
  const row = page.getByTestId('registries-table').locator('tbody tr', { hasText: 'mr-web' });
  await row.waitFor({ timeout: T });
  assert.match(await row.innerText(), /Team Web \(mr-web\)/);
  assert.deepEqual(obj('deployment', 'mr-web').spec.template.spec.containers[0].args, ['registry', '--hostname=0.0.0.0', '--database=/data/model-registry.db']);
  assert.equal(obj('service', 'mr-web').metadata.labels.component, 'model-registry');
  assert.equal(obj('role', 'registry-user-mr-web').rules[0].resourceNames[0], 'mr-web');
  assert.equal(obj('pvc', 'mr-web-data').spec.resources.requests.storage, '1Gi');
  await screenshot(page, 'registry-settings-created');
  await noA11yViolations(page, 'registry settings, one made here');

  // edited in a dialog: the display name and the database
  await page.getByRole('button', { name: 'Edit Team Web' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Display name').fill('Team Web 2');
  await dialog.getByLabel('Database', { exact: true }).selectOption('postgres');
  await dialog.getByLabel('Host').fill('db.example');
  await dialog.getByLabel('Database name').fill('mr');
  await dialog.getByLabel('Username').fill('mr_user');
  await dialog.getByLabel('Password Secret').fill('mr-web-db');
  await noA11yViolations(page, 'registry settings, edit dialog');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Model registry mr-web saved.').waitFor({ timeout: T });
  await waitFor('the new display name', async () => /Team Web 2/.test(await row.innerText()), T);
  const c = obj('deployment', 'mr-web').spec.template.spec.containers[0];
  assert.equal(c.args[2], '--database=host=db.example port=5432 dbname=mr user=mr_user');
  assert.deepEqual(c.env, [{ name: 'PGPASSWORD', valueFrom: { secretKeyRef: { name: 'mr-web-db', key: 'database-password' } } }]);
  // opened again, the dialog shows the database read back from the Deployment
  await page.getByRole('button', { name: 'Edit Team Web 2' }).click();
  assert.equal(await page.getByRole('dialog').getByLabel('Host').inputValue({ timeout: T }), 'db.example');
  assert.equal(await page.getByRole('dialog').getByLabel('Password Secret').inputValue(), 'mr-web-db');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

  // deleted after typing its name
  await page.getByRole('button', { name: 'Delete Team Web 2' }).click();
  await page.getByLabel('Type the registry name, mr-web, to confirm').fill('mr-web');
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await page.getByText('Model registry mr-web deleted.').waitFor({ timeout: T });
  await waitFor('the row to go', async () => (await row.count()) === 0, T);
  assert.equal(obj('deployment', 'mr-web'), null);
  assert.equal(obj('service', 'mr-web'), null);
  assert.equal(obj('role', 'registry-user-mr-web'), null);
  const claim = obj('pvc', 'mr-web-data'); // gone, or held by pvc-protection
  assert.ok(claim === null || claim.metadata.deletionTimestamp, 'the claim stayed');
  assert.deepEqual(page.problems, [], 'console errors or CSP violations in the page');

  // mallory may not: refused in words, nothing written
  const other = await userPage(browser, 'mallory');
  const mcreate = other.getByRole('form', { name: 'Create a model registry' });
  await other.goto(`${stack.url}/#/settings`);
  await other.getByTestId('error-banner').waitFor({ timeout: T });
  await mcreate.locator('#registry-name').fill('mr-mallory');
  await mcreate.getByRole('button', { name: 'Create registry' }).click();
  const refused = other.getByTestId('change-outcome');
  await refused.waitFor({ timeout: T });
  assert.match(await refused.innerText(), /mallory may not get deployments\.apps mr-mallory/);
  assert.equal(obj('deployment', 'mr-mallory'), null);
  await noA11yViolations(other, 'registry settings, refused');
});

test('catalog sources: an administrator adds a YAML source, disables a default one and deletes hers; a user without the right is refused in words', { skip: NEEDS_FULL }, async () => {
  const ns = stack.nsA; // the catalog Service's namespace (--catalog-service)
  apply({
    apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'model-catalog-default-sources', namespace: ns },
    data: { 'sources.yaml': 'catalogs:\n- id: shipped\n  name: Shipped models\n  type: yaml\n  properties:\n    yamlCatalogPath: shipped.yaml\n', 'shipped.yaml': 'models: []\n' },
  });
  apply({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'catalog-admin', namespace: ns },
    rules: [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'create', 'update', 'delete'] }],
  });
  apply({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'catalog-admin-cat-admin', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'catalog-admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'cat-admin' }],
  });
  const userSources = () => {
    try {
      return JSON.parse(kubectl(['-n', ns, 'get', 'configmap', 'model-catalog-sources', '-o', 'json'])).data;
    } catch {
      return null;
    }
  };

  const page = await userPage(browser, 'cat-admin');
  const table = page.getByTestId('sources-table');
  await page.goto(`${stack.url}/#/settings/catalog`);
  await table.locator('tbody tr', { hasText: 'Shipped models' }).waitFor({ timeout: T });
  await noA11yViolations(page, 'catalog sources');

  // a bad id is refused in the page, nothing sent
  await page.locator('#source-id').fill('Team-Models');
  await page.locator('#source-name').fill('Team models');
  await page.getByLabel('Catalog (YAML)').fill('source: Team\nmodels:\n- name: team/m1\n');
  await page.getByRole('button', { name: 'Add source' }).click();
  await page.getByText('Only lowercase letters, digits and underscores.').waitFor({ timeout: T });
  assert.equal(userSources(), null);

  // added: the entry and its catalog in the user ConfigMap
  await page.locator('#source-id').fill('team_models');
  await page.getByRole('button', { name: 'Add source' }).click();
  await page.getByText('Source team_models added').waitFor({ timeout: T });
  await table.locator('tbody tr', { hasText: 'Team models' }).waitFor({ timeout: T });
  assert.equal(userSources()['team_models.yaml'], 'source: Team\nmodels:\n- name: team/m1\n');

  // the default source disabled (an override), never deletable
  await page.locator('label[for="enabled-shipped"]').click();
  await page.getByText('Source shipped disabled.').waitFor({ timeout: T });
  assert.match(userSources()['sources.yaml'], /id: shipped\n\s+enabled: false/);
  assert.equal(await page.getByRole('button', { name: 'Delete Shipped models' }).count(), 0);
  await screenshot(page, 'catalog-sources');
  await noA11yViolations(page, 'catalog sources after changes');

  // deleted, after the confirmation: typing the id
  await page.getByRole('button', { name: 'Delete Team models' }).click();
  const confirm = page.getByRole('dialog');
  const del = confirm.getByRole('button', { name: 'Delete', exact: true });
  assert.equal(await del.isDisabled(), true, 'Delete before the id was typed');
  await confirm.getByLabel('Type the source id, team_models, to confirm').fill('team_models');
  await del.click();
  await page.getByText('Source team_models deleted.').waitFor({ timeout: T });
  await waitFor('the row to go', async () => (await table.locator('tbody tr', { hasText: 'Team models' }).count()) === 0, T);
  assert.equal(userSources()['team_models.yaml'], undefined);
  assert.deepEqual(page.problems, [], 'console errors or CSP violations in the page');

  // mallory may not read the ConfigMaps: refused in words
  const other = await userPage(browser, 'mallory');
  await other.goto(`${stack.url}/#/settings/catalog`);
  const banner = other.getByTestId('error-banner');
  await banner.waitFor({ timeout: T });
  assert.match(await banner.innerText(), /mallory may not get configmaps/);
  await noA11yViolations(other, 'catalog sources, refused');
});

test('catalog sources: a Hugging Face source added with its preview, edited (previewed with its stored token), disabled and deleted; problems and refusals in words', { skip: NEEDS_FULL }, async () => {
  const ns = stack.nsA;
  // cat-admin (the test above) may also use the catalog, for the preview
  apply({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'registry-user-cat-admin', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'registry-user' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'cat-admin' }],
  });
  const userSources = () => JSON.parse(kubectl(['-n', ns, 'get', 'configmap', 'model-catalog-sources', '-o', 'json'])).data;
  const secret = () => {
    try {
      return JSON.parse(kubectl(['-n', ns, 'get', 'secret', 'catalog-hub-src-apikey', '-o', 'json']));
    } catch {
      return null;
    }
  };
  const page = await userPage(browser, 'cat-admin');
  const table = page.getByTestId('sources-table');
  await page.goto(`${stack.url}/#/settings/catalog`);
  await table.locator('tbody tr', { hasText: 'Shipped models' }).waitFor({ timeout: T });
  await page.getByLabel('Source type').selectOption('hf');
  const add = page.getByRole('form', { name: 'Add a catalog source' });

  // the problems, in words, field by field; nothing sent
  await add.getByRole('button', { name: 'Add source' }).click();
  for (const words of ['An id is required.', 'A name is required.', 'An organization is required: the Hugging Face organization whose models the source lists.']) await add.getByText(words).waitFor({ timeout: T });
  await page.locator('#source-id').fill('hub src');
  await page.locator('#source-key').fill('not-a-token');
  await page.locator('#source-org').fill('ibm-granite/x');
  await add.getByText('Only lowercase letters, digits and underscores.').waitFor({ timeout: T });
  await add.getByText('A Hugging Face access token starts with "hf_".').waitFor({ timeout: T });
  await add.getByText('An organization name: letters, digits, "-", "_" and ".", without "/" or spaces.').waitFor({ timeout: T });
  assert.equal(/hub_src/.test(userSources()['sources.yaml']), false);
  await noA11yViolations(page, 'the Hugging Face form with its problems');

  // filled in, previewed (the hub stand-in's ibm-granite models), added
  await page.locator('#source-id').fill('hub_src');
  await page.locator('#source-name').fill('Granite on the hub');
  await page.locator('#source-org').fill('ibm-granite');
  await page.locator('#source-key').fill('hf_good');
  assert.equal(await page.locator('#source-key').getAttribute('type'), 'password');
  await page.locator('#source-excluded').fill('*embedding*');
  const preview = page.getByTestId('add-preview');
  await preview.getByRole('button', { name: 'Preview models' }).click();
  await preview.getByText('ibm-granite/granite-3.0-2b-instruct').waitFor({ timeout: T });
  assert.match(await preview.getByTestId('preview-summary').innerText(), /^\d+ models: \d+ included, [1-9]\d* excluded/);
  await noA11yViolations(page, 'the Hugging Face form with its preview');
  await add.getByRole('button', { name: 'Add source' }).click();
  await page.getByText('Source hub_src added').waitFor({ timeout: T });
  const row = table.locator('tbody tr', { hasText: 'Granite on the hub' });
  await row.getByText('Hugging Face').waitFor({ timeout: T });
  assert.equal(Buffer.from(secret().data.apiKey, 'base64').toString(), 'hf_good');
  assert.equal(/hf_good/.test(userSources()['sources.yaml']), false, 'the token in the ConfigMap');
  assert.equal(await page.locator('#source-key').inputValue(), '', 'the token left in the form');

  // edited: the token is never shown back; the preview uses the stored one (read from its Secret)
  await page.getByRole('button', { name: 'Edit Granite on the hub' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.locator('#edit-source-org').waitFor({ timeout: T });
  assert.equal(await dialog.locator('#edit-source-key').inputValue(), '');
  assert.equal(await dialog.locator('#edit-source-excluded').inputValue(), '*embedding*');
  assert.equal((await page.content()).includes('hf_good'), false, 'the token in the page');
  await dialog.locator('#edit-source-included').fill('granite-3.0-*');
  await dialog.getByRole('button', { name: 'Preview models' }).click();
  await dialog.getByTestId('edit-preview').getByText('ibm-granite/granite-3.0-8b-instruct').waitFor({ timeout: T });
  await noA11yViolations(page, 'the edit dialog');
  await screenshot(page, 'catalog-source-edit');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Source hub_src saved').waitFor({ timeout: T });
  assert.match(userSources()['sources.yaml'], /granite-3\.0-\*/);
  assert.equal(Buffer.from(secret().data.apiKey, 'base64').toString(), 'hf_good', 'the stored token kept');

  // disabled by its switch, then deleted after typing its id; its Secret goes with it
  await page.locator('label[for="enabled-hub_src"]').click();
  await page.getByText('Source hub_src disabled.').waitFor({ timeout: T });
  assert.match(userSources()['sources.yaml'], /id: hub_src[^]*enabled: false/);
  await page.getByRole('button', { name: 'Delete Granite on the hub' }).click();
  await page.getByRole('dialog').getByLabel('Type the source id, hub_src, to confirm').fill('hub_src');
  await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
  await page.getByText('Source hub_src deleted.').waitFor({ timeout: T });
  await waitFor('the row to go', async () => (await row.count()) === 0, T);
  assert.equal(secret(), null);

  // a default source's edit: its name and catalog read-only; a user who may read but not write
  // the ConfigMaps is refused in words, in the dialog
  apply({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'catalog-reader', namespace: ns },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
  });
  apply({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'catalog-reader-cat-viewer', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'catalog-reader' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'cat-viewer' }],
  });
  const viewer = await userPage(browser, 'cat-viewer');
  await viewer.goto(`${stack.url}/#/settings/catalog`);
  await viewer.getByRole('button', { name: 'Edit Shipped models' }).click();
  const d2 = viewer.getByRole('dialog');
  await d2.locator('#edit-source-excluded').waitFor({ timeout: T });
  assert.equal(await d2.locator('#edit-source-name').getAttribute('readonly'), '');
  await d2.locator('#edit-source-excluded').fill('old/*');
  await d2.getByRole('button', { name: 'Save' }).click();
  const refused = d2.getByTestId('edit-error');
  await refused.waitFor({ timeout: T });
  assert.match(await refused.innerText(), /cat-viewer may not update configmaps model-catalog-sources/);
  await noA11yViolations(viewer, 'the edit dialog, refused');
  assert.deepEqual(page.problems, [], 'console errors or CSP violations in the page');
});
