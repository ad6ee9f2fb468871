// Live data by polling with ETag / If-None-Match: an unchanged answer is a 304 with no body and
// no re-render; a changed one replaces the data in place (no page reload).
import { useEffect, useState } from 'react';
import { ApiError, getIfChanged, type Query } from './api';
import type { Async } from './common';

export const POLL_MS = 2000;

export function usePoll<T>(path: string | null, query: Query | undefined, intervalMs = POLL_MS): Async<T> & { updates: number } {
  const [v, setV] = useState<Async<T> & { updates: number }>({ state: 'loading', updates: 0 });
  const key = path === null ? null : path + JSON.stringify(query ?? {});
  useEffect(() => {
    if (path === null) return;
    let etag: string | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ac = new AbortController();
    setV({ state: 'loading', updates: 0 });
    const tick = async () => {
      try {
        const r = await getIfChanged<T>(path, query, etag, ac.signal);
        if (!r.notModified) {
          etag = r.etag;
          setV((old) => ({ state: 'ok', data: r.data, updates: old.updates + 1 }));
        }
      } catch (e) {
        if (ac.signal.aborted) return;
        etag = null;
        const err = e instanceof ApiError ? e : new ApiError(0, String(e));
        setV((old) => ({ state: 'error', error: err, updates: old.updates }));
      }
      if (!ac.signal.aborted) timer = setTimeout(tick, intervalMs);
    };
    void tick();
    return () => {
      ac.abort();
      if (timer) clearTimeout(timer);
    };
    // key stands for path and query
  }, [key, intervalMs]);
  return v;
}
