// Deployments: the namespaces the user may see, and the InferenceServices of one, live.
import { Content, FormSelect, FormSelectOption, PageSection, Title, Toolbar, ToolbarContent, ToolbarItem } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import type { ListPage } from '../api';
import { Empty, ErrorBanner, Loading, RegisteredVersionLink, StatusLabel, useAsync } from '../common';
import { isvcPath, namespaces } from '../deployments';
import { registryLink, summaryStatus } from '../format';
import { usePoll } from '../live';
import { href } from '../router';
import type { InferenceServiceView } from '../types';

function IsvcTable({ ns }: { ns: string }) {
  const list = usePoll<ListPage<InferenceServiceView>>(isvcPath(ns), { pageSize: 100 });
  if (list.state === 'loading') return <Loading what="InferenceServices" />;
  if (list.state === 'error') return <ErrorBanner error={list.error} what={`InferenceServices in ${ns}`} />;
  if (list.data.items.length === 0) return <Empty title={`No InferenceServices in ${ns}`} />;
  return (
    <Table aria-label={`InferenceServices in ${ns}`} variant="compact" data-testid="isvc-table">
      <Thead>
        <Tr>
          <Th>Name</Th>
          <Th>Status</Th>
          <Th>Format</Th>
          <Th>Memory limit</Th>
          <Th>Registered model</Th>
          <Th>URL</Th>
        </Tr>
      </Thead>
      <Tbody>
        {list.data.items.map((s) => {
          const st = summaryStatus(s.ready, s.conditions);
          const link = registryLink(s.labels);
          return (
            <Tr key={s.name}>
              <Td dataLabel="Name">
                <a href={href({ screen: 'isvc', ns, name: s.name })}>{s.name}</a>
              </Td>
              <Td dataLabel="Status">
                <StatusLabel color={st.color}>{st.label}</StatusLabel>
              </Td>
              <Td dataLabel="Format">{s.predictor?.modelFormat ?? ''}</Td>
              <Td dataLabel="Memory limit">{s.predictor?.memoryLimit ?? ''}</Td>
              <Td dataLabel="Registered model">{link.registeredModelId ? <RegisteredVersionLink modelId={link.registeredModelId} versionId={link.modelVersionId} /> : '—'}</Td>
              <Td dataLabel="URL" className="mp-mono">
                {s.url ?? ''}
              </Td>
            </Tr>
          );
        })}
      </Tbody>
    </Table>
  );
}

export default function Deployments({ ns }: { ns: string }) {
  const [nss] = useAsync((signal) => namespaces(signal), []);
  const list = nss.state === 'ok' ? nss.data : [];
  const shown = ns || list[0]?.name || '';
  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Deployments</Title>
        <Content component="p">InferenceServices and the TrainedModels they serve, per namespace. Updates live.</Content>
      </PageSection>
      <PageSection>
        {nss.state === 'loading' && <Loading what="namespaces" />}
        {nss.state === 'error' && <ErrorBanner error={nss.error} what="namespaces" />}
        {nss.state === 'ok' && list.length === 0 && <Empty title="No namespace">You may not list InferenceServices in any namespace.</Empty>}
        {nss.state === 'ok' && list.length > 0 && (
          <Toolbar>
            <ToolbarContent>
              <ToolbarItem>
                <FormSelect aria-label="Namespace" value={shown} onChange={(_e, v) => (window.location.hash = href({ screen: 'deployments', ns: v }))}>
                  {!list.some((n) => n.name === shown) && <FormSelectOption value={shown} label={shown} />}
                  {list.map((n) => (
                    <FormSelectOption key={n.name} value={n.name} label={n.name} />
                  ))}
                </FormSelect>
              </ToolbarItem>
            </ToolbarContent>
          </Toolbar>
        )}
        {shown && nss.state !== 'loading' && <IsvcTable ns={shown} />}
      </PageSection>
    </>
  );
}
