import { test } from 'node:test';
import assert from 'node:assert/strict';
import { href, parseRoute } from '../src/router';
import { emptyTransferForm, transferFormProblem, transferRequest, transferStatusColor } from '../src/transfers';

test('transfer job routes: parse and build round trip', () => {
  assert.deepEqual(parseRoute('#/transfers'), { screen: 'transfers', ns: '' });
  assert.deepEqual(parseRoute('#/transfers/team-a'), { screen: 'transfers', ns: 'team-a' });
  assert.equal(href({ screen: 'transfers', ns: 'team a' }), '#/transfers/team%20a');
  assert.equal(parseRoute('#/transfers/a/b').screen, 'notFound');
});

test('statuses have their colours', () => {
  assert.equal(transferStatusColor('COMPLETED'), 'green');
  assert.equal(transferStatusColor('FAILED'), 'red');
  assert.equal(transferStatusColor('RUNNING'), 'orange');
  assert.equal(transferStatusColor('CANCELLED'), 'grey');
});

const s3 = { ...emptyTransferForm('team-a'), name: 'iris-1', displayName: ' Iris ', bucket: 'models', key: 'iris/', accessKeyId: 'AKID', secretAccessKey: 'S', destUri: 'quay.io/org/iris:v1', username: 'robot', password: 'pw', modelName: 'iris', versionName: 'v1' };

test('the form is checked in the page before anything is sent', () => {
  assert.equal(transferFormProblem(s3), null);
  assert.match(transferFormProblem({ ...s3, name: 'Iris_1' }) ?? '', /job name/);
  assert.match(transferFormProblem({ ...s3, namespace: '' }) ?? '', /namespace/);
  assert.match(transferFormProblem({ ...s3, secretAccessKey: '' }) ?? '', /credentials/);
  assert.match(transferFormProblem({ ...s3, sourceType: 'uri' }) ?? '', /URI/);
  assert.match(transferFormProblem({ ...s3, destUri: '/org/iris' }) ?? '', /OCI reference/);
  assert.match(transferFormProblem({ ...s3, password: '' }) ?? '', /password/);
});

test('the request is upstream\'s ModelTransferJob for a new model', () => {
  assert.deepEqual(transferRequest(s3), {
    name: 'iris-1',
    jobDisplayName: 'Iris',
    namespace: 'team-a',
    source: { type: 's3', bucket: 'models', key: 'iris/', awsAccessKeyId: 'AKID', awsSecretAccessKey: 'S' },
    destination: { type: 'oci', uri: 'quay.io/org/iris:v1', username: 'robot', password: 'pw' },
    uploadIntent: 'create_model',
    registeredModelName: 'iris',
    modelVersionName: 'v1',
  });
  assert.deepEqual(transferRequest({ ...s3, sourceType: 'uri', uri: ' hf://org/m ' }).source, { type: 'uri', uri: 'hf://org/m' });
});
