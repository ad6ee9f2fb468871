// The registry the console shows: the first one GET /api/v1/model_registry lists.
import { ApiError, get, patch, pathOf } from './api';
import { absoluteTime } from './format';
import type { ModelRegistryInfo, ModelVersion, RegisteredModel } from './types';

let mr: Promise<string> | null = null;

export function registryName(): Promise<string> {
  if (!mr) {
    mr = get<ModelRegistryInfo[]>('/model_registry').then((list) => {
      if (!Array.isArray(list) || list.length === 0) throw new ApiError(404, 'the console server knows no model registry', 'registry');
      return list[0].name;
    });
    mr.catch(() => {
      mr = null;
    });
  }
  return mr;
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
