// One InferenceService, live: its status, the memory its TrainedModels are assigned against its
// limit (per pod under placement), the registered version it serves, its TrainedModels (status in words, "n/m loaded"
// coloured, one row per replica, the registered version each serves, conditions folded away)
// and the events of the InferenceService, its TrainedModels and its ConfigMaps, polled with ETag.
import { Alert, Breadcrumb, BreadcrumbItem, DescriptionList, DescriptionListDescription, DescriptionListGroup, DescriptionListTerm, PageSection, Progress, ProgressMeasureLocation, Title } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import type { ListPage } from '../api';
import { ConditionsSection, Empty, ErrorBanner, Fields, LoadedLabel, Loading, RegisteredVersionLink, ReplicasTable, StatusLabel } from '../common';
import { isvcPath } from '../deployments';
import { formatBytes, memoryText, memoryUse, registryLink, relativeTime, summaryStatus } from '../format';
import { usePoll } from '../live';
import { href } from '../router';
import type { EventView, InferenceServiceView, PlacementPodView, TrainedModelView } from '../types';

function TrainedModel({ tm }: { tm: TrainedModelView }) {
  const st = summaryStatus(tm.ready, tm.conditions);
  const link = registryLink(tm.labels);
  return (
    <section aria-label={`TrainedModel ${tm.name}`} data-testid={`tm-${tm.name}`}>
      <Title headingLevel="h3">
        {tm.name} <StatusLabel color={st.color}>{st.label}</StatusLabel> <LoadedLabel loaded={tm.loaded} />
      </Title>
      {!tm.ready && st.message && (
        <Alert isInline isPlain variant={st.color === 'red' ? 'danger' : 'info'} title={st.message} data-testid="tm-status-message" />
      )}
      <Fields
        items={[
          ['Registered version', link.registeredModelId ? <RegisteredVersionLink modelId={link.registeredModelId} versionId={link.modelVersionId} /> : 'not from the registry'],
          ['Storage URI', tm.storageUri],
          ['Framework', tm.framework],
          ['Memory', tm.memory],
          ['URL', tm.url ?? undefined],
        ]}
      />
      <ReplicasTable replicas={tm.replicas} caption={`Replicas of TrainedModel ${tm.name}`} />
      <ConditionsSection conditions={tm.conditions} caption={`Conditions of TrainedModel ${tm.name}`} testId="tm-conditions" />
    </section>
  );
}

function MemoryBar({ limit, tms }: { limit: number | null | undefined; tms: TrainedModelView[] }) {
  const u = memoryUse(limit, tms);
  const text = memoryText(u);
  if (u.limit === null || u.limit <= 0) return <span data-testid="memory-use">{text}</span>;
  const pct = Math.min(100, Math.round((u.assigned / u.limit) * 100));
  return (
    <div data-testid="memory-use">
      <Progress value={pct} title="Memory assigned" measureLocation={ProgressMeasureLocation.outside} aria-label="Memory assigned against the limit" variant={u.waitingCount > 0 ? 'warning' : undefined} />
      <span>{text}</span>
    </div>
  );
}

// Placement (docs/placement.md): each pod's models and memory assigned against its capacity.
function PlacementTable({ pods }: { pods: PlacementPodView[] }) {
  return (
    <Table aria-label="Memory assigned per pod" variant="compact" data-testid="placement">
      <Thead>
        <Tr>
          <Th>Pod</Th>
          <Th>Models</Th>
          <Th>Memory assigned</Th>
          <Th>State</Th>
        </Tr>
      </Thead>
      <Tbody>
        {pods.map((p) => (
          <Tr key={p.pod}>
            <Td dataLabel="Pod">{p.pod}</Td>
            <Td dataLabel="Models">{p.models}</Td>
            <Td dataLabel="Memory assigned">
              {formatBytes(p.assigned)} of {formatBytes(p.capacity)}
              {p.capacity > 0 ? ` (${Math.round((p.assigned / p.capacity) * 100)}%)` : ''}
            </Td>
            <Td dataLabel="State">{p.draining ? 'draining: handing its models over' : 'serving'}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}

function Events({ ns, name }: { ns: string; name: string }) {
  const ev = usePoll<ListPage<EventView>>(isvcPath(ns, name, 'events'), { limit: 30 });
  if (ev.state === 'loading') return <Loading what="events" />;
  if (ev.state === 'error') return <ErrorBanner error={ev.error} what="events" />;
  const items = ev.data.items;
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

function Detail({ term, children }: { term: string; children: React.ReactNode }) {
  return (
    <DescriptionListGroup>
      <DescriptionListTerm>{term}</DescriptionListTerm>
      <DescriptionListDescription>{children}</DescriptionListDescription>
    </DescriptionListGroup>
  );
}

export default function InferenceServiceDetail({ ns, name }: { ns: string; name: string }) {
  const svc = usePoll<InferenceServiceView>(isvcPath(ns, name), undefined);
  const tms = usePoll<ListPage<TrainedModelView>>(isvcPath(ns, name, 'trainedmodels'), undefined);
  const crumbs = (
    <Breadcrumb>
      <BreadcrumbItem to={href({ screen: 'deployments', ns })}>Deployments ({ns})</BreadcrumbItem>
      <BreadcrumbItem isActive>{name}</BreadcrumbItem>
    </Breadcrumb>
  );
  const link = svc.state === 'ok' ? registryLink(svc.data.labels) : {};
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
              <Detail term="Status">
                <StatusLabel color={summaryStatus(svc.data.ready, svc.data.conditions).color}>{summaryStatus(svc.data.ready, svc.data.conditions).label}</StatusLabel>
              </Detail>
              <Detail term="Memory limit">{svc.data.predictor?.memoryLimit ?? '—'}</Detail>
              <Detail term="Memory">{tms.state === 'ok' ? <MemoryBar limit={svc.data.predictor?.memoryLimitBytes} tms={tms.data.items} /> : '—'}</Detail>
              <Detail term="URL">{svc.data.url ?? '—'}</Detail>
              <Detail term="Registered model">{link.registeredModelId ? <RegisteredVersionLink modelId={link.registeredModelId} versionId={link.modelVersionId} /> : 'not linked'}</Detail>
            </DescriptionList>
            {svc.data.placement && svc.data.placement.length > 0 && (
              <>
                <Title headingLevel="h2">Placement: models spread over the pods by memory</Title>
                <PlacementTable pods={svc.data.placement} />
              </>
            )}
            <ConditionsSection conditions={svc.data.conditions} caption="Conditions of the InferenceService" testId="isvc-conditions" />
          </>
        )}
      </PageSection>
      <PageSection>
        <Title headingLevel="h2">TrainedModels</Title>
        {tms.state === 'loading' && <Loading what="TrainedModels" />}
        {tms.state === 'error' && <ErrorBanner error={tms.error} what="TrainedModels" />}
        {tms.state === 'ok' && tms.data.items.length === 0 && <Empty title="No TrainedModels">No TrainedModel names this InferenceService.</Empty>}
        {tms.state === 'ok' && tms.data.items.map((tm) => <TrainedModel key={tm.name} tm={tm} />)}
      </PageSection>
      <PageSection>
        <Title headingLevel="h2">Recent events</Title>
        <Events ns={ns} name={name} />
      </PageSection>
    </>
  );
}
