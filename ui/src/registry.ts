// The registry the console shows: the first one GET /api/v1/model_registry lists.
import { ApiError, get, pathOf } from './api';
import type { ModelRegistryInfo } from './types';

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
