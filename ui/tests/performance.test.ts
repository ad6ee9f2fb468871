import { test } from 'node:test';
import assert from 'node:assert/strict';
import { figure, figureColumns, isPositiveNumber, isTargetRps, latencyLabel, parsePerfFilters, perfChips, perfFilterParams, perfQuery, perfRows } from '../src/performance';
import { href, parseRoute } from '../src/router';

const mv = (v: string | number) =>
  typeof v === 'string' ? { metadataType: 'MetadataStringValue', string_value: v } : { metadataType: 'MetadataDoubleValue', double_value: v };

test('performance filters: read from the URL, invalid values left out, written back in one order', () => {
  const f = parsePerfFilters(new URLSearchParams('rps=40&maxLatency=35.5&latency=e2e_p95&hardware=H100&all=1&workload=rag'));
  assert.deepEqual(f, { workload: 'rag', hardware: 'H100', latency: 'e2e_p95', maxLatency: '35.5', rps: '40', all: true });
  assert.equal(new URLSearchParams(perfFilterParams(f) as Record<string, string>).toString(), 'workload=rag&hardware=H100&latency=e2e_p95&maxLatency=35.5&rps=40&all=1');
  assert.deepEqual(parsePerfFilters(new URLSearchParams('latency=tps_p90&maxLatency=-1&rps=1.5&all=yes')), {});
  assert.deepEqual(parsePerfFilters(new URLSearchParams('latency=ttft_p99;drop&maxLatency=1e3&rps=2147483648')), {});
  assert.deepEqual(perfFilterParams({ rps: '3', hardware: 'A100' }), { workload: undefined, hardware: 'A100', latency: undefined, maxLatency: undefined, rps: '3', all: undefined });
  const r = parseRoute('#/catalog/demo/org/m?rps=40&hardware=H100%20SXM&maxLatency=35');
  assert.deepEqual(r, { screen: 'catalogModel', source: 'demo', name: 'org/m', perf: { hardware: 'H100 SXM', maxLatency: '35', rps: '40' } });
  assert.equal(href(r), '#/catalog/demo/org/m?hardware=H100+SXM&maxLatency=35&rps=40');
  assert.equal(href({ screen: 'catalogModel', source: 's', name: 'm' }), '#/catalog/s/m');
});

test('isPositiveNumber and isTargetRps: what the inputs accept', () => {
  for (const ok of ['1', '41.5', '0.5', '120']) assert.ok(isPositiveNumber(ok), ok);
  for (const bad of ['', '0', '0.0', '-3', '1e3', 'ten', '1.', '.5', ' 1']) assert.ok(!isPositiveNumber(bad), bad);
  for (const ok of ['1', '40', '2147483647']) assert.ok(isTargetRps(ok), ok);
  for (const bad of ['0', '2147483648', '1.5', '-1', '', 'x', '99999999999']) assert.ok(!isTargetRps(bad), bad);
});

test('perfQuery: the catalog parameters of docs/catalog.md, the filterQuery over the artifacts', () => {
  assert.deepEqual(perfQuery({}), { filterQuery: undefined, targetRPS: undefined, latencyProperty: undefined, recommendations: 'true', orderBy: 'ttft_p90.double_value', sortOrder: 'ASC', pageSize: '100' });
  assert.deepEqual(perfQuery({ workload: 'rag', hardware: "O'Brien \\ GPU", latency: 'itl_mean', maxLatency: '20', rps: '40', all: true }, 50), {
    filterQuery: "use_case.string_value = 'rag' AND hardware_type.string_value = 'O\\'Brien \\\\ GPU' AND itl_mean.double_value <= 20",
    targetRPS: '40',
    latencyProperty: 'itl_mean',
    recommendations: undefined,
    orderBy: 'itl_mean.double_value',
    sortOrder: 'ASC',
    pageSize: '50',
  });
  // a maximum without a chosen latency applies to the catalog's default latency, ttft_p90
  assert.equal(perfQuery({ maxLatency: '100' }).filterQuery, 'ttft_p90.double_value <= 100');
});

test('perfChips: one chip per filter set', () => {
  assert.deepEqual(perfChips({ all: true }), []);
  assert.deepEqual(perfChips({ hardware: 'H100', maxLatency: '35', rps: '40', workload: 'chatbot' }), [
    { key: 'workload', category: 'Workload', label: 'chatbot' },
    { key: 'hardware', category: 'Hardware', label: 'H100' },
    { key: 'latency', category: 'Latency', label: 'TTFT P90 ≤ 35 ms' },
    { key: 'rps', category: 'Target RPS', label: '40 requests/s' },
  ]);
  assert.deepEqual(perfChips({ latency: 'e2e_mean' }), [{ key: 'latency', category: 'Latency', label: 'E2E Mean' }]);
  assert.equal(latencyLabel('itl_p99'), 'ITL P99');
  assert.equal(latencyLabel('bogus'), 'TTFT P90');
});

test('perfRows: the hardware configuration, the catalog computed figures as served, the latencies', () => {
  const rows = perfRows([
    {
      artifactType: 'metrics-artifact',
      customProperties: {
        config_id: mv('h100-2'),
        hardware_type: mv('H100'),
        hardware_count: { metadataType: 'MetadataIntValue', int_value: '2' },
        use_case: mv('chatbot'),
        ttft_p90: mv(30),
        e2e_p90: mv(700.456),
        tps_p90: mv(1010),
        requests_per_second: mv(20),
        replicas: { metadataType: 'MetadataIntValue', int_value: '2' },
        total_requests_per_second: mv(40),
        framework_type: mv('vllm'),
        framework_version: mv('v0.8.4'),
        hardware_note: mv('not a figure'),
      },
    },
    { customProperties: { ttft_p90: { metadataType: 'MetadataStringValue', string_value: 'fast' } } },
  ]);
  assert.deepEqual(rows[0], {
    key: 'h100-2', hardware: 'H100 × 2', workload: 'chatbot', replicas: 2, rps: 20, totalRps: 40,
    figures: { ttft_p90: 30, e2e_p90: 700.456, tps_p90: 1010 }, inputTokens: undefined, outputTokens: undefined, framework: 'vllm v0.8.4',
  });
  assert.deepEqual(rows[1], {
    key: '1', hardware: '—', workload: undefined, replicas: undefined, rps: undefined, totalRps: undefined,
    figures: {}, inputTokens: undefined, outputTokens: undefined, framework: undefined,
  });
  // the chosen latency's percentile, that metric first, only the columns some row has
  assert.deepEqual(figureColumns(rows, 'e2e_p90').map((c) => c.label), ['E2E P90', 'TTFT P90', 'TPS P90']);
  assert.deepEqual(figureColumns(rows, 'ttft_p95'), []);
  assert.equal(figureColumns(rows, 'ttft_p90')[2].unit, 'tokens/s');
  assert.equal(figure(700.456), '700.46');
  assert.equal(figure(12), '12');
  assert.equal(figure(undefined), '—');
});
