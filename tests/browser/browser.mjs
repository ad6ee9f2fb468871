// Debian's chromium driven by playwright-core (never a downloaded browser), axe-core injected
// into the page, and screenshots under the build directory.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const require = createRequire(join(process.env.MODELPLANE_SOURCE_ROOT, 'ui/package.json'));
const { chromium } = require('playwright-core');
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export const CHROMIUM = process.env.MODELPLANE_CHROMIUM || '/usr/bin/chromium';
export const ARTIFACTS = process.env.MODELPLANE_BROWSER_ARTIFACTS || join(process.env.MODELPLANE_BUILD_ROOT || '.', 'browser-artifacts');

export async function launch() {
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

/**
 * A page as the given user (the auth proxy's kubeflow-userid header), collecting console
 * errors and CSP violations so that a test can assert there were none.
 */
export async function userPage(browser, user, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ extraHTTPHeaders: user ? { 'kubeflow-userid': user } : {}, viewport });
  const page = await context.newPage();
  page.problems = [];
  page.on('console', (m) => {
    // answers with an error status are asserted on screen; the rest (CSP refusals, exceptions) is a problem
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of [45]\d\d/.test(m.text())) page.problems.push(m.text());
  });
  page.on('pageerror', (e) => page.problems.push(`page error: ${e.message}`));
  return page;
}

/** Runs axe-core in the page; returns the serious and critical violations. */
export async function axe(page) {
  // evaluated through the DevTools protocol, which the page's CSP does not govern
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(axeSource);
  const res = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  return res.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Asserts that axe finds no serious or critical violation on the page (named in the message). */
export async function noA11yViolations(page, screen) {
  const v = await axe(page);
  assert.deepEqual(v, [], `axe: serious/critical violations on ${screen}: ${JSON.stringify(v, null, 1)}`);
}

export async function screenshot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}
