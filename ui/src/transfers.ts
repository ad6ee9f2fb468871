// Model transfer jobs (docs/ui.md, "Model transfer jobs"): upstream's ModelTransferJob, the
// request the create form sends and its checks, the status colours. Pure, but for the calls.
import { del, pathOf, post } from './api';
import type { StatusColor } from './format';
import { mrPath } from './registry';

export type TransferStatus = 'PENDING' | 'RUNNING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';

export interface TransferJob {
  id: string;
  name: string;
  jobDisplayName: string;
  namespace: string;
  status: TransferStatus;
  uploadIntent: string;
  source: { type: string; bucket?: string; key?: string; uri?: string };
  destination: { type: string; uri?: string; registry?: string };
  registeredModelName?: string;
  modelVersionName?: string;
  createTimeSinceEpoch: string;
  errorMessage?: string;
}

export function transferStatusColor(s: string): StatusColor {
  if (s === 'COMPLETED') return 'green';
  if (s === 'FAILED') return 'red';
  if (s === 'RUNNING' || s === 'PENDING') return 'orange';
  return 'grey';
}

/** What the create form holds (a new model from S3 or a URI into an OCI registry). */
export interface TransferForm {
  name: string;
  displayName: string;
  namespace: string;
  sourceType: 's3' | 'uri';
  bucket: string;
  key: string;
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  uri: string;
  destUri: string;
  username: string;
  password: string;
  modelName: string;
  versionName: string;
}

export const emptyTransferForm = (namespace = ''): TransferForm => ({
  name: '', displayName: '', namespace, sourceType: 's3', bucket: '', key: '', endpoint: '', region: '',
  accessKeyId: '', secretAccessKey: '', uri: '', destUri: '', username: '', password: '', modelName: '', versionName: '',
});

const NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** The first problem of the form, checked in the page before anything is sent (the server checks
 * again, naming the field); null when none. */
export function transferFormProblem(f: TransferForm): string | null {
  if (!NAME.test(f.name) || f.name.length > 63) return 'The job name must be 1 to 63 lowercase letters, digits, "-" or ".", starting and ending with a letter or digit.';
  if (f.displayName.trim() === '') return 'A display name is required.';
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(f.namespace)) return 'Choose the namespace the job runs in.';
  if (f.sourceType === 's3' && [f.bucket, f.key, f.accessKeyId, f.secretAccessKey].some((v) => v.trim() === '')) return 'An S3 source needs a bucket, a key and both credentials.';
  if (f.sourceType === 'uri' && f.uri.trim() === '') return 'A URI source needs its URI.';
  if (f.destUri.trim() === '' || f.destUri.trim().startsWith('/')) return 'The destination is an OCI reference: registry/repository:tag.';
  if (f.username.trim() === '' || f.password === '') return 'The OCI registry\'s username and password are required.';
  if (f.modelName.trim() === '' || f.versionName.trim() === '') return 'The registered model\'s name and the version\'s name are required.';
  return null;
}

/** Upstream's ModelTransferJob request for the form (a new registered model). */
export function transferRequest(f: TransferForm): Record<string, unknown> {
  const t = (s: string) => s.trim();
  const source =
    f.sourceType === 's3'
      ? { type: 's3', bucket: t(f.bucket), key: t(f.key), ...(t(f.endpoint) ? { endpoint: t(f.endpoint) } : {}), ...(t(f.region) ? { region: t(f.region) } : {}), awsAccessKeyId: t(f.accessKeyId), awsSecretAccessKey: f.secretAccessKey }
      : { type: 'uri', uri: t(f.uri) };
  return {
    name: f.name,
    jobDisplayName: t(f.displayName),
    namespace: f.namespace,
    source,
    destination: { type: 'oci', uri: t(f.destUri), username: t(f.username), password: f.password },
    uploadIntent: 'create_model',
    registeredModelName: t(f.modelName),
    modelVersionName: t(f.versionName),
  };
}

export const transfersPath = () => mrPath('model_transfer_jobs');

export const createTransfer = async (f: TransferForm) => post<TransferJob>(await transfersPath(), transferRequest(f));

export const deleteTransfer = async (j: TransferJob) => del((await transfersPath()) + '/' + pathOf(j.name) + `?jobNamespace=${encodeURIComponent(j.namespace)}`);
