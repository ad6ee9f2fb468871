// The model catalog: sources with their status, and models with the catalog's own filters
// (/models/filter_options), a search and server-side paging.
import { useEffect, useState } from 'react';
import { Content, FormSelect, FormSelectOption, PageSection, SearchInput, Title, Toolbar, ToolbarContent, ToolbarItem } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { get, type ListPage } from '../api';
import { Empty, ErrorBanner, Loading, PagerNav, StatusLabel, useAsync } from '../common';
import { catalogFilter } from '../format';
import { currentToken, firstPage, loaded, type PagerState } from '../pager';
import { href, type Route } from '../router';
import type { CatalogModel, CatalogSource, FilterOptions } from '../types';

type CatalogRoute = Extract<Route, { screen: 'catalog' }>;

function sourceColor(s: CatalogSource) {
  if (s.status === 'available') return 'green' as const;
  if (s.status === 'error') return 'red' as const;
  return 'grey' as const;
}

function Sources({ sources }: { sources: CatalogSource[] }) {
  if (sources.length === 0) return <Empty title="No catalog sources">The catalog has no sources configured.</Empty>;
  return (
    <Table aria-label="Catalog sources" variant="compact" data-testid="sources-table">
      <Thead>
        <Tr>
          <Th>Source</Th>
          <Th>ID</Th>
          <Th>Status</Th>
          <Th>Detail</Th>
        </Tr>
      </Thead>
      <Tbody>
        {sources.map((s) => (
          <Tr key={s.id}>
            <Td dataLabel="Source">{s.name}</Td>
            <Td dataLabel="ID">{s.id}</Td>
            <Td dataLabel="Status">
              <StatusLabel color={sourceColor(s)}>{s.enabled === false ? 'disabled' : (s.status ?? 'unknown')}</StatusLabel>
            </Td>
            <Td dataLabel="Detail">{s.error ?? ''}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}

export default function Catalog({ route }: { route: CatalogRoute }) {
  const [search, setSearch] = useState(route.q);
  const [q, setQ] = useState(route.q);
  const [source, setSource] = useState(route.source);
  const [chosen, setChosen] = useState<Record<string, string>>({});
  const [pager, setPager] = useState<PagerState>(firstPage);
  const filterQuery = catalogFilter(chosen);
  const token = currentToken(pager);

  useEffect(() => {
    const t = setTimeout(() => setQ(search.trim()), 300);
    return () => clearTimeout(t);
  }, [search]);
  useEffect(() => setPager(firstPage), [q, source, filterQuery]);
  useEffect(() => {
    const want = href({ screen: 'catalog', source, q, filter: '' });
    if (window.location.hash !== want) window.history.replaceState(null, '', want);
  }, [source, q]);

  const [sources] = useAsync((signal) => get<ListPage<CatalogSource>>('/model_catalog/sources', { pageSize: 100 }, signal), []);
  const [options] = useAsync((signal) => get<FilterOptions>('/model_catalog/models/filter_options', undefined, signal), []);
  const [models] = useAsync((signal) => get<ListPage<CatalogModel>>('/model_catalog/models', { source: source || undefined, q, filterQuery, pageSize: 20, nextPageToken: token }, signal), [source, q, filterQuery, token]);
  useEffect(() => {
    if (models.state === 'ok') setPager((p) => loaded(p, models.data.nextPageToken));
  }, [models]);

  const stringFilters = options.state === 'ok' ? Object.entries(options.data.filters ?? {}).filter(([, o]) => o.type === 'string' && (o.values?.length ?? 0) > 0) : [];

  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Catalog</Title>
        <Content component="p">Models published by the catalog&apos;s sources.</Content>
      </PageSection>
      <PageSection>
        <Title headingLevel="h2">Sources</Title>
        {sources.state === 'loading' && <Loading what="catalog sources" />}
        {sources.state === 'error' && <ErrorBanner error={sources.error} what="catalog sources" />}
        {sources.state === 'ok' && <Sources sources={sources.data.items ?? []} />}
      </PageSection>
      <PageSection>
        <Title headingLevel="h2">Models</Title>
        <Toolbar>
          <ToolbarContent>
            <ToolbarItem>
              <SearchInput aria-label="Search catalog models" placeholder="Search" value={search} onChange={(_e, v) => setSearch(v)} onClear={() => setSearch('')} />
            </ToolbarItem>
            <ToolbarItem>
              <FormSelect aria-label="Source" value={source} onChange={(_e, v) => setSource(v)}>
                <FormSelectOption value="" label="All sources" />
                {sources.state === 'ok' && (sources.data.items ?? []).map((s) => <FormSelectOption key={s.id} value={s.id} label={s.name} />)}
              </FormSelect>
            </ToolbarItem>
            {stringFilters.map(([key, o]) => (
              <ToolbarItem key={key}>
                <FormSelect aria-label={`Filter by ${key}`} value={chosen[key] ?? ''} onChange={(_e, v) => setChosen((c) => ({ ...c, [key]: v }))}>
                  <FormSelectOption value="" label={`Any ${key}`} />
                  {(o.values ?? []).map((v) => (
                    <FormSelectOption key={String(v)} value={String(v)} label={String(v)} />
                  ))}
                </FormSelect>
              </ToolbarItem>
            ))}
          </ToolbarContent>
        </Toolbar>
        {options.state === 'error' && <ErrorBanner error={options.error} what="catalog filters" />}
        {models.state === 'loading' && <Loading what="catalog models" />}
        {models.state === 'error' && <ErrorBanner error={models.error} what="catalog models" />}
        {models.state === 'ok' && (models.data.items ?? []).length === 0 && <Empty title="No catalog model matches">Change the search or the filters.</Empty>}
        {models.state === 'ok' && (models.data.items ?? []).length > 0 && (
          <Table aria-label="Catalog models" variant="compact" data-testid="catalog-models-table">
            <Thead>
              <Tr>
                <Th>Name</Th>
                <Th>Source</Th>
                <Th>Provider</Th>
                <Th>License</Th>
                <Th>Tasks</Th>
              </Tr>
            </Thead>
            <Tbody>
              {models.data.items.map((m) => (
                <Tr key={`${m.source_id ?? ''}/${m.name}`}>
                  <Td dataLabel="Name">{m.source_id ? <a href={href({ screen: 'catalogModel', source: m.source_id, name: m.name })}>{m.name}</a> : m.name}</Td>
                  <Td dataLabel="Source">{m.source_id ?? ''}</Td>
                  <Td dataLabel="Provider">{m.provider ?? ''}</Td>
                  <Td dataLabel="License">{m.license ?? ''}</Td>
                  <Td dataLabel="Tasks">{(m.tasks ?? []).join(', ')}</Td>
                </Tr>
              ))}
            </Tbody>
          </Table>
        )}
        <PagerNav pager={pager} setPager={setPager} label="Pages of catalog models" />
      </PageSection>
    </>
  );
}
