// The catalog source form's checks, the server's rules (src/ui/catalog-settings.c) said in the
// page before anything is sent. Pure.

export const CATALOG_SOURCE_ID_MAX = 238;

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
