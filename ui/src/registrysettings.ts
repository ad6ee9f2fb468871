// The registry forms of the Settings page (screens/Settings.tsx): checks and bodies, the
// server's rules (src/ui/settings.c, docs/ui.md "Registries made by the console"), so a form
// sends nothing the server would refuse for its shape. Pure and tested.
import type { ModelRegistryKind } from './types';

export type DatabaseChoice = 'sqlite' | 'postgres';

export interface RegistryForm {
  name: string;
  displayName: string;
  description: string;
  database: DatabaseChoice;
  host: string;
  port: string;
  dbName: string;
  username: string;
  secretName: string;
  secretKey: string;
  sslMode: string;
}

export type RegistryProblems = Partial<Record<keyof RegistryForm, string>>;

export const MANAGED_BY = 'app.kubernetes.io/managed-by';
const TEXT_MAX = 1024;
const SSL_MODES = ['', 'disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'];

export function emptyRegistryForm(): RegistryForm {
  return { name: '', displayName: '', description: '', database: 'sqlite', host: '', port: '5432', dbName: '', username: '', secretName: '', secretKey: 'database-password', sslMode: '' };
}

/** The edit form of a registry as GET /settings/model_registry/{id} shows it: its annotations and database. */
export function registryFormOf(r: ModelRegistryKind): RegistryForm {
  const f = { ...emptyRegistryForm(), name: r.metadata.name, displayName: r.metadata.annotations?.displayName ?? '', description: r.metadata.annotations?.description ?? '' };
  const pg = r.spec?.postgres;
  if (!pg) return f;
  return { ...f, database: 'postgres', host: pg.host ?? '', port: String(pg.port ?? 5432), dbName: pg.database ?? '', username: pg.username ?? '', secretName: pg.passwordSecret?.name ?? '', secretKey: pg.passwordSecret?.key ?? 'database-password', sslMode: pg.sslMode ?? '' };
}

const DATABASE_FIELDS: (keyof RegistryForm)[] = ['database', 'host', 'port', 'dbName', 'username', 'secretName', 'secretKey', 'sslMode'];

/** Whether the form's database differs from the one it was read with. */
export function databaseChanged(f: RegistryForm, was: RegistryForm): boolean {
  return DATABASE_FIELDS.some((k) => f[k] !== was[k]);
}

/** Whether this console made the registry (only those are edited and deleted here). */
export function madeByConsole(r: ModelRegistryKind): boolean {
  return r.metadata.labels?.[MANAGED_BY] === 'modelplane-ui';
}

const bytes = (s: string) => new TextEncoder().encode(s).length;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f]/;

function textProblem(s: string, lines: boolean): string | undefined {
  if (bytes(s) > TEXT_MAX) return `At most ${TEXT_MAX} bytes.`;
  if ((lines ? CONTROL_BUT_LINES : CONTROL).test(s)) return lines ? 'No control characters (but new lines).' : 'No control characters.';
  return undefined;
}

function wordProblem(s: string, max: number, re: RegExp, chars: string): string | undefined {
  if (s === '') return 'Required.';
  if (bytes(s) > max || !re.test(s)) return `1 to ${max} characters of ${chars}.`;
  return undefined;
}

function databaseProblems(f: RegistryForm, p: RegistryProblems) {
  p.host = wordProblem(f.host, 253, /^[A-Za-z0-9.:-]+$/, 'letters, digits, ".", "-" and ":"');
  p.dbName = wordProblem(f.dbName, 63, /^[A-Za-z0-9_.-]+$/, 'letters, digits, "_", "." and "-"');
  p.username = wordProblem(f.username, 63, /^[A-Za-z0-9_.-]+$/, 'letters, digits, "_", "." and "-"');
  const port = Number(f.port);
  if (!/^[0-9]+$/.test(f.port) || port < 1 || port > 65535) p.port = 'A port from 1 to 65535.';
  if (f.secretName !== '' && (f.secretName.length > 253 || !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(f.secretName))) p.secretName = "A Secret's name: lowercase letters, digits, '.' and '-'.";
  if (f.secretName !== '') p.secretKey = wordProblem(f.secretKey, 253, /^[A-Za-z0-9._-]+$/, 'letters, digits, ".", "_" and "-"');
  if (!SSL_MODES.includes(f.sslMode)) p.sslMode = 'One of libpq\u2019s modes.';
}

/** The problems of a form, by field (none: {}). */
export function registryFormProblems(f: RegistryForm, mode: 'create' | 'edit'): RegistryProblems {
  const p: RegistryProblems = {};
  if (mode === 'create') {
    if (f.name === '') p.name = 'Required.';
    else if (f.name.length > 63 || !/^[a-z]([a-z0-9-]*[a-z0-9])?$/.test(f.name)) p.name = "The registry's name is its Service's: 1 to 63 lowercase letters, digits and '-', starting with a letter.";
  }
  p.displayName = textProblem(f.displayName, false);
  p.description = textProblem(f.description, true);
  if (f.database === 'postgres') databaseProblems(f, p);
  for (const k of Object.keys(p) as (keyof RegistryForm)[]) if (p[k] === undefined) delete p[k];
  return p;
}

function postgresOf(f: RegistryForm) {
  return {
    host: f.host,
    port: Number(f.port),
    database: f.dbName,
    username: f.username,
    ...(f.secretName ? { passwordSecret: { name: f.secretName, key: f.secretKey } } : {}),
    ...(f.sslMode ? { sslMode: f.sslMode } : {}),
  };
}

/** POST /settings/model_registry's data: upstream's ModelRegistrySettingsPayload. */
export function createRegistryBody(f: RegistryForm) {
  return {
    modelRegistry: {
      apiVersion: 'modelregistry.kubeflow.io/v1alpha1',
      kind: 'ModelRegistry',
      metadata: { name: f.name, annotations: { displayName: f.displayName, description: f.description } },
      spec: f.database === 'postgres' ? { postgres: postgresOf(f) } : {},
    },
  };
}

/** PATCH /settings/model_registry/{id}'s data: the annotations (empty removes one), the database only when it changed from was (SQLite: postgres null), so that a name's change leaves the Deployment alone. */
export function updateRegistryBody(f: RegistryForm, was: RegistryForm) {
  const spec = !databaseChanged(f, was) ? undefined : f.database === 'postgres' ? { postgres: postgresOf(f) } : { postgres: null };
  return { modelRegistry: { metadata: { annotations: { displayName: f.displayName, description: f.description } }, ...(spec ? { spec } : {}) } };
}
