// The model catalog: sources with their status, and models with the catalog's own filters
// (/models/filter_options), a search and server-side paging; the models as cards (upstream's
// gallery: logo, name, provider, description, labels), or as a table.
import { useEffect, useRef, useState } from 'react';
import { Card, CardBody, CardFooter, CardHeader, CardTitle, Content, FormSelect, FormSelectOption, Gallery, Label, LabelGroup, PageSection, SearchInput, Title, ToggleGroup, ToggleGroupItem, Toolbar, ToolbarContent, ToolbarFilter, ToolbarGroup, ToolbarItem } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { get, type ListPage } from '../api';
import { CatalogLogo, Empty, ErrorBanners, Loading, PagerNav, StatusLabel, useAsync } from '../common';
import { catalogFilter } from '../format';
import { currentToken, firstPage, goNext, loaded, type PagerState } from '../pager';
import { CATALOG_FILTERS, href, type CatalogFilterParam, type CatalogFilters, type CatalogView, type Route } from '../router';
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

function modelHref(m: CatalogModel): string | null {
  return m.source_id ? href({ screen: 'catalogModel', source: m.source_id, name: m.name }) : null;
}

const modelKey = (m: CatalogModel) => `${m.source_id ?? ''}/${m.name}`;

/** One card per model, upstream's shape: logo and source, name (the link), provider, description cut to three lines, task and license labels. */
function ModelCards({ models, sourceNames }: { models: CatalogModel[]; sourceNames: Map<string, string> }) {
  return (
    <Gallery hasGutter minWidths={{ default: '100%', md: '18rem' }} component="ul" aria-label="Catalog models" data-testid="catalog-models">
      {models.map((m) => {
        const link = modelHref(m);
        const titleId = `model-card-${modelKey(m).replace(/[^A-Za-z0-9_-]/g, '_')}`;
        const source = m.source_id ? (sourceNames.get(m.source_id) ?? m.source_id) : '';
        return (
          <li key={modelKey(m)} className="mp-card-item">
            <Card component="article" isCompact isFullHeight aria-labelledby={titleId} data-testid="catalog-model-card">
              <CardHeader>
                <div className="mp-card-head">
                  <CatalogLogo logo={m.logo} size={40} fallback />
                  {source && (
                    <Label isCompact variant="outline" data-testid="card-source">
                      {source}
                    </Label>
                  )}
                </div>
              </CardHeader>
              <CardTitle component="h3" id={titleId}>
                {link ? <a href={link}>{m.name}</a> : m.name}
              </CardTitle>
              <CardBody>
                {m.provider && (
                  <Content component="p" className="mp-card-provider">
                    {m.provider}
                  </Content>
                )}
                <Content component="p" className="mp-card-description" title={m.description ?? undefined}>
                  {m.description || 'No description.'}
                </Content>
              </CardBody>
              {((m.tasks ?? []).length > 0 || m.license) && (
                <CardFooter>
                  <LabelGroup numLabels={4} aria-label={`Labels of ${m.name}`}>
                    {(m.tasks ?? []).map((t) => (
                      <Label key={`task-${t}`} isCompact color="blue">
                        {t}
                      </Label>
                    ))}
                    {m.license && (
                      <Label key="license" isCompact color="grey">
                        {m.license}
                      </Label>
                    )}
                  </LabelGroup>
                </CardFooter>
              )}
            </Card>
          </li>
        );
      })}
    </Gallery>
  );
}

function ModelTable({ models }: { models: CatalogModel[] }) {
  return (
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
        {models.map((m) => {
          const link = modelHref(m);
          return (
            <Tr key={modelKey(m)}>
              <Td dataLabel="Name">
                <CatalogLogo logo={m.logo} />
                {link ? <a href={link}>{m.name}</a> : m.name}
              </Td>
              <Td dataLabel="Source">{m.source_id ?? ''}</Td>
              <Td dataLabel="Provider">{m.provider ?? ''}</Td>
              <Td dataLabel="License">{m.license ?? ''}</Td>
              <Td dataLabel="Tasks">{(m.tasks ?? []).join(', ')}</Td>
            </Tr>
          );
        })}
      </Tbody>
    </Table>
  );
}

export default function Catalog({ route }: { route: CatalogRoute }) {
  const [search, setSearch] = useState(route.q);
  const [q, setQ] = useState(route.q);
  const [source, setSource] = useState(route.source);
  const [chosen, setChosen] = useState<CatalogFilters>(route.filters);
  const [view, setView] = useState<CatalogView>(route.view ?? 'cards');
  const [pager, setPager] = useState<PagerState>(firstPage);
  // the page of the URL a reload asked for: walked to by nextPageToken once, then forgotten
  const wantPage = useRef(route.page - 1);
  const filterQuery = catalogFilter(Object.fromEntries(CATALOG_FILTERS.map((f) => [f.key, chosen[f.param] ?? ''])));
  const token = currentToken(pager);

  useEffect(() => {
    const t = setTimeout(() => setQ(search.trim()), 300);
    return () => clearTimeout(t);
  }, [search]);
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    wantPage.current = 0;
    setPager(firstPage);
  }, [q, source, filterQuery]);
  useEffect(() => {
    const want = href({ screen: 'catalog', source, q, filters: chosen, page: Math.max(pager.index, wantPage.current) + 1, view });
    if (window.location.hash !== want) window.history.replaceState(null, '', want);
  }, [source, q, chosen, pager.index, view]);

  const [sources, reloadSources] = useAsync((signal) => get<ListPage<CatalogSource>>('/model_catalog/sources', { pageSize: 100 }, signal), []);
  const [options, reloadOptions] = useAsync((signal) => get<FilterOptions>('/model_catalog/models/filter_options', undefined, signal), []);
  const [models, reloadModels] = useAsync((signal) => get<ListPage<CatalogModel>>('/model_catalog/models', { source: source || undefined, q, filterQuery, orderBy: 'NAME', sortOrder: 'ASC', pageSize: 20, nextPageToken: token }, signal), [source, q, filterQuery, token]);
  useEffect(() => {
    if (models.state !== 'ok') return;
    const next = models.data.nextPageToken ?? '';
    if (pager.index < wantPage.current && next) setPager((p) => goNext(loaded(p, next)));
    else {
      wantPage.current = 0;
      setPager((p) => loaded(p, next));
    }
  }, [models]);

  const values = (key: string): string[] => {
    if (options.state !== 'ok') return [];
    const o = options.data.filters?.[key];
    return o && o.type === 'string' ? (o.values ?? []).map(String) : [];
  };
  const sourceNames = new Map(sources.state === 'ok' ? (sources.data.items ?? []).map((x) => [x.id, x.name] as const) : []);
  const setFilter = (param: CatalogFilterParam, v: string) => setChosen((c) => ({ ...c, [param]: v || undefined }));

  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Catalog</Title>
        <Content component="p">Models published by the catalog&apos;s sources.</Content>
        <ErrorBanners
          calls={[
            { state: sources, what: 'catalog sources', retry: reloadSources },
            { state: options, what: 'catalog filters', retry: reloadOptions },
            { state: models, what: 'catalog models', retry: reloadModels },
          ]}
        />
      </PageSection>
      <PageSection>
        <Title headingLevel="h2">Sources</Title>
        {sources.state === 'loading' && <Loading what="catalog sources" />}
        {sources.state === 'ok' && <Sources sources={sources.data.items ?? []} />}
      </PageSection>
      <PageSection>
        <Title headingLevel="h2">Models</Title>
        <Toolbar clearAllFilters={() => setChosen({})} clearFiltersButtonText="Clear all filters">
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
            <ToolbarGroup variant="filter-group">
              {CATALOG_FILTERS.map((f) => {
                const v = chosen[f.param] ?? '';
                const vs = values(f.key);
                return (
                  <ToolbarFilter key={f.param} categoryName={f.label} labels={v ? [v] : []} deleteLabel={() => setFilter(f.param, '')} deleteLabelGroup={() => setFilter(f.param, '')}>
                    <FormSelect aria-label={`Filter by ${f.label.toLowerCase()}`} value={v} isDisabled={vs.length === 0 && !v} onChange={(_e, x) => setFilter(f.param, x)}>
                      <FormSelectOption value="" label={vs.length === 0 && !v ? `${f.label}: none in the catalog` : `Any ${f.label.toLowerCase()}`} />
                      {(v && !vs.includes(v) ? [v, ...vs] : vs).map((x) => (
                        <FormSelectOption key={x} value={x} label={`${f.label}: ${x}`} />
                      ))}
                    </FormSelect>
                  </ToolbarFilter>
                );
              })}
            </ToolbarGroup>
            <ToolbarItem align={{ default: 'alignEnd' }}>
              <ToggleGroup aria-label="Show the models as">
                <ToggleGroupItem text="Cards" buttonId="catalog-view-cards" isSelected={view === 'cards'} onChange={() => setView('cards')} />
                <ToggleGroupItem text="Table" buttonId="catalog-view-table" isSelected={view === 'table'} onChange={() => setView('table')} />
              </ToggleGroup>
            </ToolbarItem>
          </ToolbarContent>
        </Toolbar>
        {models.state === 'loading' && <Loading what="catalog models" />}
        {models.state === 'ok' && (models.data.items ?? []).length === 0 && <Empty title="No catalog model matches">Change the search or the filters.</Empty>}
        {models.state === 'ok' && (models.data.items ?? []).length > 0 && (view === 'table' ? <ModelTable models={models.data.items} /> : <ModelCards models={models.data.items} sourceNames={sourceNames} />)}
        <PagerNav pager={pager} setPager={setPager} label="Pages of catalog models" />
      </PageSection>
    </>
  );
}
