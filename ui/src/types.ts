// The shapes the screens read (registry v1alpha3, catalog v1alpha1, docs/ui.md deployment views).
import type { Condition, Loaded } from './format';

export type Props = Record<string, unknown>;

export interface RegisteredModel {
  id: string;
  name: string;
  description?: string;
  owner?: string;
  state?: 'LIVE' | 'ARCHIVED';
  createTimeSinceEpoch?: string;
  lastUpdateTimeSinceEpoch?: string;
  customProperties?: Props;
  externalId?: string;
}

export interface ModelVersion {
  id: string;
  name: string;
  registeredModelId: string;
  description?: string;
  author?: string;
  state?: 'LIVE' | 'ARCHIVED';
  createTimeSinceEpoch?: string;
  lastUpdateTimeSinceEpoch?: string;
  customProperties?: Props;
}

export interface Artifact {
  id?: string;
  name?: string;
  artifactType?: string;
  uri?: string;
  modelFormatName?: string;
  modelFormatVersion?: string;
  state?: string;
  /** provenance (upstream): "catalog" and the catalog source, model name */
  modelSourceKind?: string;
  modelSourceClass?: string;
  modelSourceGroup?: string;
  modelSourceId?: string;
  modelSourceName?: string;
  customProperties?: Props;
}

export interface RegistryInferenceService {
  id: string;
  name?: string;
  registeredModelId?: string;
  modelVersionId?: string;
  runtime?: string;
  desiredState?: string;
  servingEnvironmentId?: string;
}

export interface ModelRegistryInfo {
  name: string;
  displayName?: string;
  description?: string;
  serverAddress?: string;
  isHttps?: boolean;
  isAvailable?: boolean;
}

export interface CatalogSource {
  id: string;
  name: string;
  enabled?: boolean;
  status?: string;
  error?: string;
  labels?: string[];
}

export interface CatalogModel {
  id?: string;
  name: string;
  source_id?: string;
  description?: string;
  provider?: string;
  license?: string;
  tasks?: string[];
  libraryName?: string;
  readme?: string;
  logo?: string;
  createTimeSinceEpoch?: string;
  lastUpdateTimeSinceEpoch?: string;
  customProperties?: Props;
}

export interface CatalogArtifact {
  artifactType?: string;
  uri?: string;
  customProperties?: Props;
  createTimeSinceEpoch?: string;
}

export interface FilterOption {
  type: string;
  values?: (string | number | boolean)[];
  range?: { min?: number; max?: number };
}

export interface FilterOptions {
  filters?: Record<string, FilterOption>;
}

export interface InferenceServiceView {
  name: string;
  namespace: string;
  uid?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  url: string | null;
  ready: boolean;
  conditions: Condition[];
  predictor?: { modelFormat?: string | null; runtime?: string | null; storageUri?: string | null; memoryLimit?: string | null; memoryRequest?: string | null; memoryLimitBytes?: number | null };
  /** can take TrainedModels (the controller's multi-model rule) */
  multiModel?: boolean;
  /** placement (modelplane.io/placement: spread): the controller's per-pod summary; null without */
  placement?: PlacementPodView[] | null;
}

/** One pod of an InferenceService under placement (status.annotations["modelplane.io/placement"]). */
export interface PlacementPodView {
  pod: string;
  models: number;
  /** bytes */
  assigned: number;
  /** bytes */
  capacity: number;
  draining: boolean;
}

/** One serving replica's state of a TrainedModel (status.annotations["modelplane.io/replicas"]). */
export interface ReplicaView {
  pod: string;
  state: string;
  reason: string | null;
  since: string | null;
}

export interface TrainedModelView {
  name: string;
  namespace: string;
  uid?: string;
  creationTimestamp?: string;
  inferenceService: string;
  storageUri?: string;
  framework?: string;
  memory?: string;
  memoryBytes?: number | null;
  labels?: Record<string, string>;
  url: string | null;
  ready: boolean;
  conditions: Condition[];
  loaded: Loaded | null;
  replicas?: ReplicaView[] | null;
}

/** GET /namespaces/{ns}/deploy_targets */
export interface DeployTargets {
  namespace: string;
  canDeploy: boolean;
  reason: string | null;
  items: (InferenceServiceView & { memoryAssignedBytes: number | null })[];
}

/** GET /deployments?registeredModelId&modelVersionId */
export interface Deployments {
  trainedModels: TrainedModelView[];
  inferenceServices: InferenceServiceView[];
  complete: boolean;
}

export interface EventView {
  type: string;
  reason: string;
  message: string;
  count?: number;
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  involvedObject: { kind: string; name: string };
}

/** GET /settings/model_registry: upstream's ModelRegistryKind, from a registry's Service. */
export interface ModelRegistryKind {
  metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  /** postgres: a registry this console made on PostgreSQL (from its Deployment; never a password). */
  spec?: { postgres?: { host?: string; port?: number; database?: string; username?: string; sslMode?: string; passwordSecret?: { name?: string; key?: string } } };
}

export interface RoleBindingSubject {
  kind: 'User' | 'Group' | string;
  name: string;
  apiGroup?: string;
}

/** GET /settings/role_bindings: the RoleBindings that let users and groups use a registry. */
export interface RoleBinding {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; creationTimestamp?: string };
  subjects?: RoleBindingSubject[];
  roleRef?: { kind: string; name: string };
}

/** GET /settings/model_catalog/source_configs: upstream's CatalogSourceConfig. */
export interface CatalogSourceConfig {
  id: string;
  name?: string;
  type?: string;
  enabled?: boolean;
  labels?: string[];
  isDefault?: boolean;
  includedModels?: string[];
  excludedModels?: string[];
  allowedOrganization?: string;
  yamlCatalogPath?: string;
  yaml?: string;
}
