// Browser tests of issue 26 (the console a Kubeflow user would switch to): the page layout on a
// narrow screen, one banner per outage, the catalog's model card rendered from Markdown and
// sanitized, the catalog's filters in the URL, the registry's screens. Real stack (stack.mjs),
// Debian's chromium, axe-core on every page visited.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FULL, Stack, registry, waitFor } from './stack.mjs';
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

function noProblems(page) {
  assert.deepEqual(page.problems, [], 'console errors or CSP violations in the page');
}

test('on a narrow screen (760 px) the navigation is behind the masthead toggle and reaches Catalog and Deployments', async () => {
  const page = await userPage(browser, 'alice', { width: 760, height: 900 });
  await page.goto(`${stack.url}/#/models`);
  await page.getByRole('heading', { name: 'Registered models', level: 1 }).waitFor({ timeout: T });
  const nav = page.getByRole('navigation', { name: 'Sections' });
  const toggle = page.getByRole('button', { name: 'Navigation' });
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  await screenshot(page, 'narrow-models');
  await noA11yViolations(page, 'registered models (760 px)');

  await toggle.click();
  await nav.getByRole('link', { name: 'Catalog', exact: true }).waitFor({ state: 'visible', timeout: T });
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  await page.waitForTimeout(400); // the sidebar's slide-in, for the screenshot only
  await screenshot(page, 'narrow-nav-open');
  await noA11yViolations(page, 'navigation open (760 px)');
  await nav.getByRole('link', { name: 'Catalog', exact: true }).click();
  await page.getByRole('heading', { name: 'Catalog', level: 1 }).waitFor({ timeout: T });
  // following a link folds the navigation away again
  await waitFor('the navigation to close', async () => (await toggle.getAttribute('aria-expanded')) === 'false', T);
  await page.getByTestId('catalog-models').getByRole('link', { name: 'granite-demo' }).waitFor({ timeout: T });
  await screenshot(page, 'narrow-catalog');
  await noA11yViolations(page, 'catalog (760 px)');

  await toggle.click();
  await nav.getByRole('link', { name: 'Deployments' }).click();
  await page.getByRole('heading', { name: 'Deployments', level: 1 }).waitFor({ timeout: T });
  await noA11yViolations(page, 'deployments (760 px)');

  // between the stacked layout and the wide one, table headers wrap instead of ending in "…"
  await page.setViewportSize({ width: 800, height: 900 });
  for (const [url, table] of [['#/catalog?view=table', 'catalog-models-table'], ['#/catalog', 'sources-table']]) {
    await page.goto(`${stack.url}/${url}`);
    await page.getByTestId(table).locator('thead th').first().waitFor({ timeout: T });
    const cut = await page.getByTestId(table).locator('thead th').evaluateAll((ths) => ths.filter((th) => th.scrollWidth > th.clientWidth + 1 || window.getComputedStyle(th).textOverflow === 'ellipsis').map((th) => th.textContent));
    assert.deepEqual(cut, [], `truncated headers in ${table}`);
  }
  const clipped = await page.locator('select').evaluateAll((ss) => ss.filter((s) => s.scrollWidth > s.clientWidth + 1).map((s) => s.getAttribute('aria-label')));
  assert.deepEqual(clipped, [], 'selects cut short');
  const outside = await page.locator('select').evaluateAll((ss) => ss.filter((s) => s.getBoundingClientRect().right > document.documentElement.clientWidth - 16).map((s) => s.getAttribute('aria-label')));
  assert.deepEqual(outside, [], 'selects past the right edge');
  await screenshot(page, 'catalog-800');

  // the favicon is served (no 404 in the console)
  const icon = await page.locator('link[rel="icon"]').getAttribute('href');
  const r = await page.request.get(new URL(icon, page.url()).href);
  assert.equal(r.status(), 200);
  assert.match(r.headers()['content-type'], /svg/);
  noProblems(page);
});

test('the wide layout shows the navigation without a click', async () => {
  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/catalog`);
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Deployments' }).waitFor({ state: 'visible', timeout: T });
  noProblems(page);
});

test('one banner per outage, with a Retry button, when every catalog call is refused alike', { skip: NEEDS_FULL }, async () => {
  const page = await userPage(browser, 'mallory');
  await page.goto(`${stack.url}/#/catalog`);
  const banner = page.getByTestId('error-banner');
  await banner.first().waitFor({ timeout: T });
  await waitFor('the three calls to have failed', async () => /sources, catalog filters and catalog models/.test(await banner.first().innerText()), T);
  assert.equal(await banner.count(), 1, 'one banner for one outage');
  assert.match(await banner.innerText(), /may not use the model catalog/);
  await screenshot(page, 'catalog-one-banner');
  await noA11yViolations(page, 'catalog (403)');
  const calls = [];
  page.on('request', (r) => {
    if (r.url().includes('/model_catalog/')) calls.push(r.url());
  });
  await banner.getByRole('button', { name: 'Retry' }).click();
  await waitFor('the retry to repeat the three calls', () => calls.length >= 3, T);
  await waitFor('the banner back', async () => (await banner.count()) === 1, T);
  // a catalog model's page: its four calls, one banner
  await page.goto(`${stack.url}/#/catalog/demo_models/granite-demo`);
  await waitFor('the four calls of the model page to have failed', async () => /granite-demo, its artifacts, its performance data and the catalog's hardware and workload types/.test(await banner.first().innerText()), T);
  assert.equal(await banner.count(), 1);
  await noA11yViolations(page, 'catalog model (403)');
  noProblems(page);
});

test('a catalog model card of hostile Markdown and HTML renders as inert, readable text', async () => {
  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/catalog/demo_models/hostile-card-demo`);
  const card = page.getByTestId('model-card');
  await card.getByRole('heading', { name: 'Hostile card', level: 3 }).waitFor({ timeout: T });
  // the Markdown is rendered: bold, a safe link, a table
  assert.equal(await card.locator('strong').innerText(), 'bold');
  const safe = card.getByRole('link', { name: 'safe link' });
  assert.equal(await safe.getAttribute('href'), 'https://example.com/docs');
  assert.equal(await safe.getAttribute('rel'), 'noopener noreferrer');
  await card.locator('table').getByText('accuracy').waitFor({ timeout: T });
  // ... and nothing active is left
  assert.equal(await card.locator('script, iframe, img, svg, form, button, style').count(), 0);
  const onAttrs = await card.evaluate((el) => [...el.querySelectorAll('*')].flatMap((n) => [...n.attributes].map((a) => a.name)).filter((a) => /^on|^style$|^data-/i.test(a)));
  assert.deepEqual(onAttrs, []);
  const hrefs = await card.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.ok(hrefs.every((h) => h === null || /^https?:/.test(h)), `links: ${hrefs}`);
  // the raw HTML is dropped, its text kept where it was inline; the Markdown link with a
  // javascript: target is plain text
  assert.equal(await card.getByText('hover me').count(), 0);
  assert.equal(await card.getByRole('link', { name: 'markdown javascript link' }).count(), 0);
  // try what a user could: click what is left of the links
  await card.getByText('click me').click();
  await card.getByText('markdown javascript link').click();
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => window.__readmePwned), undefined, 'a script in the README ran');
  await screenshot(page, 'catalog-model-card');
  await noA11yViolations(page, 'catalog model card');
  noProblems(page);
});

test('catalog filters and search live in the URL, survive a reload, and show as chips', async () => {
  const page = await userPage(browser, 'alice');
  const fetched = [];
  await page.route('https://logos.example.com/**', (r) => {
    fetched.push({ url: r.request().url(), referer: r.request().headers().referer ?? '' });
    return r.abort();
  });
  await page.goto(`${stack.url}/#/catalog`);
  const table = page.getByTestId('catalog-models');
  await table.getByRole('link', { name: 'granite-demo' }).waitFor({ timeout: T });
  // cards with logos: granite-demo's data URI; vision-demo's https address is never asked for
  // (no third-party host from a visitor's browser): the fallback icon, as for a model without a
  // logo or with a hostile one, inert
  const card = (model) => table.getByTestId('catalog-model-card').filter({ has: page.getByRole('heading', { name: model, exact: true }) });
  const logo = (model) => card(model).getByTestId('catalog-logo');
  assert.match(await logo('granite-demo').getAttribute('src'), /^data:image\/svg\+xml;base64,/);
  for (const hostile of ['vision-demo', 'hostile-logo-demo', 'hostile-logo2-demo']) {
    assert.equal(await logo(hostile).count(), 0, `${hostile}: its logo was rendered`);
    assert.equal(await card(hostile).getByTestId('catalog-logo-fallback').count(), 1);
  }
  assert.equal(await page.locator('img[onerror], img[src^="javascript:"]').count(), 0);
  assert.deepEqual(fetched, [], 'the page asked a logo host');
  assert.equal(await page.evaluate(() => window.__logoPwned), undefined, 'a hostile logo ran script');
  // name, provider, description, labels and source on a card
  const vision = await card('vision-demo').innerText();
  for (const want of ['Other Labs', 'A demo vision model under MIT.', 'image-classification', 'mit', 'Demo Models']) assert.ok(vision.includes(want), `vision-demo's card lacks ${want}: ${vision}`);
  await screenshot(page, 'catalog-cards');
  await noA11yViolations(page, 'catalog cards');
  // curated filters with readable names, not the raw keys
  for (const f of ['task', 'provider', 'license', 'language']) await page.getByRole('combobox', { name: `Filter by ${f}` }).waitFor({ timeout: T });
  assert.equal(await page.getByRole('combobox', { name: /model_type|format/ }).count(), 0);
  const names = async () => (await table.getByRole('link').allInnerTexts()).sort().join(',');

  await page.getByRole('combobox', { name: 'Filter by language' }).selectOption('en');
  await waitFor('the language filter', async () => (await names()) === 'granite-demo,vision-demo', T);
  await page.getByRole('combobox', { name: 'Filter by task' }).selectOption('text-generation');
  await waitFor('the task filter', async () => (await names()) === 'granite-demo', T);
  await page.getByLabel('Search catalog models').fill('granite');
  await waitFor('the URL', () => /language=en/.test(page.url()) && /task=text-generation/.test(page.url()) && /q=granite/.test(page.url()), T);
  // PatternFly's filter chips: one label group per filter, its name then its value
  const chips = page.locator('.pf-v6-c-toolbar__item.pf-m-label-group');
  const chipText = async () => (await chips.allInnerTexts()).join(' | ').replace(/\s+/g, ' ');
  await waitFor('the chips', async () => /Task text-generation/.test(await chipText()) && /Language en/.test(await chipText()), T);
  await screenshot(page, 'catalog-filters');
  await noA11yViolations(page, 'catalog with filters');

  const url = page.url();
  await page.reload();
  await table.getByRole('link', { name: 'granite-demo' }).waitFor({ timeout: T });
  assert.equal(await names(), 'granite-demo');
  assert.equal(page.url(), url);
  assert.equal(await page.getByLabel('Search catalog models').inputValue(), 'granite');
  assert.equal(await page.getByRole('combobox', { name: 'Filter by task' }).inputValue(), 'text-generation');
  await waitFor('the chips after the reload', async () => /Task text-generation/.test(await chipText()) && /Language en/.test(await chipText()), T);

  // the table view: a toggle, in the URL, kept by a reload
  await page.getByRole('button', { name: 'Table' }).click();
  const rows = page.getByTestId('catalog-models-table');
  await rows.getByRole('link', { name: 'granite-demo' }).waitFor({ timeout: T });
  await waitFor('the view in the URL', () => /view=table/.test(page.url()) && /task=text-generation/.test(page.url()), T);
  await page.reload();
  await rows.getByRole('link', { name: 'granite-demo' }).waitFor({ timeout: T });
  assert.equal(await page.getByTestId('catalog-models').count(), 0);
  await noA11yViolations(page, 'catalog table view');
  await page.getByRole('button', { name: 'Cards' }).click();
  await table.getByRole('link', { name: 'granite-demo' }).waitFor({ timeout: T });
  await waitFor('no view in the URL', () => !/view=/.test(page.url()), T);

  // removing a chip removes its filter, from the list and from the URL
  await chips.filter({ hasText: 'Language' }).getByRole('button', { name: /close/i }).first().click();
  await waitFor('the language filter gone from the URL', () => !/language=/.test(page.url()), T);
  assert.equal(await page.getByRole('combobox', { name: 'Filter by language' }).inputValue(), '');
  // the navigation's Catalog link starts afresh: no search, no filter, no chip
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Catalog', exact: true }).click();
  await waitFor('the catalog afresh', async () => (await names()).split(',').length >= 4, T);
  assert.ok(page.url().endsWith('#/catalog'), page.url());
  assert.equal(await page.getByLabel('Search catalog models').inputValue(), '');
  assert.equal(await page.getByRole('combobox', { name: 'Filter by task' }).inputValue(), '');
  assert.equal(await chips.count(), 0);
  noProblems(page);
});

test("a catalog model's benchmarks: a row per hardware configuration, the catalog's recommendations and replicas, filters in the URL and as chips", async () => {
  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/catalog/demo_models/granite-demo`);
  const table = page.getByTestId('hardware-configurations');
  const configs = async () => (await table.locator('tbody tr td:first-child').allInnerTexts()).join(',');
  const row = (hw) => table.locator('tbody tr').filter({ has: page.locator('td:first-child').getByText(hw, { exact: true }) });
  const cells = async (hw) => (await row(hw).locator('td').allInnerTexts()).join('|');
  // the catalog's recommendations (A100 x 2 is not 10% faster than A100 x 1 at twice the cost),
  // fastest TTFT P90 first
  await waitFor('the recommended configurations', async () => (await configs()) === 'H100 × 2,H100 × 1,A100 × 1,L40S × 4,L40S × 1', T);
  const heads = (await table.locator('thead th').allInnerTexts()).map((h) => h.trim());
  assert.deepEqual(heads.slice(0, 9), ['Hardware configuration', 'Workload', 'Replicas', 'RPS per replica', 'Total RPS', 'TTFT P90 (ms)', 'E2E P90 (ms)', 'ITL P90 (ms)', 'TPS P90 (tokens/s)']);
  assert.equal(await cells('H100 × 1'), 'H100 × 1|chatbot|1|12|12|41.5|910|21.5|780|512 / 256|vllm v0.8.4');
  await screenshot(page, 'catalog-performance');
  await noA11yViolations(page, 'catalog model performance');

  // every benchmark
  await page.getByText('Recommended only').click();
  await waitFor('every benchmark', async () => (await configs()) === 'H100 × 2,H100 × 1,A100 × 2,A100 × 1,L40S × 4,L40S × 1', T);
  await waitFor('all=1 in the URL', () => /[?&]all=1/.test(page.url()), T);
  await page.getByText('Recommended only').click();
  await waitFor('the recommendations again', async () => (await configs()) === 'H100 × 2,H100 × 1,A100 × 1,L40S × 4,L40S × 1', T);

  // a workload; then hardware, a latency maximum and a target RPS: each narrows the rows or sizes them
  await page.getByRole('combobox', { name: 'Filter by workload' }).selectOption('rag');
  await waitFor('the workload filter', async () => (await configs()) === 'L40S × 1', T);
  assert.equal(await cells('L40S × 1'), 'L40S × 1|rag|1|2|2|400|6000|60|200|2048 / 256|vllm v0.8.4');
  await page.getByRole('combobox', { name: 'Filter by workload' }).selectOption('');
  await waitFor('every workload again', async () => (await configs()).split(',').length === 5, T);
  await page.getByRole('combobox', { name: 'Filter by hardware type' }).selectOption('H100');
  await waitFor('the hardware filter', async () => (await configs()) === 'H100 × 2,H100 × 1', T);
  await page.getByLabel('Maximum latency (ms)').fill('35');
  await waitFor('the latency filter', async () => (await configs()) === 'H100 × 2', T);
  await page.getByLabel('Target requests per second').fill('40');
  // the catalog's replicas and total RPS for 40 requests/s at 20 per replica
  await waitFor('the replicas for 40 RPS', async () => (await cells('H100 × 2')).startsWith('H100 × 2|chatbot|2|20|40|30|'), T);
  await waitFor('the URL', () => /hardware=H100/.test(page.url()) && /maxLatency=35/.test(page.url()) && /rps=40/.test(page.url()), T);
  const chips = page.getByTestId('performance-filters').locator('.pf-v6-c-toolbar__item.pf-m-label-group');
  const chipText = async () => (await chips.allInnerTexts()).join(' | ').replace(/\s+/g, ' ');
  const allChips = async () => /Hardware H100/.test(await chipText()) && /Latency TTFT P90 ≤ 35 ms/.test(await chipText()) && /Target RPS 40 requests\/s/.test(await chipText());
  await waitFor('the chips', allChips, T);
  await screenshot(page, 'catalog-performance-filters');
  await noA11yViolations(page, 'catalog model performance, filtered');

  // a reload keeps them
  const url = page.url();
  await page.reload();
  await waitFor('the filtered rows after the reload', async () => (await configs()) === 'H100 × 2', T);
  assert.equal(page.url(), url);
  await waitFor('the chips after the reload', allChips, T);
  assert.equal(await page.getByLabel('Target requests per second').inputValue(), '40');

  // a chip removed removes its filter; a number that is not one is not sent
  await chips.filter({ hasText: 'Target RPS' }).getByRole('button', { name: /close/i }).first().click();
  await waitFor('rps gone from the URL', () => !/rps=/.test(page.url()), T);
  await chips.filter({ hasText: 'Latency' }).getByRole('button', { name: /close/i }).first().click();
  await waitFor('the latency filter gone', async () => (await configs()) === 'H100 × 2,H100 × 1', T);
  assert.equal(await page.getByLabel('Maximum latency (ms)').inputValue(), '');
  await page.getByLabel('Target requests per second').fill('lots');
  await page.getByText('The target RPS is a whole number').waitFor({ timeout: T });
  await page.waitForTimeout(600);
  assert.ok(!/rps=/.test(page.url()), page.url());
  await page.getByLabel('Target requests per second').fill('');

  // another latency: its columns first, its percentile throughout
  await page.getByRole('combobox', { name: 'Latency metric' }).selectOption('e2e');
  await page.getByRole('combobox', { name: 'Latency percentile' }).selectOption('p95');
  await waitFor('latency=e2e_p95 in the URL', () => /latency=e2e_p95/.test(page.url()), T);
  await waitFor('the E2E P95 column first', async () => (await table.locator('thead th').nth(5).innerText()).trim() === 'E2E P95 (ms)', T);
  await page.getByRole('button', { name: 'Clear all filters' }).click();
  await waitFor('every filter cleared', async () => (await configs()) === 'H100 × 2,H100 × 1,A100 × 1,L40S × 4,L40S × 1', T);
  assert.ok(page.url().endsWith('#/catalog/demo_models/granite-demo'), page.url());
  noProblems(page);
});

test('registry: a URL per version, search over name, description and labels, inline edits, archive by typing the name', async () => {
  const pid = process.pid;
  const name = `reg26-${pid}`;
  const rm = await registry(stack, 'POST', '/registered_models', {
    name, description: `finds the needle-${pid}`,
    customProperties: { [`tag-${pid}`]: { metadataType: 'MetadataStringValue', string_value: '' } },
  });
  const v1 = await registry(stack, 'POST', `/registered_models/${rm.id}/versions`, { name: 'v1', registeredModelId: rm.id });
  const v2 = await registry(stack, 'POST', `/registered_models/${rm.id}/versions`, { name: 'v2', registeredModelId: rm.id });
  const page = await userPage(browser, 'alice');

  // the URL of version 1 selects version 1, not the newest
  await page.goto(`${stack.url}/#/models/${rm.id}/versions/${v1.id}`);
  const detail = page.getByTestId('version-detail');
  await detail.getByRole('heading', { name: 'Version v1' }).waitFor({ timeout: T });
  assert.equal(await page.getByTestId('versions-table').getByRole('link', { name: 'v1' }).getAttribute('aria-current'), 'page');
  await page.getByTestId('versions-table').getByRole('link', { name: 'v2' }).click();
  await detail.getByRole('heading', { name: 'Version v2' }).waitFor({ timeout: T });
  assert.ok(page.url().endsWith(`#/models/${rm.id}/versions/${v2.id}`), page.url());
  await screenshot(page, 'version-page');
  await noA11yViolations(page, 'version page');

  // inline edit of the version's description, then of the model's
  await detail.getByRole('button', { name: 'Edit description of version v2' }).click();
  await detail.getByRole('textbox', { name: 'description of version v2' }).fill('the second try');
  await detail.getByRole('button', { name: 'Save' }).click();
  // the editor closes once the write is answered (its text area would match the text before)
  await detail.getByRole('button', { name: 'Edit description of version v2' }).waitFor({ timeout: T });
  await page.getByTestId('version-description').getByText('the second try').waitFor({ timeout: T });
  assert.equal((await registry(stack, 'GET', `/model_versions/${v2.id}`)).description, 'the second try');
  await page.getByRole('button', { name: `Edit description of model ${name}` }).click();
  await page.getByRole('textbox', { name: `description of model ${name}` }).fill(`edited in the browser, needle-${pid}`);
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('button', { name: `Edit description of model ${name}` }).waitFor({ timeout: T });
  await page.getByTestId('model-description').getByText(`edited in the browser, needle-${pid}`).waitFor({ timeout: T });
  assert.equal((await registry(stack, 'GET', `/registered_models/${rm.id}`)).description, `edited in the browser, needle-${pid}`);

  // someone else changes it while the editor is open: nothing is overwritten, and the user is told
  await page.getByRole('button', { name: `Edit description of model ${name}` }).click();
  await new Promise((r) => setTimeout(r, 20));
  await registry(stack, 'PATCH', `/registered_models/${rm.id}`, { description: 'changed by bob' });
  await page.getByRole('textbox', { name: `description of model ${name}` }).fill('alice overwrites');
  await page.getByRole('button', { name: 'Save' }).click();
  const err = page.getByTestId('edit-error');
  await err.waitFor({ timeout: T });
  assert.match(await err.innerText(), /changed by someone else .* nothing was saved/);
  assert.equal((await registry(stack, 'GET', `/registered_models/${rm.id}`)).description, 'changed by bob');
  await screenshot(page, 'edit-conflict');
  await noA11yViolations(page, 'model page (edit conflict)');
  await page.getByRole('button', { name: 'Cancel' }).click();

  // search: by a word of the description, by a label (a custom property with an empty value)
  for (const q of ['BY BOB', `tag-${pid}`]) {
    await page.goto(`${stack.url}/#/models?q=${encodeURIComponent(q)}`);
    await page.getByTestId('models-table').getByRole('link', { name }).waitFor({ timeout: T });
  }
  await page.getByTestId('models-table').getByText(`tag-${pid}`).waitFor({ timeout: T });
  await screenshot(page, 'models-search-label');
  await noA11yViolations(page, 'registered models (label search)');

  // labels: add one, refuse a duplicate in words, remove one
  await page.getByRole('link', { name }).click();
  const labels = page.getByTestId('labels').first();
  await labels.getByRole('button', { name: `Add label to model ${name}` }).click();
  await labels.getByRole('textbox', { name: `New label of model ${name}` }).fill(`fresh-${pid}`);
  await labels.getByRole('button', { name: 'Add', exact: true }).click();
  await labels.getByText(`fresh-${pid}`).waitFor({ timeout: T });
  await labels.getByRole('button', { name: `Add label to model ${name}` }).click();
  await labels.getByRole('textbox', { name: `New label of model ${name}` }).fill(`tag-${pid}`);
  await labels.getByRole('button', { name: 'Add', exact: true }).click();
  assert.match(await page.getByTestId('labels-error').innerText(), new RegExp(`already has the label tag-${pid}`));
  await labels.getByRole('button', { name: 'Cancel' }).click();
  await labels.getByRole('button', { name: `Remove label tag-${pid}` }).click();
  await waitFor('the label removed', async () => (await labels.getByText(`tag-${pid}`).count()) === 0, T);
  const props = (await registry(stack, 'GET', `/registered_models/${rm.id}`)).customProperties;
  assert.deepEqual(Object.keys(props), [`fresh-${pid}`]);
  await screenshot(page, 'model-labels');

  // archive: only after typing the name
  await page.getByRole('button', { name: 'Archive model' }).click();
  const confirm = page.getByRole('button', { name: 'Archive', exact: true });
  assert.equal(await confirm.isDisabled(), true);
  await page.getByLabel(`Type the model name, ${name}, to confirm`).fill(`${name}x`);
  assert.equal(await confirm.isDisabled(), true);
  await screenshot(page, 'archive-confirm');
  await noA11yViolations(page, 'archive dialog');
  await page.getByLabel(`Type the model name, ${name}, to confirm`).fill(name);
  await confirm.click();
  await page.getByRole('button', { name: 'Restore model' }).waitFor({ timeout: T });
  assert.equal((await registry(stack, 'GET', `/registered_models/${rm.id}`)).state, 'ARCHIVED');
  // the archive view lists it
  await page.goto(`${stack.url}/#/models`);
  await page.getByRole('link', { name: 'View archived models' }).click();
  await page.getByRole('heading', { name: 'Archived models', level: 1 }).waitFor({ timeout: T });
  await page.getByRole('link', { name }).waitFor({ timeout: T });
  await noA11yViolations(page, 'archived models');
  noProblems(page);
});

test('register a catalog model: the form is filled from the catalog, the artifact records where it came from, the version links back', async () => {
  const page = await userPage(browser, 'alice');
  const name = `granite-demo-${process.pid}`;
  await page.goto(`${stack.url}/#/catalog/demo_models/granite-demo`);
  await page.getByTestId('catalog-model-name').filter({ hasText: 'granite-demo' }).waitFor({ timeout: T });
  await page.locator('table[aria-label="Artifacts"]').getByText('oci://registry.example.com/demo/granite-demo:1.0').waitFor({ timeout: T });
  await page.getByRole('button', { name: 'Register model' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText('From the catalog: granite-demo (source demo_models)').waitFor({ timeout: T });
  assert.equal(await dialog.getByLabel('Model name').inputValue(), 'granite-demo');
  assert.equal(await dialog.getByLabel('Description').inputValue(), 'A demo text model under Apache 2.0.');
  assert.equal(await dialog.getByLabel('Model artifact URI').inputValue(), 'oci://registry.example.com/demo/granite-demo:1.0');
  assert.equal(await dialog.getByLabel('Version name').inputValue(), 'v1');
  await screenshot(page, 'register-from-catalog');
  await noA11yViolations(page, 'register from the catalog');
  await dialog.getByLabel('Model name').fill(name);
  await dialog.getByRole('button', { name: 'Register', exact: true }).click();

  // the new version's page says where it came from, and links back
  await page.getByTestId('model-name').filter({ hasText: name }).waitFor({ timeout: T });
  const from = page.getByTestId('provenance');
  await from.waitFor({ timeout: T });
  assert.match(await from.innerText(), /^Registered from granite-demo/);
  assert.match(page.url(), /#\/models\/\d+\/versions\/\d+$/);
  await screenshot(page, 'version-from-catalog');
  await noA11yViolations(page, 'version registered from the catalog');
  const [, modelId, versionId] = /#\/models\/(\d+)\/versions\/(\d+)$/.exec(page.url());
  const arts = await registry(stack, 'GET', `/model_versions/${versionId}/artifacts`);
  const a = arts.items[0];
  assert.equal(a.uri, 'oci://registry.example.com/demo/granite-demo:1.0');
  assert.equal(a.modelSourceKind, 'catalog');
  assert.equal(a.modelSourceClass, 'demo_models');
  assert.equal(a.modelSourceName, 'granite-demo');
  // the catalog model's tasks became labels of the registered model
  const rm = await registry(stack, 'GET', `/registered_models/${modelId}`);
  assert.deepEqual(rm.customProperties['text-generation'], { metadataType: 'MetadataStringValue', string_value: '' });
  await from.getByRole('link').click();
  await page.getByTestId('catalog-model-name').filter({ hasText: 'granite-demo' }).waitFor({ timeout: T });
  noProblems(page);
});

test('register and deploy from the catalog: the form from the catalog, then the new version\'s Deploy dialog at once', async () => {
  const page = await userPage(browser, 'alice');
  const name = `granite-deploy-${process.pid}`;
  await page.goto(`${stack.url}/#/catalog/demo_models/granite-demo`);
  await page.getByTestId('catalog-model-name').filter({ hasText: 'granite-demo' }).waitFor({ timeout: T });
  await page.getByRole('button', { name: 'Register and deploy' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText('From the catalog: granite-demo (source demo_models)').waitFor({ timeout: T });
  await dialog.getByLabel('Model name').fill(name);
  await dialog.getByRole('button', { name: 'Register', exact: true }).click();
  // the version page, its Deploy dialog open for the new version; the URL keeps no flag
  await page.getByRole('dialog').getByText(`Deploy ${name} / v1`).waitFor({ timeout: T });
  assert.match(page.url(), /#\/models\/\d+\/versions\/\d+$/);
  await screenshot(page, 'register-and-deploy');
  await noA11yViolations(page, 'register and deploy: the deploy dialog');
  const [, modelId, versionId] = /#\/models\/(\d+)\/versions\/(\d+)$/.exec(page.url());
  const arts = await registry(stack, 'GET', `/model_versions/${versionId}/artifacts`);
  assert.equal(arts.items[0].modelSourceName, 'granite-demo');
  assert.equal((await registry(stack, 'GET', `/registered_models/${modelId}`)).name, name);
  // closed, and the page reloaded: the dialog does not open again
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await page.reload();
  await page.getByTestId('version-detail').getByRole('heading', { name: 'Version v1' }).waitFor({ timeout: T });
  assert.equal(await page.getByRole('dialog').count(), 0, 'the deploy dialog opened again after a reload');
  noProblems(page);
});

test('the catalog page number is in the URL too: a reload of page 2 shows page 2', async () => {
  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/catalog?source=paging_models`);
  const table = page.getByTestId('catalog-models');
  const names = () => table.getByRole('link').allInnerTexts();
  await table.getByRole('link', { name: 'zz-paging-00' }).waitFor({ timeout: T });
  assert.equal((await names()).length, 20);
  await page.getByRole('button', { name: 'Next page' }).click();
  await table.getByRole('link', { name: 'zz-paging-20' }).waitFor({ timeout: T });
  await waitFor('page 2 in the URL', () => /[?&]page=2(&|$)/.test(page.url()), T);
  await page.reload();
  await table.getByRole('link', { name: 'zz-paging-24' }).waitFor({ timeout: T });
  assert.deepEqual(await names(), ['zz-paging-20', 'zz-paging-21', 'zz-paging-22', 'zz-paging-23', 'zz-paging-24']);
  assert.equal(await page.getByTestId('page-number').innerText(), 'Page 2');
  assert.equal(await page.getByRole('combobox', { name: 'Source' }).inputValue(), 'paging_models');
  await page.getByRole('button', { name: 'Previous page' }).click();
  await table.getByRole('link', { name: 'zz-paging-00' }).waitFor({ timeout: T });
  await waitFor('page 1: no page in the URL', () => !/page=/.test(page.url()), T);
  noProblems(page);
});

// Issue 26 item 4: MCP servers and their tools (upstream's MCP catalog).
test('MCP servers: each with its labels and tools, a search in the URL', async () => {
  const page = await userPage(browser, 'alice');
  await page.goto(`${stack.url}/#/mcp`);
  await page.getByRole('heading', { name: 'MCP servers', level: 1 }).waitFor({ timeout: T });
  const servers = page.getByTestId('mcp-server');
  await page.getByRole('heading', { name: 'demo-search', level: 2 }).waitFor({ timeout: T });
  assert.equal(await servers.count(), 2);
  const search = page.getByRole('region', { name: 'MCP server demo-search' });
  await search.getByText('verified source').waitFor({ timeout: T });
  await search.getByRole('button', { name: 'Tools (2)' }).click();
  const tools = search.getByRole('grid', { name: 'Tools of demo-search' });
  await tools.getByText('Fetch one document').waitFor({ timeout: T });
  assert.deepEqual(await tools.locator('tbody tr td:first-child').allInnerTexts(), ['search', 'fetch']);
  await screenshot(page, 'mcp-servers');
  await noA11yViolations(page, 'MCP servers');

  await page.getByLabel('Search MCP servers').fill('deploy');
  await waitFor('the search in the URL', () => page.url().includes('#/mcp?q=deploy'), T);
  await waitFor('only demo-deploy', async () => (await servers.count()) === 1 && (await servers.locator('h2').innerText()) === 'demo-deploy', T);
  await page.reload();
  await page.getByRole('heading', { name: 'demo-deploy', level: 2 }).waitFor({ timeout: T });
  assert.equal(await servers.count(), 1);
  noProblems(page);
});
