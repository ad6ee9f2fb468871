// The catalog source forms' checks and bodies: the server's rules (src/ui/catalog-settings.c)
// said in the page before anything is sent, and the JSON each form sends (upstream's
// CatalogSourceConfigPayload, its PATCH, and its CatalogSourcePreviewRequest). Pure.
import type { CatalogSourceConfig } from './types';

export const CATALOG_SOURCE_ID_MAX = 238;
/** The server's limit on includedModels and excludedModels. */
export const CATALOG_PATTERNS_MAX = 1000;

/** What is wrong with a new source's id, or null. */
export function sourceIdProblem(id: string): string | null {
  if (id === '') return 'An id is required.';
  if (!/^[a-z0-9_]+$/.test(id)) return 'Only lowercase letters, digits and underscores.';
  if (!/[a-z0-9]/.test(id)) return 'At least one letter or digit.';
  if (id.length > CATALOG_SOURCE_ID_MAX) return `At most ${CATALOG_SOURCE_ID_MAX} characters.`;
  return null;
}

/** What is wrong with a new yaml source's catalog text, or null (the server parses it). */
export function catalogYamlProblem(text: string): string | null {
  if (text.trim() === '') return 'The catalog is required: YAML with a models list.';
  if (new TextEncoder().encode(text).length > 1024 * 1024) return 'At most 1 MiB.';
  return null;
}

export function sourceNameProblem(name: string): string | null {
  return name.trim() === '' ? 'A name is required.' : null;
}

/** An hf source's organization (the hub's user or organization name; required). */
export function organizationProblem(org: string): string | null {
  const o = org.trim();
  if (o === '') return 'An organization is required: the Hugging Face organization whose models the source lists.';
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(o)) return 'An organization name: letters, digits, "-", "_" and ".", without "/" or spaces.';
  if (o.length > 96) return 'At most 96 characters.';
  return null;
}

/** An hf access token, optional: empty, or hf_ and no spaces (the server keeps it in a Secret). */
export function apiKeyProblem(key: string): string | null {
  if (key === '') return null;
  if (!key.startsWith('hf_')) return 'A Hugging Face access token starts with "hf_".';
  if (/\s/.test(key)) return 'An access token has no spaces.';
  if (key.length > 1024) return 'At most 1024 characters.';
  return null;
}

/** Model patterns, one a line ("org/name", "org/prefix*"); blank lines ignored. */
export function patternList(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

export function patternsText(list: string[] | undefined): string {
  return (list ?? []).join('\n');
}

export function patternsProblem(text: string): string | null {
  const list = patternList(text);
  if (list.length > CATALOG_PATTERNS_MAX) return `At most ${CATALOG_PATTERNS_MAX} patterns.`;
  const bad = list.find((p) => /\s/.test(p));
  if (bad !== undefined) return `One pattern a line, without spaces: "${bad.slice(0, 60)}".`;
  return null;
}

export type SourceKind = 'yaml' | 'hf';

/** What the add and edit forms hold. */
export interface SourceForm {
  type: SourceKind;
  id: string;
  name: string;
  enabled: boolean;
  yaml: string;
  organization: string;
  apiKey: string;
  included: string;
  excluded: string;
}

export const emptyForm = (type: SourceKind): SourceForm => ({ type, id: '', name: '', enabled: true, yaml: '', organization: '', apiKey: '', included: '', excluded: '' });

/** The edit form of a source as the server shows it (never with a key: the field starts empty). */
export function formOf(s: CatalogSourceConfig): SourceForm {
  return {
    type: s.type === 'hf' ? 'hf' : 'yaml',
    id: s.id,
    name: s.name ?? '',
    enabled: s.enabled !== false,
    yaml: s.yaml ?? '',
    organization: s.allowedOrganization ?? '',
    apiKey: '',
    included: patternsText(s.includedModels),
    excluded: patternsText(s.excludedModels),
  };
}

export type FormProblems = Partial<Record<'id' | 'name' | 'yaml' | 'organization' | 'apiKey' | 'included' | 'excluded', string>>;

/**
 * The problems of a form, field by field (empty: none). mode 'edit' skips the id (it does not
 * change); a default source (isDefault) keeps its name and catalog, so they are not checked.
 */
export function formProblems(f: SourceForm, mode: 'add' | 'edit', isDefault = false): FormProblems {
  const p: FormProblems = {};
  const set = (k: keyof FormProblems, v: string | null) => {
    if (v) p[k] = v;
  };
  if (mode === 'add') set('id', sourceIdProblem(f.id));
  if (!isDefault) set('name', sourceNameProblem(f.name));
  if (f.type === 'yaml' && !isDefault) set('yaml', catalogYamlProblem(f.yaml));
  if (f.type === 'hf') {
    if (mode === 'add' || f.organization.trim() !== '') set('organization', organizationProblem(f.organization));
    set('apiKey', apiKeyProblem(f.apiKey));
  }
  set('included', patternsProblem(f.included));
  set('excluded', patternsProblem(f.excluded));
  return p;
}

/** POST source_configs: upstream's CatalogSourceConfigPayload. */
export function createPayload(f: SourceForm): Record<string, unknown> {
  const body: Record<string, unknown> = { id: f.id, name: f.name.trim(), type: f.type, enabled: f.enabled, includedModels: patternList(f.included), excludedModels: patternList(f.excluded) };
  if (f.type === 'yaml') body.yaml = f.yaml;
  else {
    body.allowedOrganization = f.organization.trim();
    if (f.apiKey !== '') body.apiKey = f.apiKey;
  }
  return body;
}

/**
 * PATCH source_configs/{id}: what the form may change. A default source: enabled, the patterns
 * and an hf source's organization only (the server refuses the rest with a 403). An empty key
 * field keeps the stored key.
 */
export function updatePayload(f: SourceForm, isDefault: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { enabled: f.enabled, includedModels: patternList(f.included), excludedModels: patternList(f.excluded) };
  if (f.type === 'hf' && f.organization.trim() !== '') body.allowedOrganization = f.organization.trim();
  if (isDefault) return body;
  body.name = f.name.trim();
  if (f.type === 'yaml' && f.yaml !== '') body.yaml = f.yaml;
  if (f.type === 'hf' && f.apiKey !== '') body.apiKey = f.apiKey;
  return body;
}

/**
 * POST source_preview: upstream's CatalogSourcePreviewRequest. A configured source (id) of type
 * hf without a key typed in is previewed with its stored key, which the server reads from the
 * source's Secret as the user; a yaml source without its catalog text by its yamlCatalogPath.
 */
export function previewRequest(f: SourceForm, configured?: CatalogSourceConfig): Record<string, unknown> {
  const req: Record<string, unknown> = { type: f.type, includedModels: patternList(f.included), excludedModels: patternList(f.excluded) };
  if (configured) req.id = configured.id;
  if (f.type === 'hf') {
    const props: Record<string, unknown> = {};
    if (f.organization.trim() !== '') props.allowedOrganization = f.organization.trim();
    if (f.apiKey !== '') props.apiKey = f.apiKey;
    req.properties = props;
  } else if (f.yaml !== '') req.properties = { yaml: f.yaml };
  else if (configured?.yamlCatalogPath) req.properties = { yamlCatalogPath: configured.yamlCatalogPath };
  else req.properties = {};
  return req;
}

/** What preview() shows before a preview can be asked for, or null. */
export function previewProblem(f: SourceForm, configured?: CatalogSourceConfig): string | null {
  if (f.type === 'hf') {
    if (f.organization.trim() === '' && patternList(f.included).length === 0) return 'Name the organization (or the models to include) first.';
    return (f.organization.trim() !== '' ? organizationProblem(f.organization) : null) ?? apiKeyProblem(f.apiKey) ?? patternsProblem(f.included) ?? patternsProblem(f.excluded);
  }
  if (f.yaml === '' && !configured?.yamlCatalogPath) return 'Write the catalog (YAML) first.';
  return patternsProblem(f.included) ?? patternsProblem(f.excluded);
}
