// Registry settings for administrators (docs/ui.md, "Settings"): the model registries the user may
// list (upstream's ModelRegistryKind, from the registries' Services), each with a link to its
// permissions. Kubernetes RBAC decides who sees what: a refusal is shown in words.
import { Content, PageSection, Title } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { get } from '../api';
import { Empty, ErrorBanner, Loading, useAsync } from '../common';
import { href } from '../router';
import type { ModelRegistryKind } from '../types';

/** The name a registry goes by: its displayName annotation, else its Service's name. */
export function registryTitle(r: ModelRegistryKind): string {
  return r.metadata.annotations?.displayName || r.metadata.name;
}

export default function Settings() {
  const [regs, reload] = useAsync((signal) => get<ModelRegistryKind[]>('/settings/model_registry', undefined, signal), []);
  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Registry settings</Title>
        <Content component="p">The model registries of the cluster, and who may use each. Your Kubernetes permissions decide what you may see and change here.</Content>
      </PageSection>
      <PageSection>
        {regs.state === 'loading' && <Loading what="model registries" />}
        {regs.state === 'error' && <ErrorBanner error={regs.error} what="the model registries" onRetry={reload} />}
        {regs.state === 'ok' && regs.data.length === 0 && <Empty title="No model registries">No Service in this namespace is labelled component=model-registry.</Empty>}
        {regs.state === 'ok' && regs.data.length > 0 && (
          <Table aria-label="Model registries" variant="compact">
            <Thead>
              <Tr>
                <Th>Registry</Th>
                <Th>Namespace</Th>
                <Th>Description</Th>
                <Th screenReaderText="Actions" />
              </Tr>
            </Thead>
            <Tbody>
              {regs.data.map((r) => (
                <Tr key={`${r.metadata.namespace}/${r.metadata.name}`}>
                  <Td dataLabel="Registry">
                    {registryTitle(r)}
                    {registryTitle(r) !== r.metadata.name && ` (${r.metadata.name})`}
                  </Td>
                  <Td dataLabel="Namespace">{r.metadata.namespace}</Td>
                  <Td dataLabel="Description">{r.metadata.annotations?.description ?? ''}</Td>
                  <Td dataLabel="Actions">
                    <a href={href({ screen: 'permissions', ns: r.metadata.namespace, name: r.metadata.name })}>Manage permissions of {registryTitle(r)}</a>
                  </Td>
                </Tr>
              ))}
            </Tbody>
          </Table>
        )}
      </PageSection>
    </>
  );
}
