// The registry the console shows: the one the user chose in the masthead (kept in the browser),
// else the first one GET /api/v1/model_registry lists (the server's configured registry).
import { ApiError, get, patch, pathOf } from './api';
import { absoluteTime } from './format';
import type { ModelRegistryInfo, ModelVersion, RegisteredModel } from './types';

const CHOICE_KEY = 'modelplane.registry';

let list: Promise<ModelRegistryInfo[]> | null = null;

/** The registries the user may see, read once per page load. */
export function registries(): Promise<ModelRegistryInfo[]> {
  if (!list) {
    list = get<ModelRegistryInfo[]>('/model_registry').then((l) => {
      if (!Array.isArray(l) || l.length === 0) throw new ApiError(404, 'the console server knows no model registry', 'registry');
      return l;
    });
    list.catch(() => {
      list = null;
    });
  }
  return list;
}

/** The registry to show: the chosen one when the list still has it, else the first. */
export function pickRegistry(l: ModelRegistryInfo[], chosen: string | null | undefined): string {
  return l.find((r) => r.name === chosen)?.name ?? l[0].name;
}

/** What the switcher shows for a registry: its display name with its name, or the name. */
export const registryLabel = (r: ModelRegistryInfo) => (r.displayName && r.displayName !== r.name ? `${r.displayName} (${r.name})` : r.name);

/** The name the user chose (null: none, or no storage). */
export function chosenRegistry(): string | null {
  try {
    return window.localStorage.getItem(CHOICE_KEY);
  } catch {
    return null;
  }
}

/** Keeps the user's choice; the caller reloads the page so that every screen follows it. */
export function chooseRegistry(name: string): void {
  try {
    window.localStorage.setItem(CHOICE_KEY, name);
  } catch {
    // no storage (private mode): the first registry stays shown
  }
}

export async function registryName(): Promise<string> {
  const l = await registries();
  const chosen = chosenRegistry();
  const name = pickRegistry(l, chosen);
  // a choice the list no longer has is forgotten, so the deployments' filter follows too
  if (chosen && chosen !== name)
    try {
      window.localStorage.removeItem(CHOICE_KEY);
    } catch {
      // nothing kept
    }
  return name;
}

/** "/model_registry/<mr>/<rest...>" */
export async function mrPath(...rest: string[]): Promise<string> {
  return '/' + pathOf('model_registry', await registryName(), ...rest);
}

/**
 * A PATCH that refuses to overwrite a change it has not seen: the entity is read again first and
 * its lastUpdateTimeSinceEpoch compared with the one the user's screen was built from (the
 * registry has no If-Match; this narrows the window to the two calls, it does not close it).
 */
export async function patchUnchanged<T extends { lastUpdateTimeSinceEpoch?: string }>(path: string, seen: string | undefined, body: unknown, what: string): Promise<T> {
  const now = await get<T>(path);
  if (seen && now.lastUpdateTimeSinceEpoch && now.lastUpdateTimeSinceEpoch !== seen)
    throw new ApiError(409, `${what} was changed by someone else (at ${absoluteTime(now.lastUpdateTimeSinceEpoch)}) after this page loaded it: nothing was saved. Reload the page to see that change, then edit again.`, 'registry');
  return patch<T>(path, body);
}

const names = new Map<string, Promise<string>>();

/** A registered model's name, read once per page load (the id itself when it cannot be read). */
export function modelName(id: string): Promise<string> {
  const key = `m${id}`;
  let p = names.get(key);
  if (!p) {
    p = mrPath('registered_models', id)
      .then((path) => get<RegisteredModel>(path))
      .then((m) => m.name)
      .catch(() => {
        names.delete(key);
        return `model ${id}`;
      });
    names.set(key, p);
  }
  return p;
}

/** A model version's name, likewise. */
export function versionName(id: string): Promise<string> {
  const key = `v${id}`;
  let p = names.get(key);
  if (!p) {
    p = mrPath('model_versions', id)
      .then((path) => get<ModelVersion>(path))
      .then((v) => v.name)
      .catch(() => {
        names.delete(key);
        return `version ${id}`;
      });
    names.set(key, p);
  }
  return p;
}
