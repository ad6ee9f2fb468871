// The registry forms' checks and bodies (ui/src/registrysettings.ts), the server's rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRegistryBody, emptyRegistryForm, madeByConsole, registryFormOf, registryFormProblems, updateRegistryBody } from '../src/registrysettings';

test('a SQLite registry: the name checked as a Service name, the body as upstream sends it', () => {
  const f = { ...emptyRegistryForm(), name: 'mr-web', displayName: 'Team Web', description: 'two\nlines' };
  assert.deepEqual(registryFormProblems(f, 'create'), {});
  assert.deepEqual(createRegistryBody(f), {
    modelRegistry: { apiVersion: 'modelregistry.kubeflow.io/v1alpha1', kind: 'ModelRegistry', metadata: { name: 'mr-web', annotations: { displayName: 'Team Web', description: 'two\nlines' } }, spec: {} },
  });
  for (const bad of ['', 'Mr', '9lives', 'a_b', 'ends-', 'a'.repeat(64)]) assert.ok(registryFormProblems({ ...f, name: bad }, 'create').name, bad);
  assert.ok(registryFormProblems({ ...f, displayName: 'a\tb' }, 'create').displayName);
  assert.ok(registryFormProblems({ ...f, description: 'x'.repeat(1025) }, 'create').description);
});

test('a PostgreSQL registry: each field checked, the password by its Secret', () => {
  const f = { ...emptyRegistryForm(), name: 'mr-pg', database: 'postgres' as const, host: 'db.example', port: '5433', dbName: 'mr', username: 'mr_user', secretName: 'mr-db', sslMode: 'require' };
  assert.deepEqual(registryFormProblems(f, 'create'), {});
  assert.deepEqual(createRegistryBody(f).modelRegistry.spec, { postgres: { host: 'db.example', port: 5433, database: 'mr', username: 'mr_user', passwordSecret: { name: 'mr-db', key: 'database-password' }, sslMode: 'require' } });
  const p = registryFormProblems({ ...f, host: 'db x', port: '0', dbName: '', username: 'a;b', secretName: 'A_B' }, 'create');
  assert.deepEqual(Object.keys(p).sort(), ['dbName', 'host', 'port', 'secretName', 'username']);
  assert.deepEqual(createRegistryBody({ ...f, secretName: '', sslMode: '' }).modelRegistry.spec, { postgres: { host: 'db.example', port: 5433, database: 'mr', username: 'mr_user' } });
});

test('editing: the form as read, the database sent only when it changed', () => {
  const kind = { metadata: { name: 'mr-web', namespace: 'regs', labels: { 'app.kubernetes.io/managed-by': 'modelplane-ui' }, annotations: { displayName: 'Team Web' } } };
  const f = registryFormOf(kind);
  assert.equal(f.database, 'sqlite');
  assert.ok(madeByConsole(kind));
  assert.ok(!madeByConsole({ metadata: { name: 'x', namespace: 'y' } }));
  assert.deepEqual(registryFormProblems({ ...f, name: 'Not checked' }, 'edit'), {});
  assert.deepEqual(updateRegistryBody({ ...f, displayName: 'Team Web 2' }, f), { modelRegistry: { metadata: { annotations: { displayName: 'Team Web 2', description: '' } } } });
  const pg = { ...f, database: 'postgres' as const, host: 'db', dbName: 'mr', username: 'u' };
  assert.deepEqual(updateRegistryBody(pg, f).modelRegistry.spec, { postgres: { host: 'db', port: 5432, database: 'mr', username: 'u' } });
  // read back from a PostgreSQL registry: prefilled, unchanged is not sent, SQLite is postgres: null
  const read = registryFormOf({ ...kind, spec: { postgres: { host: 'db', port: 5433, database: 'mr', username: 'u', passwordSecret: { name: 's', key: 'k' } } } });
  assert.deepEqual([read.database, read.host, read.port, read.dbName, read.username, read.secretName, read.secretKey], ['postgres', 'db', '5433', 'mr', 'u', 's', 'k']);
  assert.equal(updateRegistryBody(read, read).modelRegistry.spec, undefined);
  assert.deepEqual(updateRegistryBody({ ...read, database: 'sqlite' }, read).modelRegistry.spec, { postgres: null });
});
