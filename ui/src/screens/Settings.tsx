// Registry settings for administrators (docs/ui.md, "Settings"): the model registries the user may
// list (upstream's ModelRegistryKind, from the registries' Services), each with a link to its
// permissions; a registry created (its Deployment, Service and Role, as the model-registry
// operator would write them: "Registries made by the console"), and one this console made edited
// (its display name, description and database) or deleted after typing its name. Kubernetes RBAC
// decides who sees and changes what: a refusal is shown in words.
import { useState } from 'react';
import { Alert, Button, Content, Form, FormSelect, FormSelectOption, Modal, ModalBody, ModalFooter, ModalHeader, PageSection, TextArea, TextInput, Title } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { ApiError, del, get, patch, post } from '../api';
import { ChangeOutcome, Empty, ErrorBanner, Field, Loading, TypeToConfirmModal, useAsync, useChange } from '../common';
import { createRegistryBody, emptyRegistryForm, madeByConsole, registryFormOf, registryFormProblems, updateRegistryBody, type DatabaseChoice, type RegistryForm, type RegistryProblems } from '../registrysettings';
import { href } from '../router';
import type { ModelRegistryKind } from '../types';

const PATH = '/settings/model_registry';

/** The name a registry goes by: its displayName annotation, else its Service's name. */
export function registryTitle(r: ModelRegistryKind): string {
  return r.metadata.annotations?.displayName || r.metadata.name;
}

/** The fields of a registry form; prefix keeps the create form's ids apart from the dialog's. */
function RegistryFields({ prefix, form, set, problems, shown, mode }: { prefix: string; form: RegistryForm; set: (f: Partial<RegistryForm>) => void; problems: RegistryProblems; shown: boolean; mode: 'create' | 'edit' }) {
  const id = (k: string) => `${prefix}registry-${k}`;
  return (
    <>
      {mode === 'create' && (
        <Field id={id('name')} label="Name" isRequired help="The name of its Service, Deployment and Role registry-user-NAME: lowercase letters, digits and '-'." problem={problems.name} shown={shown}>
          {(v, d) => <TextInput id={id('name')} value={form.name} onChange={(_e, x) => set({ name: x })} validated={v} aria-describedby={d} />}
        </Field>
      )}
      <Field id={id('display')} label="Display name" help="What the console shows for it." problem={problems.displayName} shown={shown}>
        {(v, d) => <TextInput id={id('display')} value={form.displayName} onChange={(_e, x) => set({ displayName: x })} validated={v} aria-describedby={d} />}
      </Field>
      <Field id={id('description')} label="Description" help="Optional." problem={problems.description} shown={shown}>
        {(v, d) => <TextArea id={id('description')} value={form.description} onChange={(_e, x) => set({ description: x })} rows={2} validated={v} aria-describedby={d} />}
      </Field>
      <Field id={id('database')} label="Database" help={form.database === 'sqlite' ? "SQLite on a 1Gi volume claim (NAME-data) of the cluster's default storage class, one pod at a time." : 'The registry connects to this PostgreSQL database.'} shown={shown}>
        {(_v, d) => (
          <FormSelect id={id('database')} value={form.database} onChange={(_e, x) => set({ database: x as DatabaseChoice })} aria-describedby={d}>
            <FormSelectOption value="sqlite" label="Embedded SQLite" />
            <FormSelectOption value="postgres" label="PostgreSQL" />
          </FormSelect>
        )}
      </Field>
      {form.database === 'postgres' && (
        <>
          <Field id={id('host')} label="Host" isRequired help="The database server's host name or address." problem={problems.host} shown={shown}>
            {(v, d) => <TextInput id={id('host')} value={form.host} onChange={(_e, x) => set({ host: x })} validated={v} aria-describedby={d} />}
          </Field>
          <Field id={id('port')} label="Port" isRequired help="Usually 5432." problem={problems.port} shown={shown}>
            {(v, d) => <TextInput id={id('port')} value={form.port} onChange={(_e, x) => set({ port: x })} validated={v} aria-describedby={d} />}
          </Field>
          <Field id={id('dbname')} label="Database name" isRequired help="The database the registry keeps its tables in." problem={problems.dbName} shown={shown}>
            {(v, d) => <TextInput id={id('dbname')} value={form.dbName} onChange={(_e, x) => set({ dbName: x })} validated={v} aria-describedby={d} />}
          </Field>
          <Field id={id('username')} label="Username" isRequired help="The database user." problem={problems.username} shown={shown}>
            {(v, d) => <TextInput id={id('username')} value={form.username} onChange={(_e, x) => set({ username: x })} validated={v} aria-describedby={d} />}
          </Field>
          <Field id={id('secret')} label="Password Secret" help="A Secret in the registries' namespace holding the password; the console never sees it. Empty: no password." problem={problems.secretName} shown={shown}>
            {(v, d) => <TextInput id={id('secret')} value={form.secretName} onChange={(_e, x) => set({ secretName: x })} validated={v} aria-describedby={d} />}
          </Field>
          {form.secretName !== '' && (
            <Field id={id('secret-key')} label="Password key" help="The Secret's key holding the password." problem={problems.secretKey} shown={shown}>
              {(v, d) => <TextInput id={id('secret-key')} value={form.secretKey} onChange={(_e, x) => set({ secretKey: x })} validated={v} aria-describedby={d} />}
            </Field>
          )}
          <Field id={id('ssl')} label="TLS mode" help="libpq's sslmode; empty: libpq's default." problem={problems.sslMode} shown={shown}>
            {(_v, d) => (
              <FormSelect id={id('ssl')} value={form.sslMode} onChange={(_e, x) => set({ sslMode: x })} aria-describedby={d}>
                {['', 'disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'].map((m) => (
                  <FormSelectOption key={m} value={m} label={m || "libpq's default"} />
                ))}
              </FormSelect>
            )}
          </Field>
        </>
      )}
    </>
  );
}

function CreateRegistry({ busy, run }: { busy: boolean; run: (what: string, call: () => Promise<unknown>) => Promise<void> }) {
  const [form, setForm] = useState<RegistryForm>(emptyRegistryForm());
  const [shown, setShown] = useState(false);
  const problems = registryFormProblems(form, 'create');
  const set = (f: Partial<RegistryForm>) => setForm((old) => ({ ...old, ...f }));
  const create = () => {
    setShown(true);
    if (Object.keys(problems).length > 0) return;
    void run(`Model registry ${form.name} created: its pod starts in a moment.`, async () => {
      await post(PATH, createRegistryBody(form));
      setForm(emptyRegistryForm());
      setShown(false);
    });
  };
  return (
    <Form
      aria-label="Create a model registry"
      onSubmit={(e) => {
        e.preventDefault();
        create();
      }}>
      <RegistryFields prefix="" form={form} set={set} problems={problems} shown={shown} mode="create" />
      <div>
        <Button type="submit" isDisabled={busy} isLoading={busy}>
          Create registry
        </Button>
      </div>
    </Form>
  );
}

/** Edit a registry in a dialog: read it (its database), change, save (PATCH); a refusal stays in the dialog in words. */
function EditRegistry({ name, onSaved, onClose }: { name: string; onSaved: (what: string) => void; onClose: () => void }) {
  const [reg] = useAsync((signal) => get<{ modelRegistry: ModelRegistryKind }>(`${PATH}/${encodeURIComponent(name)}`, undefined, signal), [name]);
  const [edited, setForm] = useState<RegistryForm | null>(null);
  const [shown, setShown] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const was = reg.state === 'ok' ? registryFormOf(reg.data.modelRegistry) : null;
  const form = edited ?? was;
  const problems = form ? registryFormProblems(form, 'edit') : {};
  const save = async (ev?: React.FormEvent) => {
    ev?.preventDefault();
    if (!form || !was) return;
    setShown(true);
    if (Object.keys(problems).length > 0) return;
    setBusy(true);
    setError('');
    try {
      await patch(`${PATH}/${encodeURIComponent(name)}`, updateRegistryBody(form, was));
      onSaved(`Model registry ${name} saved.`);
      onClose();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
      setBusy(false);
    }
  };
  return (
    <Modal isOpen onClose={onClose} variant="medium" aria-labelledby="edit-registry-title">
      <ModalHeader title={`Edit model registry ${name}`} labelId="edit-registry-title" />
      <ModalBody>
        {error && (
          <Alert isInline variant="danger" title="The change was refused" data-testid="edit-error">
            {error}
          </Alert>
        )}
        {reg.state === 'loading' && <Loading what={`model registry ${name}`} />}
        {reg.state === 'error' && <ErrorBanner error={reg.error} what={`the model registry ${name}`} />}
        {form && (
          <Form id="edit-registry-form" aria-label={`Edit model registry ${name}`} onSubmit={save}>
            <RegistryFields prefix="edit-" form={form} set={(f) => setForm({ ...form, ...f })} problems={problems} shown={shown} mode="edit" />
          </Form>
        )}
      </ModalBody>
      <ModalFooter>
        <Button type="submit" form="edit-registry-form" isDisabled={busy || !form} isLoading={busy}>
          Save
        </Button>
        <Button variant="link" onClick={onClose}>
          Cancel
        </Button>
      </ModalFooter>
    </Modal>
  );
}

export default function Settings() {
  const [regs, reload] = useAsync((signal) => get<ModelRegistryKind[]>(PATH, undefined, signal), []);
  const [editing, setEditing] = useState<ModelRegistryKind | null>(null);
  const [deleting, setDeleting] = useState<ModelRegistryKind | null>(null);
  const { busy, outcome, run } = useChange(reload);
  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Registry settings</Title>
        <Content component="p">The model registries of the cluster, and who may use each. Your Kubernetes permissions decide what you may see and change here.</Content>
      </PageSection>
      <PageSection>
        <ChangeOutcome outcome={outcome} />
        {regs.state === 'loading' && <Loading what="model registries" />}
        {regs.state === 'error' && <ErrorBanner error={regs.error} what="the model registries" onRetry={reload} />}
        {regs.state === 'ok' && regs.data.length === 0 && <Empty title="No model registries">No Service in this namespace is labelled component=model-registry.</Empty>}
        {regs.state === 'ok' && regs.data.length > 0 && (
          <Table aria-label="Model registries" variant="compact" data-testid="registries-table">
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
                  <Td dataLabel="Actions" className="mp-row-actions">
                    <a href={href({ screen: 'permissions', ns: r.metadata.namespace, name: r.metadata.name })}>Manage permissions of {registryTitle(r)}</a>
                    {madeByConsole(r) && (
                      <>
                        <Button variant="link" isInline isDisabled={busy} onClick={() => setEditing(r)}>
                          Edit {registryTitle(r)}
                        </Button>
                        <Button variant="link" isInline isDanger isDisabled={busy} onClick={() => setDeleting(r)}>
                          Delete {registryTitle(r)}
                        </Button>
                      </>
                    )}
                  </Td>
                </Tr>
              ))}
            </Tbody>
          </Table>
        )}
      </PageSection>
      <PageSection>
        <Title headingLevel="h2">Create a model registry</Title>
        <Content component="p">As the model-registry operator would: a Deployment running the registry, its Service, the Role registry-user-NAME that grants its use and, for SQLite, a volume claim, made with your permissions in the registries&apos; namespace.</Content>
        <CreateRegistry busy={busy} run={run} />
      </PageSection>
      {editing && <EditRegistry name={editing.metadata.name} onSaved={(what) => void run(what, () => Promise.resolve())} onClose={() => setEditing(null)} />}
      {deleting && (
        <TypeToConfirmModal title={`Delete model registry ${registryTitle(deleting)}?`} label={`Type the registry name, ${deleting.metadata.name}, to confirm`} expected={deleting.metadata.name} action="Delete" onConfirm={async () => void (await run(`Model registry ${deleting.metadata.name} deleted.`, () => del(`${PATH}/${encodeURIComponent(deleting.metadata.name)}`)))} onClose={() => setDeleting(null)}>
          Its Deployment, Service, Role, the RoleBindings granting its use and its SQLite volume claim (with the registry's data) are deleted; a PostgreSQL database stays.
        </TypeToConfirmModal>
      )}
    </>
  );
}
