// Hash routes of the console ("#/models/3"): parse and build. Pure.
import { parsePerfFilters, perfFilterParams, type PerfFilters } from './performance';

export type Route =
  | { screen: 'models'; q: string; state: '' | 'LIVE' | 'ARCHIVED'; sort: string; owner: string }
  | { screen: 'model'; id: string; version?: string; deploy?: true }
  | { screen: 'catalog'; source: string; q: string; filters: CatalogFilters; page: number; view?: CatalogView }
  | { screen: 'catalogModel'; source: string; name: string; perf?: PerfFilters }
  | { screen: 'mcp'; q: string }
  | { screen: 'deployments'; ns: string }
  | { screen: 'transfers'; ns: string }
  | { screen: 'isvc'; ns: string; name: string }
  | { screen: 'settings' }
  | { screen: 'catalogSources' }
  | { screen: 'permissions'; ns: string; name: string }
  | { screen: 'notFound'; path: string };

/** The catalog's curated filters: URL parameter, the filter_options key it filters, its label. */
export const CATALOG_FILTERS = [
  { param: 'task', key: 'tasks', label: 'Task' },
  { param: 'provider', key: 'provider', label: 'Provider' },
  { param: 'license', key: 'license', label: 'License' },
  { param: 'language', key: 'language', label: 'Language' },
] as const;

/** How the catalog lists its models: cards (the default, no URL parameter) or a table. */
export type CatalogView = 'cards' | 'table';

export type CatalogFilterParam = (typeof CATALOG_FILTERS)[number]['param'];
export type CatalogFilters = Partial<Record<CatalogFilterParam, string>>;

function dec(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export function parseRoute(hash: string): Route {
  const h = hash.replace(/^#/, '');
  const qi = h.indexOf('?');
  const path = qi >= 0 ? h.slice(0, qi) : h;
  const params = new URLSearchParams(qi >= 0 ? h.slice(qi + 1) : '');
  const seg = path.split('/').filter((s) => s !== '').map(dec);
  if (seg.length === 0 || (seg[0] === 'models' && seg.length === 1)) {
    const st = params.get('state');
    return { screen: 'models', q: params.get('q') ?? '', state: st === 'LIVE' || st === 'ARCHIVED' ? st : '', sort: params.get('sort') ?? '', owner: params.get('owner') ?? '' };
  }
  if (seg[0] === 'models' && seg.length === 2) return { screen: 'model', id: seg[1] };
  if (seg[0] === 'models' && seg.length === 4 && seg[2] === 'versions') return params.get('deploy') === '1' ? { screen: 'model', id: seg[1], version: seg[3], deploy: true } : { screen: 'model', id: seg[1], version: seg[3] };
  if (seg[0] === 'catalog' && seg.length === 1) {
    const filters: CatalogFilters = {};
    for (const f of CATALOG_FILTERS) {
      const v = params.get(f.param);
      if (v) filters[f.param] = v;
    }
    const page = Number(params.get('page') ?? '1');
    const r: Extract<Route, { screen: 'catalog' }> = { screen: 'catalog', source: params.get('source') ?? '', q: params.get('q') ?? '', filters, page: Number.isInteger(page) && page > 1 ? page : 1 };
    if (params.get('view') === 'table') r.view = 'table';
    return r;
  }
  if (seg[0] === 'catalog' && seg.length >= 3) return { screen: 'catalogModel', source: seg[1], name: seg.slice(2).join('/'), perf: parsePerfFilters(params) };
  if (seg[0] === 'mcp' && seg.length === 1) return { screen: 'mcp', q: params.get('q') ?? '' };
  if (seg[0] === 'deployments' && seg.length <= 2) return { screen: 'deployments', ns: seg[1] ?? '' };
  if (seg[0] === 'transfers' && seg.length <= 2) return { screen: 'transfers', ns: seg[1] ?? '' };
  if (seg[0] === 'deployments' && seg.length === 3) return { screen: 'isvc', ns: seg[1], name: seg[2] };
  if (seg[0] === 'settings' && seg.length === 1) return { screen: 'settings' };
  if (seg[0] === 'settings' && seg.length === 2 && seg[1] === 'catalog') return { screen: 'catalogSources' };
  if (seg[0] === 'settings' && seg.length === 4 && seg[1] === 'registries') return { screen: 'permissions', ns: seg[2], name: seg[3] };
  return { screen: 'notFound', path: '/' + seg.join('/') };
}

function qs(p: Record<string, string | undefined>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(p)) if (v) u.set(k, v);
  const s = u.toString();
  return s ? `?${s}` : '';
}

const enc = (s: string) => encodeURIComponent(s);

export function href(r: Route): string {
  switch (r.screen) {
    case 'models':
      return `#/models${qs({ q: r.q, state: r.state, sort: r.sort, owner: r.owner })}`;
    case 'model':
      return r.version ? `#/models/${enc(r.id)}/versions/${enc(r.version)}${r.deploy ? '?deploy=1' : ''}` : `#/models/${enc(r.id)}`;
    case 'catalog':
      return `#/catalog${qs({ source: r.source, q: r.q, ...Object.fromEntries(CATALOG_FILTERS.map((f) => [f.param, r.filters[f.param]])), page: r.page > 1 ? String(r.page) : '', view: r.view === 'table' ? 'table' : '' })}`;
    case 'catalogModel':
      return `#/catalog/${enc(r.source)}/${r.name.split('/').map(enc).join('/')}${qs(perfFilterParams(r.perf ?? {}))}`;
    case 'mcp':
      return `#/mcp${qs({ q: r.q })}`;
    case 'deployments':
      return r.ns ? `#/deployments/${enc(r.ns)}` : '#/deployments';
    case 'transfers':
      return r.ns ? `#/transfers/${enc(r.ns)}` : '#/transfers';
    case 'isvc':
      return `#/deployments/${enc(r.ns)}/${enc(r.name)}`;
    case 'settings':
      return '#/settings';
    case 'catalogSources':
      return '#/settings/catalog';
    case 'permissions':
      return `#/settings/registries/${enc(r.ns)}/${enc(r.name)}`;
    case 'notFound':
      return `#${r.path}`;
  }
}
