// The catalog's MCP servers (upstream's /mcp_catalog): a search, each server with its provider,
// license, deployment mode, transports and security indicators, and its tools with their access.
import { useEffect, useState } from 'react';
import { Content, ExpandableSection, Label, LabelGroup, PageSection, SearchInput, Title, Toolbar, ToolbarContent, ToolbarItem } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { get, type ListPage } from '../api';
import { Empty, ErrorBanner, Loading, useAsync } from '../common';
import { href, type Route } from '../router';

type McpRoute = Extract<Route, { screen: 'mcp' }>;

export interface McpTool {
  name: string;
  description?: string;
  accessType?: string;
}

export interface McpServer {
  id: string;
  name: string;
  provider?: string;
  license?: string;
  description?: string;
  deploymentMode?: string;
  transports?: string[];
  securityIndicators?: Record<string, boolean>;
  toolCount?: number;
  tools?: McpTool[];
}

/** The security indicators that hold, in words ("verified source", ...). */
export function securityWords(ind: Record<string, boolean> | undefined): string[] {
  const words: Record<string, string> = { verifiedSource: 'verified source', secureEndpoint: 'secure endpoint', sast: 'SAST', readOnlyTools: 'read-only tools' };
  return Object.entries(ind ?? {})
    .filter(([, v]) => v === true)
    .map(([k]) => words[k] ?? k);
}

function Tools({ server }: { server: McpServer }) {
  const tools = server.tools ?? [];
  if (tools.length === 0) return <Content component="p">No tools listed.</Content>;
  return (
    <Table aria-label={`Tools of ${server.name}`} variant="compact">
      <Thead>
        <Tr>
          <Th>Tool</Th>
          <Th>Access</Th>
          <Th>Description</Th>
        </Tr>
      </Thead>
      <Tbody>
        {tools.map((t) => (
          <Tr key={t.name}>
            <Td dataLabel="Tool">{t.name}</Td>
            <Td dataLabel="Access">{t.accessType ?? '—'}</Td>
            <Td dataLabel="Description">{t.description ?? ''}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}

export default function McpServers({ route }: { route: McpRoute }) {
  const [search, setSearch] = useState(route.q);
  useEffect(() => setSearch(route.q), [route.q]);
  useEffect(() => {
    if (search === route.q) return;
    const t = setTimeout(() => {
      window.location.hash = href({ ...route, q: search });
    }, 300);
    return () => clearTimeout(t);
  }, [search, route]);
  const [servers, reload] = useAsync((signal) => get<ListPage<McpServer>>('/mcp_catalog/mcp_servers', { q: route.q || undefined, includeTools: 'true', orderBy: 'NAME', sortOrder: 'ASC', pageSize: 100 }, signal), [route.q]);

  return (
    <>
      <PageSection>
        <Title headingLevel="h1">MCP servers</Title>
        <Content component="p">The Model Context Protocol servers of the catalog's MCP sources, and their tools.</Content>
      </PageSection>
      <PageSection>
        <Toolbar>
          <ToolbarContent>
            <ToolbarItem>
              <SearchInput aria-label="Search MCP servers" placeholder="Name or description" value={search} onChange={(_e, v) => setSearch(v)} onClear={() => setSearch('')} />
            </ToolbarItem>
          </ToolbarContent>
        </Toolbar>
        {servers.state === 'loading' && <Loading what="MCP servers" />}
        {servers.state === 'error' && <ErrorBanner error={servers.error} what="MCP servers" onRetry={reload} />}
        {servers.state === 'ok' && servers.data.items.length === 0 && <Empty title={route.q ? 'No MCP server matches' : 'No MCP servers'}>{route.q ? 'Change the search.' : 'The catalog has no MCP source, or its sources list no server.'}</Empty>}
        {servers.state === 'ok' &&
          servers.data.items.map((s) => (
            <section key={s.id} className="mp-section" aria-label={`MCP server ${s.name}`} data-testid="mcp-server">
              <Title headingLevel="h2">{s.name}</Title>
              {s.description && <Content component="p">{s.description}</Content>}
              <LabelGroup numLabels={10} aria-label={`About ${s.name}`}>
                {s.provider && <Label>{s.provider}</Label>}
                {s.license && <Label>{s.license}</Label>}
                {s.deploymentMode && <Label color="blue">{s.deploymentMode}</Label>}
                {(s.transports ?? []).map((t) => (
                  <Label key={t} color="purple">
                    {t}
                  </Label>
                ))}
                {securityWords(s.securityIndicators).map((w) => (
                  <Label key={w} color="green">
                    {w}
                  </Label>
                ))}
              </LabelGroup>
              <ExpandableSection toggleText={`Tools (${s.toolCount ?? s.tools?.length ?? 0})`} isIndented>
                <Tools server={s} />
              </ExpandableSection>
            </section>
          ))}
      </PageSection>
    </>
  );
}
