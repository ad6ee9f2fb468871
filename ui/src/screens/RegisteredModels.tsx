// Registered models: search, state filter, sort, server-side paging (never the whole list), and
// registering a model with its first version.
import { useEffect, useState } from 'react';
import { Button, Content, FormSelect, Label, FormSelectOption, PageSection, SearchInput, Title, Toolbar, ToolbarContent, ToolbarItem } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { get, type ListPage } from '../api';
import { Empty, ErrorBanner, Loading, PagerNav, StatusLabel, useAsync } from '../common';
import { labelsOf, registeredModelsFilter, relativeTime } from '../format';
import { currentToken, firstPage, loaded, type PagerState } from '../pager';
import { mrPath } from '../registry';
import { href, type Route } from '../router';
import type { RegisteredModel } from '../types';
import { RegisterModelModal } from './RegisterModel';

export const PAGE_SIZE = 20;

export const SORTS: Record<string, { label: string; orderBy: string; sortOrder: string }> = {
  '': { label: 'Last updated, newest first', orderBy: 'LAST_UPDATE_TIME', sortOrder: 'DESC' },
  created_desc: { label: 'Created, newest first', orderBy: 'CREATE_TIME', sortOrder: 'DESC' },
  created_asc: { label: 'Created, oldest first', orderBy: 'CREATE_TIME', sortOrder: 'ASC' },
  id_asc: { label: 'ID, ascending', orderBy: 'ID', sortOrder: 'ASC' },
};

type ModelsRoute = Extract<Route, { screen: 'models' }>;

export default function RegisteredModels({ route }: { route: ModelsRoute }) {
  const [search, setSearch] = useState(route.q);
  const [owner, setOwner] = useState(route.owner);
  const [pager, setPager] = useState<PagerState>(firstPage);
  const [registering, setRegistering] = useState(false);
  const sort = SORTS[route.sort] ?? SORTS[''];
  const filterQuery = registeredModelsFilter(route.q, route.state, route.owner);
  const token = currentToken(pager);

  useEffect(() => setPager(firstPage), [filterQuery, route.sort]);
  useEffect(() => setSearch(route.q), [route.q]);
  useEffect(() => setOwner(route.owner), [route.owner]);
  // the search box updates the route (and so the query) shortly after typing stops
  useEffect(() => {
    if (search === route.q && owner === route.owner) return;
    const t = setTimeout(() => {
      window.location.hash = href({ ...route, q: search, owner });
    }, 300);
    return () => clearTimeout(t);
  }, [search, owner, route]);

  const [page, reload] = useAsync(
    async (signal) =>
      get<ListPage<RegisteredModel>>(await mrPath('registered_models'), { pageSize: PAGE_SIZE, orderBy: sort.orderBy, sortOrder: sort.sortOrder, filterQuery, nextPageToken: token }, signal),
    [filterQuery, sort.orderBy, sort.sortOrder, token],
  );
  useEffect(() => {
    if (page.state !== 'ok') return;
    setPager((p) => loaded(p, page.data.nextPageToken));
  }, [page]);

  const setRoute = (patch: Partial<ModelsRoute>) => {
    window.location.hash = href({ ...route, ...patch });
  };

  return (
    <>
      <PageSection>
        <Title headingLevel="h1">{route.state === 'ARCHIVED' ? 'Archived models' : 'Registered models'}</Title>
        <Content component="p">
          {route.state === 'ARCHIVED' ? 'Archived models stay in the registry; open one to restore it. ' : 'Models and versions in the model registry. '}
          <a href={href({ ...route, state: route.state === 'ARCHIVED' ? '' : 'ARCHIVED' })}>{route.state === 'ARCHIVED' ? 'Back to all models' : 'View archived models'}</a>
        </Content>
      </PageSection>
      <PageSection>
        <Toolbar>
          <ToolbarContent>
            <ToolbarItem>
              <SearchInput aria-label="Search models" placeholder="Name, description or label" value={search} onChange={(_e, v) => setSearch(v)} onClear={() => setSearch('')} />
            </ToolbarItem>
            <ToolbarItem>
              <SearchInput aria-label="Filter by owner" placeholder="Owner" value={owner} onChange={(_e, v) => setOwner(v)} onClear={() => setOwner('')} />
            </ToolbarItem>
            <ToolbarItem>
              <FormSelect aria-label="Filter by state" value={route.state} onChange={(_e, v) => setRoute({ state: v as ModelsRoute['state'] })}>
                <FormSelectOption value="" label="Any state" />
                <FormSelectOption value="LIVE" label="Live" />
                <FormSelectOption value="ARCHIVED" label="Archived" />
              </FormSelect>
            </ToolbarItem>
            <ToolbarItem>
              <FormSelect aria-label="Sort" value={route.sort in SORTS ? route.sort : ''} onChange={(_e, v) => setRoute({ sort: v })}>
                {Object.entries(SORTS).map(([k, s]) => (
                  <FormSelectOption key={k} value={k} label={s.label} />
                ))}
              </FormSelect>
            </ToolbarItem>
            <ToolbarItem>
              <Button variant="primary" onClick={() => setRegistering(true)}>
                Register model
              </Button>
            </ToolbarItem>
          </ToolbarContent>
        </Toolbar>
        {page.state === 'loading' && <Loading what="registered models" />}
        {page.state === 'error' && <ErrorBanner error={page.error} what="registered models" />}
        {page.state === 'ok' && page.data.items.length === 0 && (
          <Empty title={filterQuery ? 'No model matches' : 'No registered models yet'}>{filterQuery ? 'Change the search, the owner or the state filter.' : 'Register a model to see it here.'}</Empty>
        )}
        {page.state === 'ok' && page.data.items.length > 0 && (
          <Table aria-label="Registered models" variant="compact" data-testid="models-table">
            <Thead>
              <Tr>
                <Th>Name</Th>
                <Th>State</Th>
                <Th>Owner</Th>
                <Th>Description</Th>
                <Th>Labels</Th>
                <Th>Last updated</Th>
              </Tr>
            </Thead>
            <Tbody>
              {page.data.items.map((m) => (
                <Tr key={m.id}>
                  <Td dataLabel="Name">
                    <a href={href({ screen: 'model', id: m.id })}>{m.name}</a>
                  </Td>
                  <Td dataLabel="State">
                    <StatusLabel color={m.state === 'ARCHIVED' ? 'grey' : 'green'}>{m.state === 'ARCHIVED' ? 'Archived' : 'Live'}</StatusLabel>
                  </Td>
                  <Td dataLabel="Owner">{m.owner ?? ''}</Td>
                  <Td dataLabel="Description">{m.description ?? ''}</Td>
                  <Td dataLabel="Labels">
                    {labelsOf(m.customProperties).map((l) => (
                      <Label key={l} isCompact className="mp-tag">
                        {l}
                      </Label>
                    ))}
                  </Td>
                  <Td dataLabel="Last updated">{relativeTime(m.lastUpdateTimeSinceEpoch, Date.now())}</Td>
                </Tr>
              ))}
            </Tbody>
          </Table>
        )}
        <PagerNav pager={pager} setPager={setPager} label="Pages of registered models" />
      </PageSection>
      {registering && (
        <RegisterModelModal
          onClose={(created) => {
            setRegistering(false);
            if (created) window.location.hash = href({ screen: 'model', id: created });
            else reload();
          }}
        />
      )}
    </>
  );
}
