// One catalog model: its details, artifacts and performance data.
import { useState } from 'react';
import { Breadcrumb, BreadcrumbItem, Button, PageSection, Title } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { get, pathOf, type ListPage } from '../api';
import { Empty, ErrorBanners, Fields, Loading, PropertiesTable, useAsync } from '../common';
import { absoluteTime, propertyRows } from '../format';
import { href } from '../router';
import { Markdown } from '../markdown';
import { RegisterModelModal, type RegisterInitial } from './RegisterModel';
import type { CatalogArtifact, CatalogModel as Model } from '../types';

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

export default function CatalogModel({ source, name }: { source: string; name: string }) {
  const base = (kind: string) => '/' + pathOf('model_catalog', 'sources', source, kind, name);
  const [model, reloadModel] = useAsync((signal) => get<Model>(base('models'), undefined, signal), [source, name]);
  const [arts, reloadArts] = useAsync((signal) => get<ListPage<CatalogArtifact>>(base('artifacts'), { artifactType: 'model-artifact', pageSize: 50 }, signal), [source, name]);
  const [registering, setRegistering] = useState(false);
  const [perf, reloadPerf] = useAsync((signal) => get<ListPage<CatalogArtifact>>(base('performance_artifacts'), { pageSize: 50 }, signal), [source, name]);
  return (
    <>
      <PageSection>
        <Breadcrumb>
          <BreadcrumbItem to={href({ screen: 'catalog', source: '', q: '', filters: {}, page: 1 })}>Catalog</BreadcrumbItem>
          <BreadcrumbItem isActive>{name}</BreadcrumbItem>
        </Breadcrumb>
        <Title headingLevel="h1" data-testid="catalog-model-name">
          {name}
        </Title>
        {model.state === 'ok' && (
          <Button variant="primary" onClick={() => setRegistering(true)}>
            Register model
          </Button>
        )}
        {model.state === 'loading' && <Loading what="catalog model" />}
        <ErrorBanners
          calls={[
            { state: model, what: `catalog model ${name}`, retry: reloadModel },
            { state: arts, what: 'its artifacts', retry: reloadArts },
            { state: perf, what: 'its performance data', retry: reloadPerf },
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
        <Title headingLevel="h2">Performance</Title>
        {perf.state === 'loading' && <Loading what="performance data" />}
        {perf.state === 'ok' && <ArtifactsTable items={perf.data.items ?? []} caption="Performance data" />}
      </PageSection>
      {registering && model.state === 'ok' && (
        <RegisterModelModal
          initial={registerFromCatalog(source, model.data, arts.state === 'ok' ? (arts.data.items ?? []) : [])}
          onClose={(created, version) => {
            setRegistering(false);
            if (created) window.location.hash = href({ screen: 'model', id: created, version });
          }}
        />
      )}
    </>
  );
}
