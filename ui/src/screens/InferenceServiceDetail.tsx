// One InferenceService, live: its conditions, its TrainedModels (every condition, n/m loaded)
// and the recent Events of both, polled with ETag.
import { Breadcrumb, BreadcrumbItem, DescriptionList, DescriptionListDescription, DescriptionListGroup, DescriptionListTerm, PageSection, Title } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import type { ListPage } from '../api';
import { ConditionsTable, Empty, ErrorBanner, Fields, Loading, StatusLabel } from '../common';
import { isvcPath } from '../deployments';
import { loadedText, registryLink, relativeTime, summaryStatus } from '../format';
import { usePoll } from '../live';
import { href } from '../router';
import type { EventView, InferenceServiceView, TrainedModelView } from '../types';
import { pathOf } from '../api';

function TrainedModels({ ns, name }: { ns: string; name: string }) {
  const tms = usePoll<ListPage<TrainedModelView>>(isvcPath(ns, name, 'trainedmodels'), undefined);
  if (tms.state === 'loading') return <Loading what="TrainedModels" />;
  if (tms.state === 'error') return <ErrorBanner error={tms.error} what="TrainedModels" />;
  if (tms.data.items.length === 0) return <Empty title="No TrainedModels">No TrainedModel names this InferenceService.</Empty>;
  return (
    <>
      {tms.data.items.map((tm) => {
        const st = summaryStatus(tm.ready, tm.conditions);
        return (
          <section key={tm.name} aria-label={`TrainedModel ${tm.name}`} data-testid={`tm-${tm.name}`}>
            <Title headingLevel="h3">
              {tm.name} <StatusLabel color={st.color}>{st.label}</StatusLabel> <span data-testid="loaded">{loadedText(tm.loaded)}</span>
            </Title>
            <Fields
              items={[
                ['Storage URI', tm.storageUri],
                ['Framework', tm.framework],
                ['Memory', tm.memory],
                ['URL', tm.url ?? undefined],
              ]}
            />
            <ConditionsTable conditions={tm.conditions} caption={`Conditions of TrainedModel ${tm.name}`} />
          </section>
        );
      })}
    </>
  );
}

function Events({ ns }: { ns: string }) {
  const ev = usePoll<ListPage<EventView>>('/' + pathOf('namespaces', ns, 'events'), { limit: 30 });
  if (ev.state === 'loading') return <Loading what="events" />;
  if (ev.state === 'error') return <ErrorBanner error={ev.error} what="events" />;
  const items = ev.data.items.filter((e) => e.involvedObject.kind === 'TrainedModel' || e.involvedObject.kind === 'InferenceService');
  if (items.length === 0) return <Empty title="No recent events" />;
  const now = Date.now();
  return (
    <Table aria-label="Recent events" variant="compact" data-testid="events-table">
      <Thead>
        <Tr>
          <Th>Type</Th>
          <Th>Object</Th>
          <Th>Reason</Th>
          <Th>Message</Th>
          <Th>Count</Th>
          <Th>Last seen</Th>
        </Tr>
      </Thead>
      <Tbody>
        {items.map((e, i) => (
          <Tr key={i}>
            <Td dataLabel="Type">
              <StatusLabel color={e.type === 'Warning' ? 'orange' : 'grey'}>{e.type}</StatusLabel>
            </Td>
            <Td dataLabel="Object">{`${e.involvedObject.kind}/${e.involvedObject.name}`}</Td>
            <Td dataLabel="Reason">{e.reason}</Td>
            <Td dataLabel="Message">{e.message}</Td>
            <Td dataLabel="Count">{e.count ?? 1}</Td>
            <Td dataLabel="Last seen">{relativeTime(e.lastTimestamp ?? e.firstTimestamp, now)}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}

export default function InferenceServiceDetail({ ns, name }: { ns: string; name: string }) {
  const svc = usePoll<InferenceServiceView>(isvcPath(ns, name), undefined);
  const crumbs = (
    <Breadcrumb>
      <BreadcrumbItem to={href({ screen: 'deployments', ns })}>Deployments ({ns})</BreadcrumbItem>
      <BreadcrumbItem isActive>{name}</BreadcrumbItem>
    </Breadcrumb>
  );
  return (
    <>
      <PageSection>
        {crumbs}
        <Title headingLevel="h1">{name}</Title>
        {svc.state === 'loading' && <Loading what="InferenceService" />}
        {svc.state === 'error' && <ErrorBanner error={svc.error} what={`InferenceService ${ns}/${name}`} />}
        {svc.state === 'ok' && (
          <>
            <DescriptionList isHorizontal isCompact>
              <DescriptionListGroup>
                <DescriptionListTerm>Status</DescriptionListTerm>
                <DescriptionListDescription>
                  <StatusLabel color={summaryStatus(svc.data.ready, svc.data.conditions).color}>{summaryStatus(svc.data.ready, svc.data.conditions).label}</StatusLabel>
                </DescriptionListDescription>
              </DescriptionListGroup>
              <DescriptionListGroup>
                <DescriptionListTerm>Memory limit</DescriptionListTerm>
                <DescriptionListDescription>{svc.data.predictor?.memoryLimit ?? '—'}</DescriptionListDescription>
              </DescriptionListGroup>
              <DescriptionListGroup>
                <DescriptionListTerm>URL</DescriptionListTerm>
                <DescriptionListDescription>{svc.data.url ?? '—'}</DescriptionListDescription>
              </DescriptionListGroup>
              <DescriptionListGroup>
                <DescriptionListTerm>Registered model</DescriptionListTerm>
                <DescriptionListDescription>
                  {(() => {
                    const l = registryLink(svc.data.labels);
                    return l.registeredModelId ? <a href={href({ screen: 'model', id: l.registeredModelId, version: l.modelVersionId })}>{`model ${l.registeredModelId}${l.modelVersionId ? `, version ${l.modelVersionId}` : ''}`}</a> : 'not linked';
                  })()}
                </DescriptionListDescription>
              </DescriptionListGroup>
            </DescriptionList>
            <Title headingLevel="h2">Conditions</Title>
            <ConditionsTable conditions={svc.data.conditions} caption="Conditions of the InferenceService" />
          </>
        )}
      </PageSection>
      <PageSection>
        <Title headingLevel="h2">TrainedModels</Title>
        <TrainedModels ns={ns} name={name} />
      </PageSection>
      <PageSection>
        <Title headingLevel="h2">Recent events</Title>
        <Events ns={ns} />
      </PageSection>
    </>
  );
}
