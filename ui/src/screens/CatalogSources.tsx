// The catalog's sources for administrators (docs/ui.md, "Catalog sources"): both ConfigMaps
// merged, each source enabled or disabled, a YAML source added or deleted. Every call is made as
// the user, so Kubernetes RBAC decides; a refusal is shown in words.
import { useState } from 'react';
import { Button, Content, Form, FormGroup, FormHelperText, HelperText, HelperTextItem, Label, PageSection, Switch, TextArea, TextInput, Title } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { del, get, patch, post } from '../api';
import { catalogYamlProblem, sourceIdProblem } from '../catalogsources';
import { ChangeOutcome, Empty, ErrorBanner, Loading, useAsync, useChange } from '../common';
import type { CatalogSourceConfig } from '../types';

const PATH = '/settings/model_catalog/source_configs';

export default function CatalogSources() {
  const [list, reload] = useAsync((signal) => get<{ catalogs: CatalogSourceConfig[] }>(PATH, undefined, signal), []);
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [yaml, setYaml] = useState('');
  const [touched, setTouched] = useState(false);
  const idProblem = sourceIdProblem(id);
  const nameProblem = name.trim() === '' ? 'A name is required.' : null;
  const yamlProblem = catalogYamlProblem(yaml);

  const { busy, outcome, run } = useChange(reload);
  const add = () => {
    setTouched(true);
    if (idProblem || nameProblem || yamlProblem) return;
    void run(`Source ${id} added: the catalog reads it within a minute.`, async () => {
      await post(PATH, { id, name: name.trim(), type: 'yaml', enabled: true, yaml });
      setId('');
      setName('');
      setYaml('');
      setTouched(false);
    });
  };
  const toggle = (s: CatalogSourceConfig, on: boolean) => void run(`Source ${s.id} ${on ? 'enabled' : 'disabled'}.`, () => patch(`${PATH}/${encodeURIComponent(s.id)}`, { enabled: on }));
  const remove = (s: CatalogSourceConfig) => {
    if (!window.confirm(`Delete the catalog source ${s.id}? Its models leave the catalog.`)) return;
    void run(`Source ${s.id} deleted.`, () => del(`${PATH}/${encodeURIComponent(s.id)}`));
  };
  const field = (problem: string | null) => (touched && problem ? 'error' : 'default');

  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Catalog sources</Title>
        <Content component="p">The sources the model catalog reads: the defaults shipped with it, and those added here. A default source can be disabled, not deleted. Your Kubernetes permissions on the catalog's ConfigMaps decide what you may see and change.</Content>
      </PageSection>
      <PageSection>
        <ChangeOutcome outcome={outcome} />
        {list.state === 'loading' && <Loading what="catalog sources" />}
        {list.state === 'error' && <ErrorBanner error={list.error} what="the catalog sources" onRetry={reload} />}
        {list.state === 'ok' && list.data.catalogs.length === 0 && <Empty title="No catalog sources">Neither of the catalog's ConfigMaps lists a source.</Empty>}
        {list.state === 'ok' && list.data.catalogs.length > 0 && (
          <Table aria-label="Catalog sources" variant="compact" data-testid="sources-table">
            <Thead>
              <Tr>
                <Th>Source</Th>
                <Th>Id</Th>
                <Th>Type</Th>
                <Th>Enabled</Th>
                <Th screenReaderText="Actions" />
              </Tr>
            </Thead>
            <Tbody>
              {list.data.catalogs.map((s) => (
                <Tr key={s.id}>
                  <Td dataLabel="Source">
                    {s.name ?? s.id} {s.isDefault && <Label isCompact>default</Label>}
                  </Td>
                  <Td dataLabel="Id">{s.id}</Td>
                  <Td dataLabel="Type">{s.type === 'hf' ? 'Hugging Face' : s.type === 'yaml' ? 'YAML' : (s.type ?? '')}</Td>
                  <Td dataLabel="Enabled">
                    <Switch id={`enabled-${s.id}`} aria-label={`${s.name ?? s.id} enabled`} isChecked={s.enabled !== false} isDisabled={busy} onChange={(_e, on) => toggle(s, on)} />
                  </Td>
                  <Td dataLabel="Actions">
                    {!s.isDefault && (
                      <Button variant="link" isDanger isDisabled={busy} onClick={() => remove(s)}>
                        Delete {s.name ?? s.id}
                      </Button>
                    )}
                  </Td>
                </Tr>
              ))}
            </Tbody>
          </Table>
        )}
      </PageSection>
      <PageSection>
        <Title headingLevel="h2">Add a YAML source</Title>
        <Form
          aria-label="Add a YAML catalog source"
          onSubmit={(e) => {
            e.preventDefault();
            add();
          }}>
          <FormGroup label="Id" isRequired fieldId="source-id">
            <TextInput id="source-id" value={id} onChange={(_e, v) => setId(v)} validated={field(idProblem)} aria-describedby="source-id-help" />
            <FormHelperText>
              <HelperText id="source-id-help">
                <HelperTextItem variant={field(idProblem)}>{touched && idProblem ? idProblem : 'Lowercase letters, digits and underscores; it names the source in URLs.'}</HelperTextItem>
              </HelperText>
            </FormHelperText>
          </FormGroup>
          <FormGroup label="Name" isRequired fieldId="source-name">
            <TextInput id="source-name" value={name} onChange={(_e, v) => setName(v)} validated={field(nameProblem)} aria-describedby="source-name-help" />
            <FormHelperText>
              <HelperText id="source-name-help">
                <HelperTextItem variant={field(nameProblem)}>{touched && nameProblem ? nameProblem : 'What the catalog shows.'}</HelperTextItem>
              </HelperText>
            </FormHelperText>
          </FormGroup>
          <FormGroup label="Catalog (YAML)" isRequired fieldId="source-yaml">
            <TextArea id="source-yaml" value={yaml} onChange={(_e, v) => setYaml(v)} rows={8} validated={field(yamlProblem)} aria-describedby="source-yaml-help" />
            <FormHelperText>
              <HelperText id="source-yaml-help">
                <HelperTextItem variant={field(yamlProblem)}>{touched && yamlProblem ? yamlProblem : 'A catalog file: source and a models list, as the catalog reads it.'}</HelperTextItem>
              </HelperText>
            </FormHelperText>
          </FormGroup>
          <div>
            <Button type="submit" isDisabled={busy} isLoading={busy}>
              Add source
            </Button>
          </div>
        </Form>
      </PageSection>
    </>
  );
}
