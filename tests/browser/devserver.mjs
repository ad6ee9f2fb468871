// A development server for the console without `modelplane ui`: serves ui/dist with the same
// Content-Security-Policy, and answers the registry and catalog routes of docs/ui.md by
// forwarding them to a real `modelplane registry` and `modelplane catalog` (the {"data": ...}
// envelope added, errors as {"error": {...}}). No identity, no Kubernetes: /namespaces is
// empty. For frontend work and the smoke test only; `modelplane ui` is the server.
import http from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.woff2': 'font/woff2', '.json': 'application/json', '.txt': 'text/plain' };

function send(res, status, body, type = 'application/json') {
  res.writeHead(status, { 'Content-Type': type, 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff' });
  res.end(body);
}
const json = (res, status, v) => send(res, status, JSON.stringify(v));
const error = (res, status, message, source) => json(res, status, { error: { code: String(status), message, source } });

async function forward(res, req, url, source, body) {
  let r;
  try {
    r = await fetch(url, { method: req.method, headers: body ? { 'Content-Type': 'application/json' } : {}, body });
  } catch (e) {
    return error(res, 503, `${source} at ${new URL(url).origin} is unavailable: ${e.cause?.code ?? e.message}`, source);
  }
  const text = await r.text();
  let v;
  try {
    v = JSON.parse(text);
  } catch {
    return error(res, 502, `${source} answered ${r.status} without JSON`, source);
  }
  if (!r.ok) return error(res, r.status, v.message ?? text, source);
  return json(res, r.status, { data: v });
}

export function devServer({ dist, registryUrl, catalogUrl }) {
  return http.createServer(async (req, res) => {
    const u = new URL(req.url, 'http://localhost');
    const p = u.pathname;
    let body;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      let raw = '';
      for await (const c of req) raw += c;
      try {
        body = JSON.stringify(JSON.parse(raw).data);
      } catch {
        return error(res, 400, 'the body is not {"data": ...}', 'ui');
      }
    }
    if (p === '/api/v1/user') return json(res, 200, { data: { userId: 'dev', clusterAdmin: false, csrfToken: 'dev', authMode: 'dev' } });
    if (p === '/api/v1/namespaces') return json(res, 200, { data: [] });
    if (p === '/api/v1/model_registry') return json(res, 200, { data: [{ name: 'modelplane', displayName: 'Model registry', serverAddress: registryUrl }] });
    let m = /^\/api\/v1\/model_registry\/[^/]+\/(.*)$/.exec(p);
    if (m) {
      const rest = m[1].replace(/^model_artifact\//, 'model_artifacts/');
      return forward(res, req, `${registryUrl}/api/model_registry/v1alpha3/${rest}${u.search}`, 'model registry', body);
    }
    m = /^\/api\/v1\/model_catalog\/(.*)$/.exec(p);
    if (m) {
      let rest = m[1];
      const a = /^sources\/([^/]+)\/(artifacts|performance_artifacts)\/(.+)$/.exec(rest);
      if (a) rest = `sources/${a[1]}/models/${a[3]}/artifacts${a[2] === 'performance_artifacts' ? '/performance' : ''}`;
      return forward(res, req, `${catalogUrl}/api/model_catalog/v1alpha1/${rest}${u.search}`, 'model catalog');
    }
    m = /^\/api\/v1\/mcp_catalog\/(.*)$/.exec(p);
    if (m) {
      const rest = m[1].replace(/^mcp_servers_filter_options$/, 'mcp_servers/filter_options');
      return forward(res, req, `${catalogUrl}/api/mcp_catalog/v1alpha1/${rest}${u.search}`, 'model catalog');
    }
    if (p.startsWith('/api/')) return error(res, 404, `no route ${p}`, 'ui');
    let f = normalize(join(dist, decodeURIComponent(p)));
    if (!f.startsWith(dist) || !existsSync(f) || statSync(f).isDirectory()) f = join(dist, 'index.html');
    return send(res, 200, readFileSync(f), TYPES[extname(f)] ?? 'application/octet-stream');
  });
}
