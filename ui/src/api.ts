// The BFF client (docs/ui.md): {"data": ...} envelope, {"error": {code, message, source}} errors,
// the CSRF token on writes, ETag revalidation for polling. The parsing parts are pure and tested.

export class ApiError extends Error {
  readonly status: number;
  readonly source: string;
  constructor(status: number, message: string, source = 'ui') {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.source = source;
  }
}

export type Query = Record<string, string | number | undefined | null | string[]>;

/** "?a=1&b=x" from the set values (arrays repeat the key); '' when none is set. */
export function queryString(q: Query | undefined): string {
  if (!q) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => p.append(k, x));
    else p.append(k, String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Path segments escaped one by one (a catalog model name may contain '/', kept as separators). */
export function pathOf(...segments: string[]): string {
  return segments.map((s) => s.split('/').map(encodeURIComponent).join('/')).join('/');
}

/** The error of a non-2xx answer, from its body text (JSON error object, or raw text). */
export function errorFromBody(status: number, body: string): ApiError {
  try {
    const j = JSON.parse(body) as { error?: { message?: string; source?: string }; message?: string };
    if (j && typeof j === 'object') {
      if (j.error && typeof j.error.message === 'string') return new ApiError(status, j.error.message, j.error.source ?? 'ui');
      if (typeof j.message === 'string') return new ApiError(status, j.message);
    }
  } catch {
    /* not JSON */
  }
  const text = body.trim().slice(0, 300);
  return new ApiError(status, text || `HTTP ${status}`);
}

/** The payload of a 2xx answer. */
export function unwrap<T>(body: string): T {
  const j = JSON.parse(body) as { data?: T };
  if (!j || typeof j !== 'object' || !('data' in j)) throw new ApiError(502, 'the server answered without a "data" field');
  return j.data as T;
}

const BASE = '/api/v1';

async function request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  try {
    return await fetch(BASE + path, {
      method,
      headers: { Accept: 'application/json', ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
      body: body !== undefined ? JSON.stringify({ data: body }) : undefined,
      credentials: 'same-origin',
      signal,
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, `the console server is unreachable: ${(e as Error).message}`);
  }
}

export async function get<T>(path: string, q?: Query, signal?: AbortSignal): Promise<T> {
  const r = await request('GET', path + queryString(q), undefined, {}, signal);
  const text = await r.text();
  if (!r.ok) throw errorFromBody(r.status, text);
  return unwrap<T>(text);
}

/** A conditional GET: {notModified: true} on 304, else the payload and its ETag. */
export async function getIfChanged<T>(path: string, q: Query | undefined, etag: string | null, signal?: AbortSignal): Promise<{ notModified: true } | { notModified: false; data: T; etag: string | null }> {
  const r = await request('GET', path + queryString(q), undefined, etag ? { 'If-None-Match': etag } : {}, signal);
  if (r.status === 304) return { notModified: true };
  const text = await r.text();
  if (!r.ok) throw errorFromBody(r.status, text);
  return { notModified: false, data: unwrap<T>(text), etag: r.headers.get('ETag') };
}

export interface User {
  userId: string;
  clusterAdmin: boolean;
  csrfToken: string;
  authMode: string;
}

let user: Promise<User> | null = null;

export function currentUser(): Promise<User> {
  if (!user) {
    user = get<User>('/user');
    user.catch(() => {
      user = null;
    });
  }
  return user;
}

async function write<T>(method: string, path: string, body: unknown): Promise<T> {
  const u = await currentUser();
  const r = await request(method, path, body, { 'X-CSRF-Token': u.csrfToken });
  const text = await r.text();
  if (!r.ok) throw errorFromBody(r.status, text);
  return unwrap<T>(text);
}

/** DELETE with the CSRF token; the answer (204) has no body. */
export async function del(path: string): Promise<void> {
  const u = await currentUser();
  const r = await request('DELETE', path, undefined, { 'X-CSRF-Token': u.csrfToken });
  if (!r.ok) throw errorFromBody(r.status, await r.text());
}

export const post = <T>(path: string, body: unknown) => write<T>('POST', path, body);
export const patch = <T>(path: string, body: unknown) => write<T>('PATCH', path, body);

export interface ListPage<T> {
  items: T[];
  size?: number;
  pageSize?: number;
  nextPageToken?: string;
}
