// Model transfer jobs (docs/ui.md, "Model transfer jobs"): the jobs of the shown registry in a
// namespace, live, with their status; a form that starts one (a new registered model copied from
// S3 or a URI into an OCI registry); deletion. Every call is made as the user: Kubernetes RBAC
// decides, and a refusal is shown in words. Credentials go to the server once and are never shown.
import { useState } from 'react';
import { Button, Content, Form, FormGroup, FormSelect, FormSelectOption, PageSection, TextInput, Title, Toolbar, ToolbarContent, ToolbarItem } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import type { ListPage } from '../api';
import { ChangeOutcome, Empty, ErrorBanner, Loading, StatusLabel, useAsync, useChange } from '../common';
import { namespaces } from '../deployments';
import { absoluteTime } from '../format';
import { usePoll } from '../live';
import { mrPath } from '../registry';
import { href } from '../router';
import { createTransfer, deleteTransfer, emptyTransferForm, transferFormProblem, transferStatusColor, type TransferForm, type TransferJob } from '../transfers';

function JobsTable({ path, ns, busy, onDelete }: { path: string; ns: string; busy: boolean; onDelete: (j: TransferJob) => void }) {
  const list = usePoll<ListPage<TransferJob>>(path, { jobNamespace: ns });
  if (list.state === 'loading') return <Loading what="transfer jobs" />;
  if (list.state === 'error') return <ErrorBanner error={list.error} what={`transfer jobs in ${ns}`} />;
  if (list.data.items.length === 0) return <Empty title={`No transfer jobs in ${ns}`} />;
  return (
    <Table aria-label={`Transfer jobs in ${ns}`} variant="compact" data-testid="transfer-table">
      <Thead>
        <Tr>
          <Th>Job</Th>
          <Th>Status</Th>
          <Th>Source</Th>
          <Th>Destination</Th>
          <Th>Model</Th>
          <Th>Created</Th>
          <Th screenReaderText="Actions" />
        </Tr>
      </Thead>
      <Tbody>
        {list.data.items.map((j) => (
          <Tr key={j.name}>
            <Td dataLabel="Job">
              {j.jobDisplayName || j.name} <span className="mp-mono">({j.name})</span>
            </Td>
            <Td dataLabel="Status">
              <StatusLabel color={transferStatusColor(j.status)}>{j.status}</StatusLabel>
              {j.errorMessage && <div>{j.errorMessage}</div>}
            </Td>
            <Td dataLabel="Source" className="mp-mono">
              {j.source.type === 's3' ? `s3://${j.source.bucket ?? ''}/${j.source.key ?? ''}` : (j.source.uri ?? '')}
            </Td>
            <Td dataLabel="Destination" className="mp-mono">
              {j.destination.uri ?? ''}
            </Td>
            <Td dataLabel="Model">{[j.registeredModelName, j.modelVersionName].filter(Boolean).join(' / ')}</Td>
            <Td dataLabel="Created">{absoluteTime(j.createTimeSinceEpoch)}</Td>
            <Td dataLabel="Actions">
              <Button variant="link" isDanger isDisabled={busy} onClick={() => onDelete(j)}>
                Delete {j.name}
              </Button>
            </Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}

const FIELDS: [keyof TransferForm, string, 's3' | 'uri' | null, boolean][] = [
  ['name', 'Job name', null, false],
  ['displayName', 'Display name', null, false],
  ['bucket', 'S3 bucket', 's3', false],
  ['key', 'S3 key (path of the model)', 's3', false],
  ['endpoint', 'S3 endpoint (optional)', 's3', false],
  ['region', 'S3 region (optional)', 's3', false],
  ['accessKeyId', 'AWS access key ID', 's3', false],
  ['secretAccessKey', 'AWS secret access key', 's3', true],
  ['uri', 'Source URI', 'uri', false],
  ['destUri', 'Destination (OCI registry/repository:tag)', null, false],
  ['username', 'OCI registry username', null, false],
  ['password', 'OCI registry password', null, true],
  ['modelName', 'Registered model name', null, false],
  ['versionName', 'Version name', null, false],
];

function CreateForm({ ns, busy, run }: { ns: string; busy: boolean; run: (what: string, call: () => Promise<unknown>) => Promise<void> }) {
  const [f, setF] = useState<TransferForm>(() => emptyTransferForm(ns));
  const [touched, setTouched] = useState(false);
  const form = { ...f, namespace: ns };
  const problem = transferFormProblem(form);
  const submit = () => {
    setTouched(true);
    if (problem) return;
    void run(`Transfer job ${form.name} started in ${ns}.`, async () => {
      await createTransfer(form);
      setF(emptyTransferForm(ns));
      setTouched(false);
    });
  };
  return (
    <Form
      aria-label="Start a transfer job"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}>
      <FormGroup label="Source" fieldId="transfer-source-type">
        <FormSelect id="transfer-source-type" value={f.sourceType} onChange={(_e, v) => setF({ ...f, sourceType: v === 'uri' ? 'uri' : 's3' })}>
          <FormSelectOption value="s3" label="S3 bucket" />
          <FormSelectOption value="uri" label="URI" />
        </FormSelect>
      </FormGroup>
      {FIELDS.filter(([, , only]) => only === null || only === f.sourceType).map(([k, label, , secret]) => (
        <FormGroup key={k} label={label} fieldId={`transfer-${k}`}>
          <TextInput id={`transfer-${k}`} type={secret ? 'password' : 'text'} autoComplete="off" value={f[k]} onChange={(_e, v) => setF({ ...f, [k]: v })} />
        </FormGroup>
      ))}
      {touched && problem && <ChangeOutcome outcome={{ ok: false, text: problem }} />}
      <div>
        <Button type="submit" isDisabled={busy || !ns} isLoading={busy}>
          Start transfer job
        </Button>
      </div>
    </Form>
  );
}

export default function TransferJobs({ ns }: { ns: string }) {
  const [nss] = useAsync((signal) => namespaces(signal), []);
  const [path] = useAsync(() => mrPath('model_transfer_jobs'), []);
  const list = nss.state === 'ok' ? nss.data : [];
  const shown = ns || list[0]?.name || '';
  const { busy, outcome, run } = useChange(() => undefined);
  const remove = (j: TransferJob) => {
    if (!window.confirm(`Delete the transfer job ${j.name} with its Secrets?`)) return;
    void run(`Transfer job ${j.name} deleted.`, () => deleteTransfer(j));
  };
  return (
    <>
      <PageSection>
        <Title headingLevel="h1">Transfer jobs</Title>
        <Content component="p">Kubernetes Jobs that copy a model into an OCI registry and register it in this registry. Updates live. Your Kubernetes permissions in the namespace decide what you may see, start and delete.</Content>
      </PageSection>
      <PageSection>
        <ChangeOutcome outcome={outcome} />
        {nss.state === 'error' && <ErrorBanner error={nss.error} what="namespaces" />}
        <Toolbar>
          <ToolbarContent>
            <ToolbarItem>
              <TextInput aria-label="Namespace" list="transfer-namespaces" value={shown} onChange={(_e, v) => (window.location.hash = href({ screen: 'transfers', ns: v }))} />
              <datalist id="transfer-namespaces">
                {list.map((n) => (
                  <option key={n.name} value={n.name} />
                ))}
              </datalist>
            </ToolbarItem>
          </ToolbarContent>
        </Toolbar>
        {path.state === 'error' && <ErrorBanner error={path.error} what="the registry" />}
        {shown && path.state === 'ok' && <JobsTable path={path.data} ns={shown} busy={busy} onDelete={remove} />}
      </PageSection>
      {shown && (
        <PageSection>
          <Title headingLevel="h2">Start a transfer job in {shown}</Title>
          <CreateForm key={shown} ns={shown} busy={busy} run={run} />
        </PageSection>
      )}
    </>
  );
}
