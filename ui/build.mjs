// Builds the console into dist/: esbuild bundle with one lazily loaded chunk per screen, hashed
// file names, index.html (no inline script or style: the server's CSP forbids them), a .gz
// sibling of every text file, and the gzip size of the first screen's JavaScript against its
// budget (exit 1 over budget).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
const BUDGET_KB = 400;
const FIRST_SCREEN = 'src/screens/RegisteredModels.tsx';

rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, 'assets'), { recursive: true });

const common = {
  absWorkingDir: here,
  bundle: true,
  minify: true,
  target: ['es2020', 'chrome100'],
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  assetNames: '[name]-[hash]',
  legalComments: 'linked',
  logLevel: 'warning',
};

// All CSS, of every screen, as one stylesheet: a pass without splitting whose JS is dropped
// (esbuild does not load the CSS of lazily imported chunks by itself).
const cssPass = await build({
  ...common,
  entryPoints: ['src/main.tsx'],
  format: 'esm',
  outdir: 'dist/assets',
  entryNames: 'app-[hash]',
  loader: { '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.svg': 'file', '.png': 'file', '.jpg': 'file' },
  metafile: true,
});
let cssOut;
for (const [o, m] of Object.entries(cssPass.metafile.outputs)) {
  if (o.endsWith('.js') || o.endsWith('.LEGAL.txt')) rmSync(join(here, o), { force: true });
  if (m.entryPoint === 'src/main.tsx' && m.cssBundle) cssOut = m.cssBundle;
}

const result = await build({
  ...common,
  entryPoints: ['src/main.tsx'],
  splitting: true,
  format: 'esm',
  outdir: 'dist/assets',
  entryNames: '[name]-[hash]',
  chunkNames: '[name]-[hash]',
  loader: { '.css': 'empty' },
  metafile: true,
});

const outputs = result.metafile.outputs;
const rel = (p) => relative('dist', p);
const entryOut = Object.keys(outputs).find((o) => outputs[o].entryPoint === 'src/main.tsx' && o.endsWith('.js'));
const screenOut = Object.keys(outputs).find((o) => outputs[o].entryPoint === FIRST_SCREEN && o.endsWith('.js'));
if (!entryOut || !screenOut) throw new Error('build: entry or first-screen chunk not found in the metafile');

// the static-import closure of the given outputs
function closure(roots) {
  const seen = new Set();
  const todo = [...roots];
  while (todo.length) {
    const o = todo.pop();
    if (seen.has(o)) continue;
    seen.add(o);
    for (const imp of outputs[o].imports) if (imp.kind === 'import-statement' && outputs[imp.path]) todo.push(imp.path);
  }
  return seen;
}

const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>modelplane</title>
    <link rel="icon" type="image/svg+xml" href="./favicon.svg" />
    ${cssOut ? `<link rel="stylesheet" href="./${rel(cssOut)}" />` : ''}
    <script type="module" src="./${rel(entryOut)}"></script>
  </head>
  <body>
    <noscript>The modelplane console needs JavaScript.</noscript>
    <div id="root"></div>
  </body>
</html>
`;
writeFileSync(join(dist, 'index.html'), html);
copyFileSync(join(here, 'src/favicon.svg'), join(dist, 'favicon.svg'));

// .gz siblings, and sizes
const gz = new Map();
function walk(d) {
  for (const n of readdirSync(d)) {
    const p = join(d, n);
    if (statSync(p).isDirectory()) walk(p);
    else if (/\.(js|css|html|svg|json|txt)$/.test(n)) {
      const z = gzipSync(readFileSync(p), { level: 9 });
      writeFileSync(p + '.gz', z);
      gz.set(relative(here, p), z.length);
    }
  }
}
walk(dist);

const kb = (n) => (n / 1024).toFixed(1);
const first = closure([entryOut, screenOut]);
let firstJs = 0;
for (const o of first) firstJs += gz.get(o) ?? 0;
let allJs = 0;
for (const [p, n] of gz) if (p.endsWith('.js')) allJs += n;
const cssGz = cssOut ? gz.get(cssOut) : 0;
console.log(`ui build: ${Object.keys(outputs).filter((o) => o.endsWith('.js')).length} JS files, all JS ${kb(allJs)} KB gzip, CSS ${kb(cssGz)} KB gzip`);
console.log(`ui build: first screen (registered models) JS ${kb(firstJs)} KB gzip in ${first.size} files (budget ${BUDGET_KB} KB)`);
const stamp = createHash('sha256').update(html).digest('hex').slice(0, 16);
writeFileSync(join(dist, 'build-info.json'), JSON.stringify({ firstScreenJsGzipBytes: firstJs, allJsGzipBytes: allJs, cssGzipBytes: cssGz, html: stamp }, null, 2) + '\n');
if (firstJs > BUDGET_KB * 1024) {
  console.error(`ui build: the first screen's JS is over its budget of ${BUDGET_KB} KB gzip`);
  process.exit(1);
}
