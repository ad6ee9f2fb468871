// A catalog model's performance data (docs/catalog.md, "Performance artifacts"): the filters of
// the hardware configuration table, in the URL and as the query of the catalog's
// .../artifacts/performance endpoint, and the table's rows from the catalog's answer. Pure: the
// catalog server computes replicas, total RPS and the recommendations; nothing here recomputes them.

import { filterLiteral } from './format';
import type { CatalogArtifact } from './types';

export const LATENCY_METRICS = [
  { key: 'ttft', label: 'TTFT', what: 'time to first token' },
  { key: 'e2e', label: 'E2E', what: 'end-to-end request latency' },
  { key: 'itl', label: 'ITL', what: 'inter-token latency' },
] as const;

export const PERCENTILES = [
  { key: 'mean', label: 'Mean' },
  { key: 'p90', label: 'P90' },
  { key: 'p95', label: 'P95' },
  { key: 'p99', label: 'P99' },
] as const;

export type LatencyMetric = (typeof LATENCY_METRICS)[number]['key'];
export type Percentile = (typeof PERCENTILES)[number]['key'];

/** The catalog's default latencyProperty (src/catalog/performance.h), and the table's default. */
export const DEFAULT_LATENCY = 'ttft_p90';

/**
 * The performance filters of a catalog model page, as the URL holds them:
 * workload=chatbot&hardware=H100&latency=e2e_p95&maxLatency=9000&rps=20&all=1. Every field is a
 * valid value or absent.
 */
export interface PerfFilters {
  /** workload type (the artifacts' use_case string, upstream's "workload type") */
  workload?: string;
  /** hardware type (the artifacts' hardware_type string) */
  hardware?: string;
  /** latency property, `<metric>_<percentile>` */
  latency?: string;
  /** the latency property's maximum in ms (a positive number, as written) */
  maxLatency?: string;
  /** target requests per second: the catalog's targetRPS (a positive int32, as written) */
  rps?: string;
  /** every benchmark, not only the catalog's recommendations */
  all?: boolean;
}

const LATENCY_RE = /^(ttft|e2e|itl)_(mean|p90|p95|p99)$/;

export function isLatencyProperty(s: string): boolean {
  return LATENCY_RE.test(s);
}

/** A positive decimal number as typed ("120", "41.5"); not "1e3", not "0", not "-1". */
export function isPositiveNumber(s: string): boolean {
  return /^\d+(\.\d+)?$/.test(s) && Number(s) > 0 && Number.isFinite(Number(s));
}

/** A target RPS the catalog takes: an integer from 1 to 2^31-1 (its targetRPS is an int32). */
export function isTargetRps(s: string): boolean {
  return /^\d{1,10}$/.test(s) && Number(s) >= 1 && Number(s) <= 2147483647;
}

/** The filters of the URL's parameters; a value that is not valid is left out. */
export function parsePerfFilters(params: URLSearchParams): PerfFilters {
  const f: PerfFilters = {};
  const wl = params.get('workload');
  if (wl) f.workload = wl;
  const hw = params.get('hardware');
  if (hw) f.hardware = hw;
  const lat = params.get('latency') ?? '';
  if (isLatencyProperty(lat)) f.latency = lat;
  const max = params.get('maxLatency') ?? '';
  if (isPositiveNumber(max)) f.maxLatency = max;
  const rps = params.get('rps') ?? '';
  if (isTargetRps(rps)) f.rps = rps;
  if (params.get('all') === '1') f.all = true;
  return f;
}

/** The URL's parameters of the filters, in one order (unset ones absent). */
export function perfFilterParams(f: PerfFilters): Record<string, string | undefined> {
  return {
    workload: f.workload || undefined,
    hardware: f.hardware || undefined,
    latency: f.latency || undefined,
    maxLatency: f.maxLatency || undefined,
    rps: f.rps || undefined,
    all: f.all ? '1' : undefined,
  };
}

/** The latency property the table shows and the catalog ranks by. */
export function latencyOf(f: PerfFilters): string {
  return f.latency ?? DEFAULT_LATENCY;
}

export function splitLatency(prop: string): { metric: LatencyMetric; percentile: Percentile } {
  const m = LATENCY_RE.exec(prop) ?? LATENCY_RE.exec(DEFAULT_LATENCY)!;
  return { metric: m[1] as LatencyMetric, percentile: m[2] as Percentile };
}

/** "TTFT P90", "E2E Mean". */
export function latencyLabel(prop: string): string {
  const { metric, percentile } = splitLatency(prop);
  const ml = LATENCY_METRICS.find((x) => x.key === metric)!.label;
  const pl = PERCENTILES.find((x) => x.key === percentile)!.label;
  return `${ml} ${pl}`;
}

/**
 * The query of GET .../performance_artifacts/{name} for the filters, as docs/catalog.md
 * documents it: the workload, the hardware type and the latency maximum as a filterQuery over the artifacts'
 * custom properties, targetRPS, latencyProperty (the catalog's recommendations rank by it),
 * recommendations=true unless every benchmark is asked for, and the rows ordered by the table's
 * latency, fastest first (those without it last).
 */
export function perfQuery(f: PerfFilters, pageSize = 100): Record<string, string | undefined> {
  const clauses: string[] = [];
  if (f.workload) clauses.push(`use_case.string_value = ${filterLiteral(f.workload)}`);
  if (f.hardware) clauses.push(`hardware_type.string_value = ${filterLiteral(f.hardware)}`);
  if (f.maxLatency) clauses.push(`${latencyOf(f)}.double_value <= ${f.maxLatency}`);
  return {
    filterQuery: clauses.length ? clauses.join(' AND ') : undefined,
    targetRPS: f.rps,
    latencyProperty: f.latency,
    recommendations: f.all ? undefined : 'true',
    orderBy: `${latencyOf(f)}.double_value`,
    sortOrder: 'ASC',
    pageSize: String(pageSize),
  };
}

/** One filter chip per set filter: category and label (the "all" switch is not a filter). */
export type PerfChipKey = 'workload' | 'hardware' | 'latency' | 'rps';

export function perfChips(f: PerfFilters): { key: PerfChipKey; category: string; label: string }[] {
  const chips: { key: PerfChipKey; category: string; label: string }[] = [];
  if (f.workload) chips.push({ key: 'workload', category: 'Workload', label: f.workload });
  if (f.hardware) chips.push({ key: 'hardware', category: 'Hardware', label: f.hardware });
  if (f.latency || f.maxLatency) chips.push({ key: 'latency', category: 'Latency', label: f.maxLatency ? `${latencyLabel(latencyOf(f))} ≤ ${f.maxLatency} ms` : latencyLabel(latencyOf(f)) });
  if (f.rps) chips.push({ key: 'rps', category: 'Target RPS', label: `${f.rps} requests/s` });
  return chips;
}

type MV = { metadataType?: string; string_value?: string; int_value?: string | number; double_value?: number };

function prop(a: CatalogArtifact, key: string): MV | undefined {
  const v = a.customProperties?.[key] as MV | undefined;
  return v && typeof v === 'object' ? v : undefined;
}

function num(a: CatalogArtifact, key: string): number | undefined {
  const v = prop(a, key);
  if (!v) return undefined;
  const n = v.double_value ?? (v.int_value !== undefined ? Number(v.int_value) : undefined);
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

function str(a: CatalogArtifact, key: string): string | undefined {
  const v = prop(a, key)?.string_value;
  return v === undefined || v === '' ? undefined : v;
}

/** One row of the hardware configuration table: one benchmark of one hardware configuration. */
export interface PerfRow {
  key: string;
  /** "H100 × 2"; "—" when the artifact names no hardware */
  hardware: string;
  workload?: string;
  /** from the catalog's targetRPS computation (absent without one) */
  replicas?: number;
  rps?: number;
  totalRps?: number;
  /** every latency (and tps) property the artifact has, by name */
  figures: Record<string, number>;
  inputTokens?: number;
  outputTokens?: number;
  framework?: string;
}

const FIGURE_RE = /^(ttft|e2e|itl|tps)_(mean|p90|p95|p99)$/;

/** The table's rows, in the catalog's order. */
export function perfRows(items: CatalogArtifact[]): PerfRow[] {
  return items.map((a, i) => {
    const type = str(a, 'hardware_type');
    const count = num(a, 'hardware_count');
    const figures: Record<string, number> = {};
    for (const k of Object.keys(a.customProperties ?? {})) {
      if (!FIGURE_RE.test(k)) continue;
      const n = num(a, k);
      if (n !== undefined) figures[k] = n;
    }
    const fw = [str(a, 'framework_type'), str(a, 'framework_version')].filter(Boolean).join(' ');
    return {
      key: str(a, 'config_id') ?? (a as { id?: string }).id ?? String(i),
      hardware: type ? (count !== undefined ? `${type} × ${count}` : type) : count !== undefined ? `${count} × ?` : '—',
      workload: str(a, 'use_case'),
      replicas: num(a, 'replicas'),
      rps: num(a, 'requests_per_second'),
      totalRps: num(a, 'total_requests_per_second'),
      figures,
      inputTokens: num(a, 'mean_input_tokens'),
      outputTokens: num(a, 'mean_output_tokens'),
      framework: fw || undefined,
    };
  });
}

/**
 * The figure columns of the table: TTFT, E2E, ITL (ms) and TPS at the percentile of the chosen
 * latency, each only when some row has it; the chosen latency first.
 */
export function figureColumns(rows: PerfRow[], latency: string): { key: string; label: string; unit: string }[] {
  const { metric, percentile } = splitLatency(latency);
  const metrics: string[] = [metric, ...['ttft', 'e2e', 'itl', 'tps'].filter((m) => m !== metric)];
  const pl = PERCENTILES.find((x) => x.key === percentile)!.label;
  return metrics
    .map((m) => ({ key: `${m}_${percentile}`, label: `${m === 'tps' ? 'TPS' : m.toUpperCase()} ${pl}`, unit: m === 'tps' ? 'tokens/s' : 'ms' }))
    .filter((c) => rows.some((r) => r.figures[c.key] !== undefined));
}

/** A figure as the table shows it: at most 2 decimals, "—" when absent. */
export function figure(n: number | undefined): string {
  if (n === undefined) return '—';
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100);
}
