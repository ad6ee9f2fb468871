// Who may use one model registry (docs/ui.md, "Settings"): the users and groups of the
// RoleBindings to its Role registry-user-<registry>, as upstream's "Manage permissions" page shows
// them; grant (a RoleBinding, as upstream's frontend makes it) and remove (the subject taken out
// of its RoleBinding with PATCH, or the RoleBinding deleted with its last subject). Every call is
// made as the user: a refusal is shown in words.
import { useState } from 'react';
import { Button, Content, Form, FormGroup, FormHelperText, FormSelect, FormSelectOption, HelperText, HelperTextItem, PageSection, TextInput, Title } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { del, get, patch, post } from '../api';
import { ChangeOutcome, Empty, ErrorBanner, Loading, useAsync, useChange } from '../common';
import { href } from '../router';
import { ROLE_PREFIX, bindingIsFor, grantBody, subjectNameProblem } from '../permissions';
import type { RoleBinding, RoleBindingSubject } from '../types';

interface Row {
  rb: RoleBinding;
  subject: RoleBindingSubject;
}

export default function Permissions({ ns, name }: { ns: string; name: string }) {
  const [list, reload] = useAsync((signal) => get<{ items: RoleBinding[] }>('/settings/role_bindings', { namespace: ns }, signal), [ns]);
  const [kind, setKind] = useState('User');
  const [who, setWho] = useState('');
  const [touched, setTouched] = useState(false);
  const problem = subjectNameProblem(who);
  const rows: Row[] = list.state === 'ok' ? list.data.items.filter((rb) => bindingIsFor(rb, name)).flatMap((rb) => (rb.subjects ?? []).map((subject) => ({ rb, subject }))) : [];
  const q = `?namespace=${encodeURIComponent(ns)}`;

  const { busy, outcome, run } = useChange(reload);
  const grant = () => {
    setTouched(true);
    if (problem) return;
    const subject = { kind, name: who.trim() };
    void run(`${kind} ${subject.name} may now use ${name}.`, async () => {
      await post(`/settings/role_bindings${q}`, grantBody(name, subject));
      setWho('');
      setTouched(false);
    });
  };
  const remove = (row: Row) => {
    const rest = (row.rb.subjects ?? []).filter((s) => !(s.kind === row.subject.kind && s.name === row.subject.name));
    const path = `/settings/role_bindings/${encodeURIComponent(row.rb.metadata.name)}${q}`;
    void run(`${row.subject.kind} ${row.subject.name} may no longer use ${name}.`, () => (rest.length > 0 ? patch(path, { subjects: rest }) : del(path)));
  };

  return (
    <>
      <PageSection>
        <Content component="p">
          <a href={href({ screen: 'settings' })}>Registry settings</a>
        </Content>
        <Title headingLevel="h1">Permissions of {name}</Title>
        <Content component="p">
          The users and groups that may use the model registry {name} in namespace {ns}: RoleBindings to its Role {ROLE_PREFIX + name}, which lets them get the registry's Service.
        </Content>
      </PageSection>
      <PageSection>
        <ChangeOutcome outcome={outcome} />
        <Form
          className="mp-section"
          aria-label={`Grant the use of ${name}`}
          onSubmit={(e) => {
            e.preventDefault();
            grant();
          }}>
          <FormGroup label="Kind" fieldId="perm-kind">
            <FormSelect id="perm-kind" value={kind} onChange={(_e, v) => setKind(v)}>
              <FormSelectOption value="User" label="User" />
              <FormSelectOption value="Group" label="Group" />
            </FormSelect>
          </FormGroup>
          <FormGroup label="Name" isRequired fieldId="perm-name">
            <TextInput id="perm-name" value={who} onChange={(_e, v) => setWho(v)} onBlur={() => setTouched(true)} validated={touched && problem ? 'error' : 'default'} aria-describedby="perm-name-help" />
            <FormHelperText>
              <HelperText id="perm-name-help">
                <HelperTextItem variant={touched && problem ? 'error' : 'default'}>{touched && problem ? problem : 'A Kubernetes user or group name, as your cluster authenticates it.'}</HelperTextItem>
              </HelperText>
            </FormHelperText>
          </FormGroup>
          <div>
            <Button type="submit" isDisabled={busy} isLoading={busy}>
              Grant access
            </Button>
          </div>
        </Form>
        {list.state === 'loading' && <Loading what="permissions" />}
        {list.state === 'error' && <ErrorBanner error={list.error} what={`the permissions of ${name}`} onRetry={reload} />}
        {list.state === 'ok' && rows.length === 0 && <Empty title="Nobody is granted this registry">No RoleBinding to {ROLE_PREFIX + name} in namespace {ns}.</Empty>}
        {rows.length > 0 && (
          <Table aria-label={`Who may use ${name}`} variant="compact" data-testid="permissions-table">
            <Thead>
              <Tr>
                <Th>Name</Th>
                <Th>Kind</Th>
                <Th>RoleBinding</Th>
                <Th screenReaderText="Actions" />
              </Tr>
            </Thead>
            <Tbody>
              {rows.map((r) => (
                <Tr key={`${r.rb.metadata.name}/${r.subject.kind}/${r.subject.name}`}>
                  <Td dataLabel="Name">{r.subject.name}</Td>
                  <Td dataLabel="Kind">{r.subject.kind}</Td>
                  <Td dataLabel="RoleBinding">{r.rb.metadata.name}</Td>
                  <Td dataLabel="Actions">
                    <Button variant="secondary" isDanger isDisabled={busy} onClick={() => remove(r)} aria-label={`Remove the access of ${r.subject.kind} ${r.subject.name}`}>
                      Remove
                    </Button>
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
