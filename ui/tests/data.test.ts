import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, errorFromBody, pathOf, queryString, unwrap } from '../src/api';
import { currentToken, firstPage, goNext, goPrev, hasNext, hasPrev, loaded } from '../src/pager';
import { href, parseRoute } from '../src/router';
import { pickRegistry, registryLabel } from '../src/registry';
import { apiKeyProblem, catalogYamlProblem, createPayload, emptyForm, formOf, formProblems, organizationProblem, patternList, patternsProblem, previewProblem, previewRequest, sourceIdProblem, updatePayload } from '../src/catalogsources';

test('queryString: unset values dropped, arrays repeated, values escaped', () => {
  assert.equal(queryString(undefined), '');
  assert.equal(queryString({ a: '', b: undefined, c: null }), '');
  assert.equal(queryString({ pageSize: 20, filterQuery: "name ILIKE '%a b%'" }), '?pageSize=20&filterQuery=name+ILIKE+%27%25a+b%25%27');
  assert.equal(queryString({ source: ['x', 'y&z'] }), '?source=x&source=y%26z');
});

test('pathOf keeps slashes of a catalog model name and escapes the rest', () => {
  assert.equal(pathOf('model_catalog', 'sources', 'hf', 'models', 'org/model name?'), 'model_catalog/sources/hf/models/org/model%20name%3F');
});

test('errorFromBody: the BFF error object, a plain message, raw text', () => {
  const e = errorFromBody(409, '{"error":{"code":"409","message":"a model named x already exists","source":"registry"}}');
  assert.ok(e instanceof ApiError);
  assert.equal(e.status, 409);
  assert.equal(e.message, 'a model named x already exists');
  assert.equal(e.source, 'registry');
  assert.equal(errorFromBody(400, '{"message":"bad"}').message, 'bad');
  assert.equal(errorFromBody(502, '<html>Bad gateway</html>').message, '<html>Bad gateway</html>');
  assert.equal(errorFromBody(500, '').message, 'HTTP 500');
  assert.equal(errorFromBody(500, 'x'.repeat(1000)).message.length, 300);
});

test('unwrap: the data of the envelope, or a 502 when there is none', () => {
  assert.deepEqual(unwrap('{"data":{"items":[]}}'), { items: [] });
  assert.equal(unwrap('{"data":null}'), null);
  assert.throws(() => unwrap('{"items":[]}'), (e: unknown) => e instanceof ApiError && e.status === 502);
  assert.throws(() => unwrap('not json'));
});

test('pager: forward and back by nextPageToken, never past the last page', () => {
  let p = firstPage;
  assert.equal(currentToken(p), '');
  assert.equal(hasPrev(p), false);
  assert.equal(hasNext(p), false);
  assert.equal(goNext(p), p);
  p = loaded(p, 'T1');
  assert.equal(hasNext(p), true);
  p = goNext(p);
  assert.equal(currentToken(p), 'T1');
  assert.equal(hasNext(p), false);
  p = loaded(p, 'T2');
  p = goNext(p);
  assert.equal(currentToken(p), 'T2');
  p = loaded(p, '');
  assert.equal(hasNext(p), false);
  p = goPrev(p);
  assert.equal(currentToken(p), 'T1');
  assert.equal(p.index, 1);
  p = goPrev(goPrev(p));
  assert.equal(p.index, 0);
  assert.equal(currentToken(p), '');
  assert.equal(loaded(p, undefined).next, '');
});

test('routes: parse and build round trip', () => {
  assert.deepEqual(parseRoute(''), { screen: 'models', q: '', state: '', sort: '', owner: '' });
  assert.deepEqual(parseRoute('#/models?q=mni&state=ARCHIVED'), { screen: 'models', q: 'mni', state: 'ARCHIVED', sort: '', owner: '' });
  assert.deepEqual(parseRoute('#/models?owner=alice%40example.com'), { screen: 'models', q: '', state: '', sort: '', owner: 'alice@example.com' });
  assert.equal((parseRoute('#/models?state=bogus') as { state: string }).state, '');
  assert.deepEqual(parseRoute('#/models/12'), { screen: 'model', id: '12' });
  assert.deepEqual(parseRoute('#/models/12/versions/3?deploy=1'), { screen: 'model', id: '12', version: '3', deploy: true });
  assert.equal(href({ screen: 'model', id: '12', version: '3', deploy: true }), '#/models/12/versions/3?deploy=1');
  assert.deepEqual(parseRoute('#/models/12/versions/3?deploy=0'), { screen: 'model', id: '12', version: '3' });
  assert.deepEqual(parseRoute('#/catalog/hf/org/name%20x'), { screen: 'catalogModel', source: 'hf', name: 'org/name x', perf: {} });
  assert.deepEqual(parseRoute('#/deployments/team-a'), { screen: 'deployments', ns: 'team-a' });
  assert.deepEqual(parseRoute('#/deployments/team-a/sklearn'), { screen: 'isvc', ns: 'team-a', name: 'sklearn' });
  assert.deepEqual(parseRoute('#/nope/x'), { screen: 'notFound', path: '/nope/x' });
  assert.equal(parseRoute('#/models/%E0%A4%A').screen, 'model');
  for (const h of ['#/models?q=a+b', '#/models/5', '#/catalog?source=s1', '#/catalog/s1/org/m', '#/deployments', '#/deployments/ns/a']) {
    assert.equal(href(parseRoute(h)), h);
  }
});

test('catalog routes: curated filters, search and page in the URL, in one order', () => {
  assert.deepEqual(parseRoute('#/catalog?language=en&task=text-generation&q=granite&page=3&bogus=1'), {
    screen: 'catalog', source: '', q: 'granite', filters: { task: 'text-generation', language: 'en' }, page: 3,
  });
  assert.equal((parseRoute('#/catalog?page=0') as { page: number }).page, 1);
  assert.equal((parseRoute('#/catalog?page=x') as { page: number }).page, 1);
  assert.equal(href(parseRoute('#/catalog?language=en&task=text-generation&q=granite&page=3')), '#/catalog?q=granite&task=text-generation&language=en&page=3');
  assert.equal(href({ screen: 'catalog', source: '', q: '', filters: { license: '' }, page: 1 }), '#/catalog');
});

test('pickRegistry: the chosen registry while the list has it, else the first', () => {
  const l = [{ name: 'modelplane' }, { name: 'mr-b', displayName: 'Team B' }];
  assert.equal(pickRegistry(l, 'mr-b'), 'mr-b');
  assert.equal(pickRegistry(l, null), 'modelplane');
  assert.equal(pickRegistry(l, 'gone'), 'modelplane');
  assert.equal(registryLabel(l[1]), 'Team B (mr-b)');
  assert.equal(registryLabel(l[0]), 'modelplane');
  assert.equal(registryLabel({ name: 'x', displayName: 'x' }), 'x');
});

test('the MCP servers route keeps its search', () => {
  assert.deepEqual(parseRoute('#/mcp'), { screen: 'mcp', q: '' });
  assert.deepEqual(parseRoute('#/mcp?q=deploy%20tools'), { screen: 'mcp', q: 'deploy tools' });
  assert.equal(href({ screen: 'mcp', q: 'a b' }), '#/mcp?q=a+b');
  assert.equal(href({ screen: 'mcp', q: '' }), '#/mcp');
});

test('catalog source form: the server rules said before sending', () => {
  assert.equal(sourceIdProblem(''), 'An id is required.');
  assert.equal(sourceIdProblem('Bad-Id'), 'Only lowercase letters, digits and underscores.');
  assert.equal(sourceIdProblem('___'), 'At least one letter or digit.');
  assert.equal(sourceIdProblem('a'.repeat(239)), 'At most 238 characters.');
  assert.equal(sourceIdProblem('team_models_2'), null);
  assert.match(catalogYamlProblem('  ') ?? '', /required/);
  assert.equal(catalogYamlProblem('models: []'), null);
  assert.deepEqual(parseRoute('#/settings/catalog'), { screen: 'catalogSources' });
  assert.equal(href({ screen: 'catalogSources' }), '#/settings/catalog');
});

test('catalog route: the table view is in the URL, the cards are the default', () => {
  assert.equal((parseRoute('#/catalog?view=table') as { view?: string }).view, 'table');
  assert.equal((parseRoute('#/catalog?view=bogus') as { view?: string }).view, undefined);
  assert.equal(href(parseRoute('#/catalog?task=x&view=table&page=2')), '#/catalog?task=x&page=2&view=table');
  assert.equal(href({ screen: 'catalog', source: '', q: '', filters: {}, page: 1, view: 'cards' }), '#/catalog');
});

test('catalog source forms: each problem in words, field by field', () => {
  assert.equal(sourceIdProblem('a'.repeat(238)), null);
  assert.equal(organizationProblem(''), 'An organization is required: the Hugging Face organization whose models the source lists.');
  assert.equal(organizationProblem('ibm/granite'), 'An organization name: letters, digits, "-", "_" and ".", without "/" or spaces.');
  assert.equal(organizationProblem('ibm-granite'), null);
  assert.equal(apiKeyProblem(''), null);
  assert.equal(apiKeyProblem('secret'), 'A Hugging Face access token starts with "hf_".');
  assert.equal(apiKeyProblem('hf_a b'), 'An access token has no spaces.');
  assert.equal(apiKeyProblem('hf_good'), null);
  assert.deepEqual(patternList(' a/* \n\n b \n'), ['a/*', 'b']);
  assert.equal(patternsProblem('a b'), 'One pattern a line, without spaces: "a b".');
  assert.equal(patternsProblem(Array.from({ length: 1001 }, (_, i) => `m${i}`).join('\n')), 'At most 1000 patterns.');

  const hf = { ...emptyForm('hf'), id: 'Bad', name: ' ' };
  assert.deepEqual(formProblems(hf, 'add'), {
    id: 'Only lowercase letters, digits and underscores.',
    name: 'A name is required.',
    organization: 'An organization is required: the Hugging Face organization whose models the source lists.',
  });
  // editing: the id does not change; a default source keeps its name and catalog
  assert.deepEqual(formProblems({ ...emptyForm('yaml'), id: 'x' }, 'edit', true), {});
  assert.deepEqual(formProblems({ ...emptyForm('yaml'), id: 'x' }, 'edit', false), { name: 'A name is required.', yaml: 'The catalog is required: YAML with a models list.' });
});

test('catalog source forms: what add, edit and preview send', () => {
  const f = { ...emptyForm('hf'), id: 'hub', name: ' Hub ', organization: ' acme ', apiKey: 'hf_x', included: 'granite-*\n', excluded: '*-base' };
  assert.deepEqual(createPayload(f), { id: 'hub', name: 'Hub', type: 'hf', enabled: true, includedModels: ['granite-*'], excludedModels: ['*-base'], allowedOrganization: 'acme', apiKey: 'hf_x' });
  assert.equal('apiKey' in createPayload({ ...f, apiKey: '' }), false);
  // a default source: only what the server lets change (no name, no key)
  assert.deepEqual(updatePayload(f, true), { enabled: true, includedModels: ['granite-*'], excludedModels: ['*-base'], allowedOrganization: 'acme' });
  assert.deepEqual(updatePayload({ ...f, apiKey: '' }, false), { enabled: true, includedModels: ['granite-*'], excludedModels: ['*-base'], allowedOrganization: 'acme', name: 'Hub' });
  // the edit form never holds the stored key
  const stored = { id: 'hub', name: 'Hub', type: 'hf', allowedOrganization: 'acme', includedModels: ['a'], isDefault: false };
  assert.equal(formOf(stored).apiKey, '');
  assert.equal(formOf(stored).included, 'a');
  // a configured hf source without a typed key: named by id, so the server reads its Secret
  assert.deepEqual(previewRequest({ ...formOf(stored) }, stored), { type: 'hf', includedModels: ['a'], excludedModels: [], id: 'hub', properties: { allowedOrganization: 'acme' } });
  assert.deepEqual(previewRequest(f), { type: 'hf', includedModels: ['granite-*'], excludedModels: ['*-base'], properties: { allowedOrganization: 'acme', apiKey: 'hf_x' } });
  // a yaml source: its text, else the configured path
  const y = { id: 'd', type: 'yaml', yamlCatalogPath: 'd.yaml' };
  assert.deepEqual(previewRequest({ ...emptyForm('yaml'), yaml: 'models: []' }), { type: 'yaml', includedModels: [], excludedModels: [], properties: { yaml: 'models: []' } });
  assert.deepEqual(previewRequest(emptyForm('yaml'), y), { type: 'yaml', includedModels: [], excludedModels: [], id: 'd', properties: { yamlCatalogPath: 'd.yaml' } });
  assert.equal(previewProblem(emptyForm('yaml')), 'Write the catalog (YAML) first.');
  assert.equal(previewProblem(emptyForm('hf')), 'Name the organization (or the models to include) first.');
  assert.equal(previewProblem({ ...emptyForm('hf'), organization: 'acme' }), null);
});
