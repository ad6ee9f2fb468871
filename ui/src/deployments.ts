// Deployment data used by several screens.
import { get, pathOf, type ListPage } from './api';
import { registryLink } from './format';
import type { InferenceServiceView } from './types';

export interface Namespace {
  name: string;
}

export const namespaces = (signal?: AbortSignal) => get<Namespace[]>('/namespaces', undefined, signal);

export const isvcPath = (ns: string, ...rest: string[]) => '/' + pathOf('namespaces', ns, 'inferenceservices', ...rest);

/**
 * The InferenceServices the registry controller linked to a registered model (its labels), in
 * the namespaces the user may see: at most maxNamespaces namespaces, the first page of each.
 */
export async function linkedInferenceServices(registeredModelId: string, signal?: AbortSignal, maxNamespaces = 20): Promise<InferenceServiceView[]> {
  const nss = (await namespaces(signal)).slice(0, maxNamespaces);
  const pages = await Promise.all(nss.map((n) => get<ListPage<InferenceServiceView>>(isvcPath(n.name), { pageSize: 100 }, signal).catch(() => ({ items: [] }))));
  return pages.flatMap((p) => p.items ?? []).filter((s) => registryLink(s.labels).registeredModelId === registeredModelId);
}
