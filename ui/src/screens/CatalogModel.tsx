// One catalog model: its details, artifacts and performance data.
import { useEffect, useState } from 'react';
import { ActionList, ActionListItem, Breadcrumb, BreadcrumbItem, Button, PageSection, Title } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { get, pathOf, type ListPage } from '../api';
import { CatalogLogo, Empty, ErrorBanners, Fields, Loading, PropertiesTable, useAsync, type Async } from '../common';
import { absoluteTime, propertyRows } from '../format';
import { href } from '../router';
import { Markdown } from '../markdown';
import { perfQuery, type PerfFilters } from '../performance';
import PerformanceTable from './PerformanceTable';
import { RegisterModelModal, type RegisterInitial } from './RegisterModel';
import type { CatalogArtifact, FilterOptions, CatalogModel as Model } from '../types';

function ArtifactsTable({ items, caption }: { items: CatalogArtifact[]; caption: string }) {
  if (items.length === 0) return <Empty title={`No ${caption.toLowerCase()}`} />;
  return (
    <Table aria-label={caption} variant="compact">
      <Thead>
        <Tr>
          <Th>Type</Th>
          <Th>URI</Th>
          <Th>Properties</Th>
        </Tr>
      </Thead>
      <Tbody>
        {items.map((a, i) => (
          <Tr key={i}>
            <Td dataLabel="Type">{a.artifactType ?? ''}</Td>
            <Td dataLabel="URI" className="mp-mono">
              {a.uri ?? ''}
            </Td>
            <Td dataLabel="Properties">
              {propertyRows(a.customProperties)
                .map((r) => `${r.key}=${r.value}`)
                .join(', ')}
            </Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}

/** The register form from a catalog model: its name, description, first artifact, tasks as labels, and where it came from. */
export function registerFromCatalog(source: string, m: Model, arts: CatalogArtifact[]): RegisterInitial {
  const art = arts.find((a) => a.uri && (a.artifactType ?? 'model-artifact') === 'model-artifact');
  const slash = m.name.lastIndexOf('/');
  const fmt = art?.customProperties?.format as { string_value?: string } | undefined;
  return {
    name: m.name,
    description: m.description ?? '',
    versionName: 'v1',
    uri: art?.uri ?? '',
    format: fmt?.string_value ?? '',
    labels: m.tasks ?? [],
    source: {
      modelSourceKind: 'catalog',
      modelSourceClass: source,
      modelSourceName: m.name,
      // the repository part of an "org/model" name, as upstream's repositoryName
      modelSourceGroup: slash > 0 ? m.name.slice(0, slash) : undefined,
      modelSourceId: m.id || undefined,
    },
  };
}

/** The values of an artifact property in the catalog's filter_options (upstream's source of the hardware and workload choices). */
function artifactValues(o: Async<FilterOptions>, prop: string): string[] {
  if (o.state !== 'ok') return [];
  const f = o.data.filters?.[`artifacts.${prop}.string_value`];
  return f && f.type === 'string' ? (f.values ?? []).map(String) : [];
}

export default function CatalogModel({ source, name, perf: initialPerf }: { source: string; name: string; perf?: PerfFilters }) {
  const base = (kind: string) => '/' + pathOf('model_catalog', 'sources', source, kind, name);
  const [model, reloadModel] = useAsync((signal) => get<Model>(base('models'), undefined, signal), [source, name]);
  const [arts, reloadArts] = useAsync((signal) => get<ListPage<CatalogArtifact>>(base('artifacts'), { artifactType: 'model-artifact', pageSize: 50 }, signal), [source, name]);
  // the register form, then ("Register and deploy") the new version's Deploy dialog
  const [registering, setRegistering] = useState<'' | 'register' | 'deploy'>('');
  const [filters, setFilters] = useState<PerfFilters>(initialPerf ?? {});
  const query = perfQuery(filters);
  const [perf, reloadPerf] = useAsync((signal) => get<ListPage<CatalogArtifact>>(base('performance_artifacts'), query, signal), [source, name, JSON.stringify(query)]);
  const [options, reloadOptions] = useAsync((signal) => get<FilterOptions>('/model_catalog/models/filter_options', undefined, signal), []);
  // the filters live in the URL (replaceState: no navigation, as the catalog page's)
  useEffect(() => {
    const want = href({ screen: 'catalogModel', source, name, perf: filters });
    if (window.location.hash !== want) window.history.replaceState(null, '', want);
  }, [source, name, filters]);
  return (
    <>
      <PageSection>
        <Breadcrumb>
          <BreadcrumbItem to={href({ screen: 'catalog', source: '', q: '', filters: {}, page: 1 })}>Catalog</BreadcrumbItem>
          <BreadcrumbItem isActive>{name}</BreadcrumbItem>
        </Breadcrumb>
        <Title headingLevel="h1" data-testid="catalog-model-name">
          {model.state === 'ok' && <CatalogLogo logo={model.data.logo} size={32} />}
          {name}
        </Title>
        {model.state === 'ok' && (
          <ActionList>
            <ActionListItem>
              <Button variant="primary" onClick={() => setRegistering('register')}>
                Register model
              </Button>
            </ActionListItem>
            <ActionListItem>
              <Button variant="secondary" onClick={() => setRegistering('deploy')}>
                Register and deploy
              </Button>
            </ActionListItem>
          </ActionList>
        )}
        {model.state === 'loading' && <Loading what="catalog model" />}
        <ErrorBanners
          calls={[
            { state: model, what: `catalog model ${name}`, retry: reloadModel },
            { state: arts, what: 'its artifacts', retry: reloadArts },
            { state: perf, what: 'its performance data', retry: reloadPerf },
            { state: options, what: "the catalog's hardware and workload types", retry: reloadOptions },
          ]}
        />
        {model.state === 'ok' && (
          <>
            <Fields
              items={[
                ['Source', source],
                ['Description', model.data.description],
                ['Provider', model.data.provider],
                ['License', model.data.license],
                ['Tasks', (model.data.tasks ?? []).join(', ')],
                ['Library', model.data.libraryName],
                ['Last updated', absoluteTime(model.data.lastUpdateTimeSinceEpoch)],
              ]}
            />
            <Title headingLevel="h2">Properties</Title>
            <PropertiesTable props={model.data.customProperties} caption="Properties of the catalog model" />
            {model.data.readme && (
              <>
                <Title headingLevel="h2">Model card</Title>
                <Markdown text={model.data.readme} label={`Model card of ${name}`} />
              </>
            )}
          </>
        )}
      </PageSection>
      <PageSection>
        <Title headingLevel="h2">Artifacts</Title>
        {arts.state === 'loading' && <Loading what="artifacts" />}
        {arts.state === 'ok' && <ArtifactsTable items={arts.data.items ?? []} caption="Artifacts" />}
      </PageSection>
      <PageSection>
        <PerformanceTable perf={perf} filters={filters} setFilters={setFilters} hardwareTypes={artifactValues(options, 'hardware_type')} workloads={artifactValues(options, 'use_case')} />
      </PageSection>
      {registering && model.state === 'ok' && (
        <RegisterModelModal
          initial={registerFromCatalog(source, model.data, arts.state === 'ok' ? (arts.data.items ?? []) : [])}
          onClose={(created, version) => {
            const then = registering;
            setRegistering('');
            if (created) window.location.hash = href(then === 'deploy' && version ? { screen: 'model', id: created, version, deploy: true } : { screen: 'model', id: created, version });
          }}
        />
      )}
    </>
  );
}
