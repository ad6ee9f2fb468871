// The registry permissions page's pure parts (screens/Permissions.tsx): which RoleBindings are a
// registry's, the check of a user or group name, and the grant's body. Pure and tested.
import type { RoleBinding, RoleBindingSubject } from './types';

const NAME_LABEL = 'app.kubernetes.io/name';
export const ROLE_PREFIX = 'registry-user-';
const SUBJECT_NAME_MAX = 256;

/** Whether a RoleBinding (of the registry RoleBindings listed) is for registry @name. */
export function bindingIsFor(rb: RoleBinding, name: string): boolean {
  return rb.metadata.labels?.[NAME_LABEL] === name || rb.roleRef?.name === ROLE_PREFIX + name;
}

/** Why a user or group name cannot be granted, or null: 1-256 bytes, no control characters. */
export function subjectNameProblem(s: string): string | null {
  if (s.trim() === '') return 'Enter a user or group name.';
  if (new TextEncoder().encode(s).length > SUBJECT_NAME_MAX) return `A name has at most ${SUBJECT_NAME_MAX} bytes.`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(s)) return 'A name has no control characters.';
  return null;
}

/** The body that grants @subject the use of registry @name (a new RoleBinding, generateName). */
export function grantBody(name: string, subject: RoleBindingSubject) {
  return {
    metadata: { labels: { [NAME_LABEL]: name } },
    subjects: [{ kind: subject.kind, name: subject.name, apiGroup: 'rbac.authorization.k8s.io' }],
    roleRef: { kind: 'Role', name: ROLE_PREFIX + name, apiGroup: 'rbac.authorization.k8s.io' },
  };
}
