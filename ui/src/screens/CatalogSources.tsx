// The catalog's sources for administrators (docs/ui.md, "Catalog sources"): both ConfigMaps
// merged, each source enabled or disabled, edited (a default source: enabled, its model patterns
// and organization only), a YAML or Hugging Face source added, a source deleted after typing its
// id, and a preview of what a source's settings include. Every call is made as the user, so
// Kubernetes RBAC decides; a refusal is shown in words.
import React, { useState } from 'react';
import { Alert, Button, Content, Form, FormGroup, FormSelect, FormSelectOption, Label, Modal, ModalBody, ModalFooter, ModalHeader, PageSection, Switch, TextArea, TextInput, Title } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { ApiError, del, get, patch, post, queryString } from '../api';
import { createPayload, emptyForm, formOf, formProblems, previewProblem, previewRequest, updatePayload, type FormProblems, type SourceForm, type SourceKind } from '../catalogsources';
import { ChangeOutcome, Empty, ErrorBanner, Field, Loading, TypeToConfirmModal, useAsync, useChange } from '../common';
import type { CatalogSourceConfig } from '../types';

const PATH = '/settings/model_catalog/source_configs';
const PREVIEW_PAGE = 20;

interface PreviewResult {
  items?: { name: string; included: boolean }[];
  summary?: { totalModels?: number; includedModels?: number; excludedModels?: number };
  nextPageToken?: string;
}

const typeName = (t: string | undefined) => (t === 'hf' ? 'Hugging Face' : t === 'yaml' ? 'YAML' : (t ?? ''));

function messageOf(e: unknown): string {
  return e instanceof ApiError ? e.message : e instanceof Error ? e.message : String(e);
}

/**
 * The fields of a source form. prefix keeps the ids of the add form and the edit dialog apart;
 * mode 'edit' shows the id read-only; a default source's name and catalog are read-only.
 */
function SourceFields({ prefix, form, set, problems, shown, mode, isDefault }: { prefix: string; form: SourceForm; set: (f: Partial<SourceForm>) => void; problems: FormProblems; shown: boolean; mode: 'add' | 'edit'; isDefault: boolean }) {
  const keyHelp = mode === 'edit' ? 'Leave empty to keep the stored token (it is never shown). A new token replaces it.' : 'Optional: a Hugging Face access token (hf_…) for private and gated models. Kept in a Secret, never shown again.';
  return (
    <>
      <Field id={`${prefix}source-id`} label="Id" isRequired={mode === 'add'} help={mode === 'add' ? 'Lowercase letters, digits and underscores; it names the source in URLs.' : 'The id does not change.'} problem={problems.id} shown={shown}>
        {(v, d) => <TextInput id={`${prefix}source-id`} value={form.id} onChange={(_e, x) => set({ id: x })} validated={v} aria-describedby={d} readOnlyVariant={mode === 'edit' ? 'default' : undefined} />}
      </Field>
      <Field id={`${prefix}source-name`} label="Name" isRequired={!isDefault} help={isDefault ? 'A default source keeps its name.' : 'What the catalog shows.'} problem={problems.name} shown={shown}>
        {(v, d) => <TextInput id={`${prefix}source-name`} value={form.name} onChange={(_e, x) => set({ name: x })} validated={v} aria-describedby={d} readOnlyVariant={isDefault ? 'default' : undefined} />}
      </Field>
      {form.type === 'yaml' && (
        <Field id={`${prefix}source-yaml`} label="Catalog (YAML)" isRequired={!isDefault} help={isDefault ? 'A default source keeps its catalog.' : 'A catalog file: source and a models list, as the catalog reads it.'} problem={problems.yaml} shown={shown}>
          {(v, d) => <TextArea id={`${prefix}source-yaml`} value={form.yaml} onChange={(_e, x) => set({ yaml: x })} rows={8} validated={v} aria-describedby={d} readOnlyVariant={isDefault ? 'default' : undefined} />}
        </Field>
      )}
      {form.type === 'hf' && (
        <>
          <Field id={`${prefix}source-org`} label="Organization" isRequired={mode === 'add'} help="The Hugging Face organization (allowedOrganization) whose models the source lists." problem={problems.organization} shown={shown}>
            {(v, d) => <TextInput id={`${prefix}source-org`} value={form.organization} onChange={(_e, x) => set({ organization: x })} validated={v} aria-describedby={d} />}
          </Field>
          {!isDefault && (
            <Field id={`${prefix}source-key`} label="Access token" help={keyHelp} problem={problems.apiKey} shown={shown}>
              {(v, d) => <TextInput id={`${prefix}source-key`} type="password" autoComplete="new-password" value={form.apiKey} onChange={(_e, x) => set({ apiKey: x })} validated={v} aria-describedby={d} />}
            </Field>
          )}
        </>
      )}
      <Field id={`${prefix}source-included`} label="Included models" help={form.type === 'hf' ? 'One pattern a line, within the organization ("granite-*", "name"); empty: all its models.' : 'One pattern a line ("org/*", "org/name"); empty: every model.'} problem={problems.included} shown={shown}>
        {(v, d) => <TextArea id={`${prefix}source-included`} value={form.included} onChange={(_e, x) => set({ included: x })} rows={3} validated={v} aria-describedby={d} />}
      </Field>
      <Field id={`${prefix}source-excluded`} label="Excluded models" help="One pattern a line; a model that matches is left out." problem={problems.excluded} shown={shown}>
        {(v, d) => <TextArea id={`${prefix}source-excluded`} value={form.excluded} onChange={(_e, x) => set({ excluded: x })} rows={3} validated={v} aria-describedby={d} />}
      </Field>
    </>
  );
}

/** The preview of a form's settings: the catalog's answer for them (first page), or its refusal in words. */
function Preview({ form, configured, testId }: { form: SourceForm; configured?: CatalogSourceConfig; testId: string }) {
  const [state, setState] = useState<{ busy: boolean; result?: PreviewResult; error?: string }>({ busy: false });
  const run = async () => {
    const problem = previewProblem(form, configured);
    if (problem) return setState({ busy: false, error: problem });
    setState({ busy: true });
    try {
      const result = await post<PreviewResult>(`/settings/model_catalog/source_preview${queryString({ pageSize: PREVIEW_PAGE })}`, previewRequest(form, configured));
      setState({ busy: false, result });
    } catch (e) {
      setState({ busy: false, error: messageOf(e) });
    }
  };
  const items = state.result?.items ?? [];
  const sum = state.result?.summary;
  return (
    <div className="mp-preview" data-testid={testId}>
      <Button variant="secondary" onClick={() => void run()} isLoading={state.busy} isDisabled={state.busy}>
        Preview models
      </Button>
      {state.error && <Alert isInline variant="danger" title="No preview" data-testid="preview-error">{state.error}</Alert>}
      {state.result && (
        <>
          <Content component="p" data-testid="preview-summary">
            {sum?.totalModels ?? items.length} models: {sum?.includedModels ?? items.filter((i) => i.included).length} included, {sum?.excludedModels ?? items.filter((i) => !i.included).length} excluded
            {state.result.nextPageToken ? ` (the first ${PREVIEW_PAGE} shown)` : ''}.
          </Content>
          {items.length > 0 && (
            <Table aria-label="Preview of the source's models" variant="compact">
              <Thead>
                <Tr>
                  <Th>Model</Th>
                  <Th>In the catalog</Th>
                </Tr>
              </Thead>
              <Tbody>
                {items.map((i) => (
                  <Tr key={i.name}>
                    <Td dataLabel="Model">{i.name}</Td>
                    <Td dataLabel="In the catalog">
                      <Label isCompact color={i.included ? 'green' : 'grey'}>
                        {i.included ? 'included' : 'excluded'}
                      </Label>
                    </Td>
                  </Tr>
                ))}
              </Tbody>
            </Table>
          )}
        </>
      )}
    </div>
  );
}

/** Edit a source in a dialog: read it (for a yaml source's catalog), change, save (PATCH); a refusal stays in the dialog in words. */
function EditSource({ id, onSaved, onClose }: { id: string; onSaved: (what: string) => void; onClose: () => void }) {
  const [src] = useAsync((signal) => get<CatalogSourceConfig>(`${PATH}/${encodeURIComponent(id)}`, undefined, signal), [id]);
  const [form, setForm] = useState<SourceForm | null>(null);
  const [shown, setShown] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const current = src.state === 'ok' ? (form ?? formOf(src.data)) : null;
  const isDefault = src.state === 'ok' && src.data.isDefault === true;
  const problems = current ? formProblems(current, 'edit', isDefault) : {};
  const save = async (ev?: React.FormEvent) => {
    ev?.preventDefault();
    if (!current) return;
    setShown(true);
    if (Object.keys(problems).length > 0) return;
    setBusy(true);
    setError('');
    try {
      await patch(`${PATH}/${encodeURIComponent(id)}`, updatePayload(current, isDefault));
      onSaved(`Source ${id} saved: the catalog reads it within a minute.`);
      onClose();
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  };
  return (
    <Modal isOpen onClose={onClose} variant="medium" aria-labelledby="edit-source-title">
      <ModalHeader title={`Edit catalog source ${id}`} labelId="edit-source-title" description={isDefault ? 'A default source: its enabled switch, its model patterns and its organization may change; its name and catalog stay.' : undefined} />
      <ModalBody>
        {src.state === 'loading' && <Loading what={`catalog source ${id}`} />}
        {src.state === 'error' && <ErrorBanner error={src.error} what={`the catalog source ${id}`} />}
        {error && (
          <Alert isInline variant="danger" title="The change was refused" data-testid="edit-error">
            {error}
          </Alert>
        )}
        {current && src.state === 'ok' && (
          <Form id="edit-source-form" aria-label={`Edit catalog source ${id}`} onSubmit={save}>
            <Content component="p">Type: {typeName(current.type)}</Content>
            <Switch id="edit-source-enabled" label="Enabled" isChecked={current.enabled} onChange={(_e, on) => setForm({ ...current, enabled: on })} />
            <SourceFields prefix="edit-" form={current} set={(f) => setForm({ ...current, ...f })} problems={problems} shown={shown} mode="edit" isDefault={isDefault} />
            <Preview form={current} configured={src.data} testId="edit-preview" />
          </Form>
        )}
      </ModalBody>
      <ModalFooter>
        <Button type="submit" form="edit-source-form" isDisabled={busy || !current} isLoading={busy}>
          Save
        </Button>
        <Button variant="link" onClick={onClose}>
          Cancel
        </Button>
      </ModalFooter>
    </Modal>
  );
}

function AddSource({ busy, run }: { busy: boolean; run: (what: string, call: () => Promise<unknown>) => Promise<void> }) {
  const [form, setForm] = useState<SourceForm>(emptyForm('yaml'));
  const [shown, setShown] = useState(false);
  const problems = formProblems(form, 'add');
  const set = (f: Partial<SourceForm>) => setForm((old) => ({ ...old, ...f }));
  const add = () => {
    setShown(true);
    if (Object.keys(problems).length > 0) return;
    void run(`Source ${form.id} added: the catalog reads it within a minute.`, async () => {
      await post(PATH, createPayload(form));
      setForm(emptyForm(form.type));
      setShown(false);
    });
  };
  return (
    <Form
      aria-label="Add a catalog source"
      onSubmit={(e) => {
        e.preventDefault();
        add();
      }}
    >
      <FormGroup label="Source type" fieldId="source-type">
        <FormSelect id="source-type" value={form.type} onChange={(_e, v) => set({ type: v as SourceKind })}>
          <FormSelectOption value="yaml" label="YAML: a catalog file kept in the ConfigMap" />
          <FormSelectOption value="hf" label="Hugging Face: an organization's models on the hub" />
        </FormSelect>
      </FormGroup>
      <SourceFields prefix="" form={form} set={set} problems={problems} shown={shown} mode="add" isDefault={false} />
      <Preview form={form} testId="add-preview" />
      <div>
        <Button type="submit" isDisabled={busy} isLoading={busy}>
          Add source
        </Button>
      </div>
    </Form>
  );
}

export default function CatalogSources() {
  const [list, reload] = useAsync((signal) => get<{ catalogs: CatalogSourceConfig[] }>(PATH, undefined, signal), []);
  const [editing, setEditing] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<CatalogSourceConfig | null>(null);
  const { busy, outcome, run } = useChange(reload);
  const toggle = (s: CatalogSourceConfig, on: boolean) => void run(`Source ${s.id} ${on ? 'enabled' : 'disabled'}.`, () => patch(`${PATH}/${encodeURIComponent(s.id)}`, { enabled: on }));

  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Catalog sources</Title>
        <Content component="p">The sources the model catalog reads: the defaults shipped with it, and those added here. A default source can be disabled and its model patterns changed, not deleted. Your Kubernetes permissions on the catalog&apos;s ConfigMaps (and, for a Hugging Face token, its Secrets) decide what you may see and change.</Content>
      </PageSection>
      <PageSection>
        <ChangeOutcome outcome={outcome} />
        {list.state === 'loading' && <Loading what="catalog sources" />}
        {list.state === 'error' && <ErrorBanner error={list.error} what="the catalog sources" onRetry={reload} />}
        {list.state === 'ok' && list.data.catalogs.length === 0 && <Empty title="No catalog sources">Neither of the catalog&apos;s ConfigMaps lists a source.</Empty>}
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
                  <Td dataLabel="Type">{typeName(s.type)}</Td>
                  <Td dataLabel="Enabled">
                    <Switch id={`enabled-${s.id}`} aria-label={`${s.name ?? s.id} enabled`} isChecked={s.enabled !== false} isDisabled={busy} onChange={(_e, on) => toggle(s, on)} />
                  </Td>
                  <Td dataLabel="Actions" className="mp-row-actions">
                    <Button variant="link" isInline isDisabled={busy} onClick={() => setEditing(s.id)}>
                      Edit {s.name ?? s.id}
                    </Button>
                    {!s.isDefault && (
                      <Button variant="link" isInline isDanger isDisabled={busy} onClick={() => setDeleting(s)}>
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
        <Title headingLevel="h2">Add a source</Title>
        <AddSource busy={busy} run={run} />
      </PageSection>
      {/* the dialog makes its own call (a refusal stays in it, in words); a save is reported on the page, which reloads the list */}
      {editing && <EditSource id={editing} onSaved={(what) => void run(what, () => Promise.resolve())} onClose={() => setEditing(null)} />}
      {deleting && (
        <TypeToConfirmModal title={`Delete catalog source ${deleting.name ?? deleting.id}?`} label={`Type the source id, ${deleting.id}, to confirm`} expected={deleting.id} action="Delete" onConfirm={async () => void (await run(`Source ${deleting.id} deleted.`, () => del(`${PATH}/${encodeURIComponent(deleting.id)}`)))} onClose={() => setDeleting(null)}>
          Its models leave the catalog; a Hugging Face token this console stored for it is deleted with it.
        </TypeToConfirmModal>
      )}
    </>
  );
}
