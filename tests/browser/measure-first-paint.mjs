// Measures, in Debian's chromium, the time to first meaningful paint of the registered-models
// screen with 10,000 models in the registry (the moment the first page of the list is rendered,
// a performance mark of the console), and the bytes of the list answers: one page, never the
// whole list. Prints the figures; asserts nothing about time.
//
//   scripts/ui-build && scripts/with-testenv env MODELPLANE_SOURCE_ROOT=$PWD \
//     MODELPLANE_BIN=build/src/cmd/modelplane node tests/browser/measure-first-paint.mjs [N]
import { Stack, registry } from './stack.mjs';
import { launch, screenshot, userPage } from './browser.mjs';

const N = Number(process.argv[2] || 10000);
const RUNS = 5;
const stack = new Stack();
try {
  await stack.start();
  const t0 = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < N) {
      const i = next++;
      await registry(stack, 'POST', '/registered_models', { name: `scale-model-${String(i).padStart(5, '0')}`, description: `model ${i} of ${N}`, owner: 'bench' });
    }
  }));
  console.log(`seeded ${N} registered models in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const browser = await launch();
  const figures = [];
  for (let r = 0; r < RUNS; r++) {
    const page = await userPage(browser, 'alice');
    let apiBytes = 0;
    page.on('response', async (res) => {
      if (res.url().includes('/registered_models')) apiBytes += (await res.body()).length;
    });
    await page.goto(`${stack.url}/#/models`);
    await page.getByTestId('models-table').waitFor({ timeout: 120_000 });
    const m = await page.evaluate(() => {
      const mark = performance.getEntriesByName('modelplane:registered-models-listed')[0];
      const fcp = performance.getEntriesByName('first-contentful-paint')[0];
      return { listed: mark ? mark.startTime : null, fcp: fcp ? fcp.startTime : null, rows: document.querySelectorAll('[data-testid=models-table] tbody tr').length };
    });
    figures.push({ ...m, apiBytes });
    if (r === 0) await screenshot(page, 'registered-models-10000');
    await page.context().close();
  }
  await browser.close();
  const med = (k) => figures.map((f) => f[k]).sort((a, b) => a - b)[Math.floor(figures.length / 2)];
  console.log(`registered models screen, ${N} models, ${RUNS} cold loads: first meaningful paint (list rendered) median ${med('listed').toFixed(0)} ms ` +
    `(runs ${figures.map((f) => f.listed.toFixed(0)).join(', ')}), first contentful paint median ${med('fcp').toFixed(0)} ms, ` +
    `${figures[0].rows} rows shown, list answers ${figures[0].apiBytes} bytes`);
} finally {
  await stack.stop();
}
