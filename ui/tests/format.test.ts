import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  absoluteTime, catalogFilter, conditionColor, filterLiteral, filterProperty, formatBytes, likeContains, loadedText,
  labelsOf, logoSrc, objectStorageProblems, objectStorageUri, propertyRows, registeredModelsFilter, registryLink, relativeTime,
  summaryStatus, toEpochMs, uriProblem,
} from '../src/format';

test('propertyRows: every MetadataValue type, sorted by key', () => {
  const rows = propertyRows({
    z: { metadataType: 'MetadataStringValue', string_value: '<b>x</b>' },
    a: { metadataType: 'MetadataIntValue', int_value: '42' },
    m: { metadataType: 'MetadataBoolValue', bool_value: false },
    d: { metadataType: 'MetadataDoubleValue', double_value: 0.5 },
    s: { metadataType: 'MetadataStructValue', struct_value: 'e30=' },
    weird: { metadataType: 'Other' },
  });
  assert.deepEqual(rows.map((r) => r.key), ['a', 'd', 'm', 's', 'weird', 'z']);
  assert.deepEqual(rows[0], { key: 'a', type: 'int', value: '42' });
  assert.deepEqual(rows[2], { key: 'm', type: 'bool', value: 'false' });
  assert.equal(rows[1].value, '0.5');
  assert.equal(rows[4].type, 'Other');
  assert.equal(rows[4].value, '{"metadataType":"Other"}');
  assert.equal(rows[5].value, '<b>x</b>');
  assert.deepEqual(propertyRows(undefined), []);
  assert.deepEqual(propertyRows(null), []);
});

test('relativeTime and toEpochMs: registry epoch-ms strings and RFC 3339', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');
  assert.equal(relativeTime(String(now - 30_000), now), '30 s ago');
  assert.equal(relativeTime('2026-12-01T11:55:00Z', now), '5 min ago');
  assert.equal(relativeTime(now - 7200_000, now), '2 h ago');
  assert.equal(relativeTime(now - 3 * 86400_000, now), '3 d ago');
  assert.equal(relativeTime(now + 10_000, now), 'in the future');
  assert.equal(relativeTime(undefined, now), '—');
  assert.equal(relativeTime('not a time', now), '—');
  assert.equal(toEpochMs(''), null);
  assert.equal(toEpochMs(Number.NaN), null);
  assert.equal(absoluteTime('1764590645000'), '2025-12-01 12:04:05 UTC');
  assert.equal(absoluteTime(null), '—');
});

test('conditions: colours and the one-line status', () => {
  assert.equal(conditionColor({ type: 'Ready', status: 'True' }), 'green');
  assert.equal(conditionColor({ type: 'Ready', status: 'False' }), 'red');
  assert.equal(conditionColor({ type: 'X', status: 'False', severity: 'Warning' }), 'orange');
  assert.equal(conditionColor({ type: 'Ready', status: 'Unknown' }), 'grey');
  assert.deepEqual(summaryStatus(true, []), { label: 'Ready', color: 'green' });
  const waiting = summaryStatus(false, [
    { type: 'Ready', status: 'False', reason: 'MemoryResourceUnavailable' },
    { type: 'FrameworkSupported', status: 'True' },
    { type: 'IsMMSPredictor', status: 'True' },
    { type: 'MemoryResourceAvailable', status: 'False', reason: 'MemoryResourceUnavailable', message: 'Not enough memory' },
  ]);
  assert.equal(waiting.label, 'MemoryResourceUnavailable');
  assert.equal(waiting.message, 'Not enough memory');
  assert.equal(summaryStatus(false, [{ type: 'Ready', status: 'False' }]).label, 'Ready false');
  assert.equal(summaryStatus(false, [{ type: 'Ready', status: 'Unknown', reason: 'Loading' }]).label, 'Loading');
  assert.equal(summaryStatus(false, undefined).label, 'Pending');
});

test('loadedText', () => {
  assert.equal(loadedText({ ready: 2, total: 3 }), '2/3 loaded');
  assert.equal(loadedText({ ready: 0, total: 0 }), '0/0 loaded');
  assert.equal(loadedText(null), '—');
  assert.equal(loadedText({ ready: Number.NaN, total: 1 }), '—');
});

test('filterQuery literals escape quotes, backslashes and LIKE wildcards', () => {
  assert.equal(filterLiteral("it's"), "'it\\'s'");
  assert.equal(filterLiteral('a\\b'), "'a\\\\b'");
  assert.equal(likeContains('50%_x'), '%50\\%\\_x%');
  assert.equal(registeredModelsFilter('', ''), '');
  assert.equal(registeredModelsFilter('  mnist ', ''), "(name ILIKE '%mnist%' OR description ILIKE '%mnist%' OR mnist = '')");
  assert.equal(registeredModelsFilter('owner', ''), "(name ILIKE '%owner%' OR description ILIKE '%owner%')");
  assert.equal(registeredModelsFilter('by bob', ''), "(name ILIKE '%by bob%' OR description ILIKE '%by bob%' OR `by bob` = '')");
  assert.equal(registeredModelsFilter('o\'k', 'ARCHIVED'), "(name ILIKE '%o\\'k%' OR description ILIKE '%o\\'k%' OR `o'k` = '') AND state = 'ARCHIVED'");
  assert.equal(registeredModelsFilter('', 'LIVE'), "state = 'LIVE'");
  assert.equal(registeredModelsFilter('', '', ' alice '), "owner = 'alice'");
  assert.equal(registeredModelsFilter('m', 'LIVE', "o'b"), "(name ILIKE '%m%' OR description ILIKE '%m%' OR m = '') AND state = 'LIVE' AND owner = 'o\\'b'");
});

test('catalogFilter: sorted keys, unset values left out, odd keys escaped', () => {
  assert.equal(catalogFilter({}), '');
  assert.equal(catalogFilter({ provider: '', license: 'apache-2.0' }), "license = 'apache-2.0'");
  assert.equal(catalogFilter({ b: 'x', a: 'y' }), "a = 'y' AND b = 'x'");
  assert.equal(filterProperty('hardware_type.string_value'), 'hardware_type.string_value');
  assert.equal(filterProperty('my-key'), '`my-key`');
  assert.equal(filterProperty('we`ird'), '`we\\`ird`');
});

test('formatBytes', () => {
  assert.equal(formatBytes(512), '512 B');
  assert.equal(formatBytes(1536), '1.5 KiB');
  assert.equal(formatBytes(300 * 1024 * 1024), '300 MiB');
  assert.equal(formatBytes(-1), '—');
  assert.equal(formatBytes(undefined), '—');
});

test('registryLink reads the registry controller labels', () => {
  assert.deepEqual(
    registryLink({ 'modelregistry.kubeflow.org/registered-model-id': '7', 'modelregistry.kubeflow.org/model-version-id': '9', 'modelregistry.kubeflow.org/inference-service-id': '3' }),
    { registeredModelId: '7', modelVersionId: '9', inferenceServiceId: '3' },
  );
  assert.deepEqual(registryLink({}), { registeredModelId: undefined, modelVersionId: undefined, inferenceServiceId: undefined });
  assert.deepEqual(registryLink(undefined), {});
});

test('labelsOf: string properties with an empty value, by name', () => {
  assert.deepEqual(labelsOf(undefined), []);
  assert.deepEqual(
    labelsOf({
      zeta: { metadataType: 'MetadataStringValue', string_value: '' },
      alpha: { metadataType: 'MetadataStringValue', string_value: '' },
      owner: { metadataType: 'MetadataStringValue', string_value: 'bob' },
      n: { metadataType: 'MetadataIntValue', int_value: '0' },
    }),
    ['alpha', 'zeta'],
  );
});

test('loadedColor and replicaStateColor', async () => {
  const { loadedColor, replicaStateColor } = await import('../src/format');
  assert.equal(loadedColor({ ready: 3, total: 3 }), 'green');
  assert.equal(loadedColor({ ready: 1, total: 3 }), 'orange');
  assert.equal(loadedColor({ ready: 0, total: 2 }), 'red');
  assert.equal(loadedColor({ ready: 0, total: 0 }), 'grey');
  assert.equal(loadedColor(null), 'grey');
  assert.equal(replicaStateColor('Loaded'), 'green');
  assert.equal(replicaStateColor('FailedToLoad'), 'red');
  assert.equal(replicaStateColor('Stale'), 'orange');
  assert.equal(replicaStateColor('Loading'), 'grey');
});

test('tmNameProblem and suggestTmName: RFC 1123 labels', async () => {
  const { tmNameProblem, suggestTmName } = await import('../src/format');
  assert.equal(tmNameProblem('iris-v1'), null);
  assert.match(tmNameProblem('') ?? '', /required/);
  assert.match(tmNameProblem('Iris') ?? '', /lower-case/);
  assert.match(tmNameProblem('iris.v1') ?? '', /lower-case/);
  assert.match(tmNameProblem('-iris') ?? '', /start and end/);
  assert.match(tmNameProblem('a'.repeat(64)) ?? '', /63/);
  assert.equal(suggestTmName('Iris Classifier', 'v1.2'), 'iris-classifier-v1-2');
  assert.equal(suggestTmName('--X--', '_'), 'x');
  assert.equal(tmNameProblem(suggestTmName('a'.repeat(80), 'v1')), null);
});

test('quantityBytes and memoryProblem: the Kubernetes quantity grammar', async () => {
  const { quantityBytes, memoryProblem } = await import('../src/format');
  assert.equal(quantityBytes('256Mi'), 256 * 2 ** 20);
  assert.equal(quantityBytes('1G'), 1e9);
  assert.equal(quantityBytes('1.5Gi'), 1.5 * 2 ** 30);
  assert.equal(quantityBytes('1e3'), 1000);
  assert.equal(quantityBytes('500m'), 0.5);
  assert.equal(quantityBytes('100'), 100);
  assert.equal(quantityBytes('-1Gi'), -(2 ** 30));
  assert.equal(quantityBytes('1GB'), null);
  assert.equal(quantityBytes('lots'), null);
  assert.equal(quantityBytes('1 Gi'), null);
  assert.equal(memoryProblem('256Mi'), null);
  assert.match(memoryProblem('') ?? '', /required/);
  assert.match(memoryProblem('1GB') ?? '', /quantity/);
  assert.match(memoryProblem('0') ?? '', /more than zero/);
  assert.match(memoryProblem('-1Mi') ?? '', /more than zero/);
});

test('memoryUse and memoryText: admitted TrainedModels against the limit, the others waiting', async () => {
  const { memoryUse, memoryText } = await import('../src/format');
  const ok = (b: number | null) => ({ memoryBytes: b, conditions: [{ type: 'MemoryResourceAvailable', status: 'True' }] });
  const full = { memoryBytes: 3 * 2 ** 30, conditions: [{ type: 'MemoryResourceAvailable', status: 'False' }] };
  const u = memoryUse(2 * 2 ** 30, [ok(256 * 2 ** 20), ok(512 * 2 ** 20), full, ok(null)]);
  assert.deepEqual(u, { limit: 2 * 2 ** 30, assigned: 768 * 2 ** 20, assignedCount: 2, waiting: 3 * 2 ** 30, waitingCount: 1 });
  assert.equal(memoryText(u), '768 MiB of 2.0 GiB assigned (2 TrainedModels); 3.0 GiB waiting for room (1 TrainedModel)');
  assert.equal(memoryText(memoryUse(null, [])), '0 B assigned (0 TrainedModels)');
});

test('object storage: the artifact URI as upstream writes it, and what is wrong with it', () => {
  const o = { endpoint: 'https://minio.example:9000', bucket: 'models', region: 'us-east-1', path: '/iris/v1' };
  assert.equal(objectStorageUri(o), 's3://models/iris/v1?endpoint=https%3A%2F%2Fminio.example%3A9000&defaultRegion=us-east-1');
  assert.equal(objectStorageUri({ ...o, region: '' }), 's3://models/iris/v1?endpoint=https%3A%2F%2Fminio.example%3A9000');
  assert.deepEqual(objectStorageProblems(o), {});
  const bad = objectStorageProblems({ endpoint: 'minio:9000', bucket: 'My_Bucket', region: 'US East', path: '/' });
  assert.deepEqual(Object.keys(bad).sort(), ['bucket', 'endpoint', 'path', 'region']);
  assert.match(objectStorageProblems({ ...o, endpoint: '' }).endpoint ?? '', /required/);
});

test('uriProblem: a hand-typed artifact URI', () => {
  assert.equal(uriProblem(''), undefined);
  assert.equal(uriProblem('s3://bucket/path'), undefined);
  assert.equal(uriProblem('hf://org/model'), undefined);
  assert.match(uriProblem('not a uri at all') ?? '', /no spaces/);
  assert.match(uriProblem('bucket/path') ?? '', /Not a URI/);
  assert.match(uriProblem('s3:///path') ?? '', /no bucket or host/);
});

test('catalog logos: image data URIs only; https: addresses, javascript:, other schemes and markup never', () => {
  assert.equal(logoSrc('data:image/svg+xml;base64,PHN2Zy8+'), 'data:image/svg+xml;base64,PHN2Zy8+');
  assert.equal(logoSrc('data:image/png;base64,iVBORw0KGgo='), 'data:image/png;base64,iVBORw0KGgo=');
  assert.equal(logoSrc('https://logos.example.com/x.png'), null);
  assert.equal(logoSrc('https://logos.example.com/a b.png'), null);
  assert.equal(logoSrc('https://logos.example.com/x.png" onerror="alert(1)'), null);
  assert.equal(logoSrc("https://x.example/'><img src=x onerror=alert(1)>"), null);
  assert.equal(logoSrc('https://user:pw@logos.example.com/x.png'), null);
  assert.equal(logoSrc('http://logos.example.com/x.png'), null);
  assert.equal(logoSrc('javascript:alert(1)'), null);
  assert.equal(logoSrc('JAVASCRIPT:alert(1)'), null);
  assert.equal(logoSrc(' javascript:alert(1)'), null);
  assert.equal(logoSrc('//logos.example.com/x.png'), null);
  assert.equal(logoSrc('/local.png'), null);
  assert.equal(logoSrc('https:\t//x'), null);
  assert.equal(logoSrc(`https://x.example/${'a'.repeat(2100)}`), null);
  assert.equal(logoSrc('data:text/html;base64,PHNjcmlwdD4='), null);
  assert.equal(logoSrc('data:image/svg+xml,<svg onload=alert(1)>'), null);
  assert.equal(logoSrc(undefined), null);
  assert.equal(logoSrc(`data:image/png;base64,${'A'.repeat(300 * 1024)}`), null);
});
