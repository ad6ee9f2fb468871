// Pure data and formatting helpers of the console (no DOM, no fetch): unit-tested in ui/tests.

/** A registry customProperties value (MetadataValue) as one displayable row. */
export interface PropertyRow {
  key: string;
  type: string;
  value: string;
}

type MetadataValue = {
  metadataType?: string;
  string_value?: string;
  int_value?: string | number;
  double_value?: number;
  bool_value?: boolean;
  struct_value?: string;
  proto_value?: { type?: string; value?: string };
};

const TYPE_NAMES: Record<string, string> = {
  MetadataStringValue: 'string',
  MetadataIntValue: 'int',
  MetadataDoubleValue: 'double',
  MetadataBoolValue: 'bool',
  MetadataStructValue: 'struct',
  MetadataProtoValue: 'proto',
};

/** customProperties → rows sorted by key; unknown shapes are shown as their JSON. */
export function propertyRows(props: Record<string, unknown> | undefined | null): PropertyRow[] {
  if (!props || typeof props !== 'object') return [];
  return Object.keys(props)
    .sort((a, b) => a.localeCompare(b))
    .map((key) => {
      const v = props[key] as MetadataValue;
      if (!v || typeof v !== 'object') return { key, type: typeof v, value: String(v) };
      const type = TYPE_NAMES[v.metadataType ?? ''] ?? v.metadataType ?? 'unknown';
      let value: string;
      if (v.string_value !== undefined) value = v.string_value;
      else if (v.int_value !== undefined) value = String(v.int_value);
      else if (v.double_value !== undefined) value = String(v.double_value);
      else if (v.bool_value !== undefined) value = v.bool_value ? 'true' : 'false';
      else if (v.struct_value !== undefined) value = v.struct_value;
      else if (v.proto_value !== undefined) value = JSON.stringify(v.proto_value);
      else value = JSON.stringify(v);
      return { key, type, value };
    });
}

/**
 * A time as "5 min ago"-style text relative to now (both epoch ms or ISO/epoch-ms strings, as
 * the registry sends epoch milliseconds as strings and Kubernetes sends RFC 3339).
 */
export function relativeTime(when: string | number | null | undefined, now: number): string {
  const t = toEpochMs(when);
  if (t === null) return '—';
  const s = Math.round((now - t) / 1000);
  if (s < 0) return 'in the future';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export function toEpochMs(when: string | number | null | undefined): number | null {
  if (when === null || when === undefined || when === '') return null;
  if (typeof when === 'number') return Number.isFinite(when) ? when : null;
  if (/^\d+$/.test(when)) return Number(when);
  const t = Date.parse(when);
  return Number.isNaN(t) ? null : t;
}

/** Absolute UTC timestamp, "2026-12-01 15:04:05 UTC". */
export function absoluteTime(when: string | number | null | undefined): string {
  const t = toEpochMs(when);
  if (t === null) return '—';
  return new Date(t).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown' | string;
  reason?: string | null;
  message?: string | null;
  lastTransitionTime?: string | null;
  severity?: string | null;
}

export type StatusColor = 'green' | 'red' | 'orange' | 'grey';

/** The colour of one condition: True green, False red (orange when only a warning), else grey. */
export function conditionColor(c: Condition): StatusColor {
  if (c.status === 'True') return 'green';
  if (c.status === 'False') return c.severity === 'Warning' || c.severity === 'Info' ? 'orange' : 'red';
  return 'grey';
}

export interface Loaded {
  ready: number;
  total: number;
}

/** "2/3 loaded", or "—" when the agent has not reported. */
export function loadedText(l: Loaded | null | undefined): string {
  if (!l || !Number.isFinite(l.ready) || !Number.isFinite(l.total)) return '—';
  return `${l.ready}/${l.total} loaded`;
}

/**
 * One status for a TrainedModel or InferenceService: Ready, or the first not-True condition's
 * reason (e.g. "MemoryResourceUnavailable"), or "Pending" when nothing is reported yet.
 */
export function summaryStatus(ready: boolean, conditions: Condition[] | undefined): {
  label: string;
  color: StatusColor;
  message?: string;
} {
  if (ready) return { label: 'Ready', color: 'green' };
  const list = conditions ?? [];
  const bad = list.find((c) => c.type !== 'Ready' && c.status === 'False') ?? list.find((c) => c.status === 'False');
  if (bad) return { label: bad.reason || `${bad.type} false`, color: 'red', message: bad.message ?? undefined };
  const unknown = list.find((c) => c.status === 'Unknown');
  if (unknown) return { label: unknown.reason || 'Pending', color: 'grey', message: unknown.message ?? undefined };
  return { label: 'Pending', color: 'grey' };
}

/** A string literal for filterQuery: single-quoted, backslash and quote escaped. */
export function filterLiteral(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** LIKE pattern that matches s anywhere, with % and _ in s taken literally. */
export function likeContains(s: string): string {
  return `%${s.replace(/\\/g, '\\\\').replace(/[%_]/g, (m) => `\\${m}`)}%`;
}

/** The registered-models filterQuery for a search text and a state filter ('' = any). */
/** The registered model's own fields, which a filterQuery property of that name means. */
const MODEL_FIELDS = ['id', 'name', 'description', 'externalId', 'owner', 'state', 'createTimeSinceEpoch', 'lastUpdateTimeSinceEpoch'];

export function registeredModelsFilter(search: string, state: '' | 'LIVE' | 'ARCHIVED', owner = ''): string {
  const parts: string[] = [];
  const q = search.trim();
  // name and description contain it (any case), or it is one of the model's labels (upstream's
  // labels: custom properties with an empty string value)
  if (q) {
    const like = filterLiteral(likeContains(q));
    // a label is a custom property; a field's own name would compare the field instead
    const label = MODEL_FIELDS.includes(q) ? '' : ` OR ${filterProperty(q)} = ''`;
    parts.push(`(name ILIKE ${like} OR description ILIKE ${like}${label})`);
  }
  if (state) parts.push(`state = ${filterLiteral(state)}`);
  // the owner as the registry holds it (upstream's owner filter: an exact match)
  if (owner.trim()) parts.push(`owner = ${filterLiteral(owner.trim())}`);
  return parts.join(' AND ');
}

/** Byte counts as "1.5 GiB". */
export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n) || n < 0) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** The registry link labels the registry controller puts on an InferenceService. */
export const LABEL_REGISTERED_MODEL = 'modelregistry.kubeflow.org/registered-model-id';
export const LABEL_MODEL_VERSION = 'modelregistry.kubeflow.org/model-version-id';
/** set by the registry controller once it recorded the InferenceService in the registry */
export const LABEL_INFERENCE_SERVICE = 'modelregistry.kubeflow.org/inference-service-id';

export function registryLink(labels: Record<string, string> | undefined | null): {
  registeredModelId?: string;
  modelVersionId?: string;
  inferenceServiceId?: string;
} {
  if (!labels) return {};
  return {
    registeredModelId: labels[LABEL_REGISTERED_MODEL] || undefined,
    modelVersionId: labels[LABEL_MODEL_VERSION] || undefined,
    inferenceServiceId: labels[LABEL_INFERENCE_SERVICE] || undefined,
  };
}

/** A filterQuery property name: bare when it is an identifier path, else `escaped`. */
export function filterProperty(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(key) ? key : `\`${key.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

/** The catalog filterQuery for the chosen value of each filter option ('' = not filtered). */
export function catalogFilter(chosen: Record<string, string>): string {
  return Object.keys(chosen)
    .sort()
    .filter((k) => chosen[k] !== '')
    .map((k) => `${filterProperty(k)} = ${filterLiteral(chosen[k])}`)
    .join(' AND ');
}

/** Upstream's labels: the custom properties whose value is an empty string, by name. */
export function labelsOf(props: Record<string, unknown> | undefined | null): string[] {
  if (!props) return [];
  return Object.entries(props)
    .filter(([, v]) => {
      const m = v as { metadataType?: string; string_value?: string } | null;
      return !!m && m.metadataType === 'MetadataStringValue' && (m.string_value ?? '') === '';
    })
    .map(([k]) => k)
    .sort();
}

/** The colour of "n/m loaded": all green, some orange, none (of some) red, unknown grey. */
export function loadedColor(l: Loaded | null | undefined): StatusColor {
  if (!l || !Number.isFinite(l.ready) || !Number.isFinite(l.total) || l.total === 0) return 'grey';
  if (l.ready >= l.total) return 'green';
  return l.ready === 0 ? 'red' : 'orange';
}

/** The colour of one replica's state (the agent's words, docs/agent.md). */
export function replicaStateColor(state: string): StatusColor {
  if (state === 'Loaded') return 'green';
  if (state === 'FailedToLoad' || state === 'FailedToDownload') return 'red';
  if (state === 'Stale') return 'orange';
  return 'grey';
}

/** Why s is not a TrainedModel name (an RFC 1123 label, as the server checks it); null when it is. */
export function tmNameProblem(s: string): string | null {
  if (s === '') return 'A name is required.';
  if (s.length > 63) return `At most 63 characters (this one has ${s.length}).`;
  if (!/^[a-z0-9-]+$/.test(s)) return "Only lower-case letters, digits and '-'.";
  if (!/^[a-z0-9]/.test(s) || !/[a-z0-9]$/.test(s)) return 'Must start and end with a letter or digit.';
  return null;
}

/** A TrainedModel name made from a model and version name: lower-case, '-' for the rest, ≤ 63. */
export function suggestTmName(model: string, version: string): string {
  const s = `${model}-${version}`
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .slice(0, 63)
    .replace(/^-+|-+$/g, '');
  return s;
}

const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E))?$/;
const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** A Kubernetes quantity ("256Mi", "1G", "1.5e9") as a number of bytes; null when it is not one. */
export function quantityBytes(s: string): number | null {
  const m = QUANTITY.exec(s.trim());
  if (!m) return null;
  let v = Number(m[2]);
  if (m[3]) v *= BINARY[m[3]];
  else if (m[4]) v *= 10 ** Number(m[4].slice(1));
  else if (m[5]) v *= DECIMAL[m[5]];
  if (!Number.isFinite(v)) return null;
  return m[1] === '-' ? -v : v;
}

/** Why s is not the memory of a TrainedModel (a positive Kubernetes quantity); null when it is. */
export function memoryProblem(s: string): string | null {
  if (s.trim() === '') return 'The memory the model needs is required (for example 256Mi).';
  const b = quantityBytes(s);
  if (b === null) return 'Not a Kubernetes quantity: write it as 256Mi, 1Gi or 500M.';
  if (b <= 0) return 'Must be more than zero.';
  return null;
}

export interface MemoryUse {
  limit: number | null;
  assigned: number;
  assignedCount: number;
  waiting: number;
  waitingCount: number;
}

type MemoryModel = { memoryBytes?: number | null; conditions: Condition[] };

/**
 * The memory of an InferenceService's TrainedModels against its limit: those the controller
 * admitted (MemoryResourceAvailable not False) are assigned, the others wait.
 */
export function memoryUse(limit: number | null | undefined, tms: MemoryModel[]): MemoryUse {
  const u: MemoryUse = { limit: limit ?? null, assigned: 0, assignedCount: 0, waiting: 0, waitingCount: 0 };
  for (const t of tms) {
    const b = t.memoryBytes;
    if (b === null || b === undefined || !Number.isFinite(b)) continue;
    if (t.conditions.some((c) => c.type === 'MemoryResourceAvailable' && c.status === 'False')) {
      u.waiting += b;
      u.waitingCount++;
    } else {
      u.assigned += b;
      u.assignedCount++;
    }
  }
  return u;
}

/** "768.0 MiB of 2.0 GiB assigned (3 TrainedModels)" and the waiting part when there is one. */
export function memoryText(u: MemoryUse): string {
  const n = (k: number) => `${k} TrainedModel${k === 1 ? '' : 's'}`;
  let s = `${formatBytes(u.assigned)} ${u.limit !== null ? `of ${formatBytes(u.limit)} ` : ''}assigned (${n(u.assignedCount)})`;
  if (u.waitingCount > 0) s += `; ${formatBytes(u.waiting)} waiting for room (${n(u.waitingCount)})`;
  return s;
}

/** Where a model artifact's files are, as upstream's register form takes it: object storage. */
export interface ObjectStorage {
  endpoint: string;
  bucket: string;
  region: string;
  path: string;
}

/** The artifact URI of an object-storage location, in upstream's form:
 * s3://BUCKET/PATH?endpoint=ENDPOINT[&defaultRegion=REGION]. */
export function objectStorageUri(o: ObjectStorage): string {
  const q = new URLSearchParams({ endpoint: o.endpoint.trim() });
  if (o.region.trim()) q.set('defaultRegion', o.region.trim());
  const path = o.path.trim().replace(/^\/+/, '');
  return `s3://${o.bucket.trim()}/${path}?${q.toString()}`;
}

/** What is wrong with an object-storage location, field by field (empty: nothing). */
export function objectStorageProblems(o: ObjectStorage): Partial<Record<keyof ObjectStorage, string>> {
  const p: Partial<Record<keyof ObjectStorage, string>> = {};
  const endpoint = o.endpoint.trim();
  if (!endpoint) p.endpoint = 'The endpoint is required, e.g. https://s3.us-east-1.amazonaws.com.';
  else if (!/^https?:\/\/[^\s/?#]+/i.test(endpoint)) p.endpoint = 'The endpoint is an http:// or https:// URL.';
  const bucket = o.bucket.trim();
  if (!bucket) p.bucket = 'The bucket is required.';
  // S3's bucket naming rules: 3-63 characters, lowercase letters, digits, dots and hyphens,
  // beginning and ending with a letter or digit
  else if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) p.bucket = 'A bucket name has 3 to 63 lowercase letters, digits, dots or hyphens, and begins and ends with a letter or digit.';
  if (o.region.trim() && !/^[a-z0-9-]+$/.test(o.region.trim())) p.region = 'A region is lowercase letters, digits and hyphens, e.g. us-east-1.';
  if (!o.path.trim().replace(/^\/+/, '')) p.path = 'The path to the model inside the bucket is required.';
  return p;
}

/** Why a model artifact URI typed by hand is not one (undefined: it is). */
export function uriProblem(uri: string): string | undefined {
  const u = uri.trim();
  if (!u) return undefined; // no artifact: the version is registered without one
  if (/\s/.test(u)) return 'A URI has no spaces.';
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/(.+)$/.exec(u);
  if (!m) return 'Not a URI: give one such as s3://bucket/path, gs://bucket/path, hf://org/model or https://host/path.';
  if (m[2].startsWith('/') && m[1].toLowerCase() !== 'file') return `The ${m[1]}:// URI names no bucket or host.`;
  return undefined;
}

/**
 * A catalog model's logo as the console may show it, or null: an image data URI (png, jpeg, gif,
 * webp or svg+xml, base64, at most 256 KiB), or an https: address (at most 2048 bytes, no
 * credentials, no spaces or control characters) that the page loads without a referrer. Nothing
 * else: no javascript:, no http:, no other data: type. An svg in an <img> runs no script.
 */
export function logoSrc(logo: string | undefined | null): string | null {
  if (!logo) return null;
  // Only an image data URI: a logo at an address would make every visitor's browser ask a host
  // the catalog names (the CSP's img-src stays 'self' data:), so those show the icon.
  if (!logo.startsWith('data:') || logo.length > 256 * 1024) return null;
  return /^data:image\/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=]+$/.test(logo) ? logo : null;
}
