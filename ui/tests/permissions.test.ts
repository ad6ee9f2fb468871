import { test } from 'node:test';
import assert from 'node:assert/strict';
import { href, parseRoute } from '../src/router';
import { bindingIsFor, grantBody, subjectNameProblem } from '../src/permissions';

test('settings routes: parse and build round trip', () => {
  assert.deepEqual(parseRoute('#/settings'), { screen: 'settings' });
  assert.deepEqual(parseRoute('#/settings/registries/regs/mr-b'), { screen: 'permissions', ns: 'regs', name: 'mr-b' });
  assert.equal(href({ screen: 'permissions', ns: 'regs', name: 'mr b' }), '#/settings/registries/regs/mr%20b');
  assert.deepEqual(parseRoute(href({ screen: 'permissions', ns: 'regs', name: 'mr b' })), { screen: 'permissions', ns: 'regs', name: 'mr b' });
  assert.equal(parseRoute('#/settings/registries/regs').screen, 'notFound');
});

test('a registry RoleBinding is the registry\'s by its name label or its roleRef', () => {
  assert.ok(bindingIsFor({ metadata: { name: 'x', labels: { 'app.kubernetes.io/name': 'mr-b' } } }, 'mr-b'));
  assert.ok(bindingIsFor({ metadata: { name: 'x' }, roleRef: { kind: 'Role', name: 'registry-user-mr-b' } }, 'mr-b'));
  assert.ok(!bindingIsFor({ metadata: { name: 'x', labels: { 'app.kubernetes.io/name': 'mr-c' } }, roleRef: { kind: 'Role', name: 'registry-user-mr-c' } }, 'mr-b'));
});

test('subject names: checked in the page before anything is sent', () => {
  assert.equal(subjectNameProblem('alice@example.com'), null);
  assert.match(subjectNameProblem('  ') ?? '', /Enter/);
  assert.match(subjectNameProblem('a\nb') ?? '', /control/);
  assert.match(subjectNameProblem('é'.repeat(129)) ?? '', /256 bytes/);
});

test('a grant is the RoleBinding upstream\'s frontend makes', () => {
  assert.deepEqual(grantBody('mr-b', { kind: 'Group', name: 'ml-team' }), {
    metadata: { labels: { 'app.kubernetes.io/name': 'mr-b' } },
    subjects: [{ kind: 'Group', name: 'ml-team', apiGroup: 'rbac.authorization.k8s.io' }],
    roleRef: { kind: 'Role', name: 'registry-user-mr-b', apiGroup: 'rbac.authorization.k8s.io' },
  });
});
