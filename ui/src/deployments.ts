// Deployment data used by several screens.
import { get, pathOf, post } from './api';
import { chosenRegistry } from './registry';
import type { DeployTargets, TrainedModelView } from './types';

export interface Namespace {
  name: string;
}

export const namespaces = (signal?: AbortSignal) => get<Namespace[]>('/namespaces', undefined, signal);

export const isvcPath = (ns: string, ...rest: string[]) => '/' + pathOf('namespaces', ns, 'inferenceservices', ...rest);

/** The path and query of the deployments (TrainedModels, InferenceServices) of a model or a version. */
export const deploymentsPath = '/deployments';
export const deploymentsQuery = (registeredModelId: string, modelVersionId?: string) => ({ registeredModelId, modelVersionId, modelRegistry: chosenRegistry() ?? undefined });

/** Where the user may deploy in ns: whether RBAC lets them, and the multi-model InferenceServices. */
export const deployTargets = (ns: string, signal?: AbortSignal) => get<DeployTargets>('/' + pathOf('namespaces', ns, 'deploy_targets'), undefined, signal);

export interface DeployRequest {
  name: string;
  inferenceService: string;
  modelVersionId: string;
  memory: string;
  modelRegistry?: string;
}

/** Creates the TrainedModel (as the user); the server's refusal comes back as an ApiError. */
export const deploy = (ns: string, req: DeployRequest) => post<TrainedModelView>('/' + pathOf('namespaces', ns, 'trainedmodels'), req);
