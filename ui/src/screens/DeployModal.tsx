// Deploy a registered version as a TrainedModel: a namespace the user may see, a multi-model
// InferenceService there (with the memory already assigned on it), a name and the memory, both
// checked here as the server checks them. The server creates it as the user: RBAC decides, and
// its refusal (403, a name clash, a full InferenceService later on) is shown in words.
import React, { useEffect, useState } from 'react';
import { Alert, Button, Form, FormGroup, FormHelperText, FormSelect, FormSelectOption, HelperText, HelperTextItem, Modal, ModalBody, ModalFooter, ModalHeader, TextInput } from '@patternfly/react-core';
import { ApiError } from '../api';
import { Loading, useAsync } from '../common';
import { deploy, deployTargets, namespaces } from '../deployments';
import { formatBytes, memoryProblem, suggestTmName, tmNameProblem } from '../format';
import { registryName } from '../registry';
import type { DeployTargets, ModelVersion, TrainedModelView } from '../types';

function Helper({ error, hint }: { error?: string | null; hint?: string }) {
  if (!error && !hint) return null;
  return (
    <FormHelperText>
      <HelperText>
        <HelperTextItem variant={error ? 'error' : 'default'}>{error ?? hint}</HelperTextItem>
      </HelperText>
    </FormHelperText>
  );
}

function targetLabel(t: DeployTargets['items'][number]): string {
  const limit = t.predictor?.memoryLimitBytes;
  const used = t.memoryAssignedBytes;
  const mem = limit ? ` — ${used !== null ? `${formatBytes(used)} of ` : ''}${formatBytes(limit)} assigned` : '';
  return `${t.name}${t.ready ? '' : ' (not ready)'}${mem}`;
}

export function DeployModal({ modelName, version, onClose }: { modelName: string; version: ModelVersion; onClose: (made?: TrainedModelView) => void }) {
  const [nss] = useAsync((signal) => namespaces(signal), []);
  const [ns, setNs] = useState('');
  const [isvc, setIsvc] = useState('');
  const [name, setName] = useState(() => suggestTmName(modelName, version.name));
  const [memory, setMemory] = useState('');
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const list = nss.state === 'ok' ? nss.data : [];
  useEffect(() => {
    if (!ns && list.length > 0) setNs(list[0].name);
  }, [list, ns]);
  const [targets] = useAsync((signal) => (ns ? deployTargets(ns, signal) : Promise.resolve(null)), [ns]);
  const items = targets.state === 'ok' && targets.data ? targets.data.items : [];
  useEffect(() => {
    if (!items.some((t) => t.name === isvc)) setIsvc(items[0]?.name ?? '');
  }, [targets]);
  const nameError = touched ? tmNameProblem(name) : null;
  const memoryError = touched ? memoryProblem(memory) : null;
  const allowed = targets.state === 'ok' && !!targets.data?.canDeploy;
  const submit = async (ev?: React.FormEvent) => {
    ev?.preventDefault();
    setTouched(true);
    if (tmNameProblem(name) || memoryProblem(memory) || !ns || !isvc || !allowed) return;
    setBusy(true);
    setError(null);
    try {
      onClose(await deploy(ns, { name, inferenceService: isvc, modelVersionId: version.id, memory: memory.trim(), modelRegistry: await registryName() }));
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, String(e)));
      setBusy(false);
    }
  };
  return (
    <Modal isOpen onClose={() => onClose()} variant="medium" aria-labelledby="deploy-title">
      <ModalHeader title={`Deploy ${modelName} / ${version.name}`} labelId="deploy-title" description="A TrainedModel on a multi-model InferenceService, created as you: your Kubernetes permissions decide." />
      <ModalBody>
        {error && (
          <Alert isInline variant="danger" title={error.status === 403 ? 'Not allowed' : error.status === 409 ? 'That name is taken' : 'The TrainedModel was not created'} data-testid="deploy-error">
            {error.message}
          </Alert>
        )}
        {nss.state === 'loading' && <Loading what="namespaces" />}
        {nss.state === 'error' && <Alert isInline variant="danger" title="The namespaces could not be listed">{nss.error.message}</Alert>}
        {nss.state === 'ok' && list.length === 0 && <Alert isInline variant="warning" title="You may not list InferenceServices in any namespace, so there is nowhere to deploy." />}
        <Form id="deploy-form" onSubmit={submit} noValidate>
          <FormGroup label="Namespace" isRequired fieldId="deploy-ns">
            <FormSelect id="deploy-ns" value={ns} onChange={(_e, v) => setNs(v)} isDisabled={list.length === 0}>
              {list.map((n) => (
                <FormSelectOption key={n.name} value={n.name} label={n.name} />
              ))}
            </FormSelect>
          </FormGroup>
          <FormGroup label="InferenceService" isRequired fieldId="deploy-isvc">
            {targets.state === 'loading' && ns && <Loading what="InferenceServices" />}
            {targets.state === 'error' && <Alert isInline variant="danger" title={`The InferenceServices of ${ns} could not be listed`}>{targets.error.message}</Alert>}
            {targets.state === 'ok' && targets.data && !targets.data.canDeploy && (
              <Alert isInline variant="warning" title={`You may not deploy in ${ns}`} data-testid="deploy-not-allowed">
                {targets.data.reason}
              </Alert>
            )}
            <FormSelect id="deploy-isvc" value={isvc} onChange={(_e, v) => setIsvc(v)} isDisabled={items.length === 0}>
              {items.length === 0 && <FormSelectOption value="" label={targets.state === 'ok' ? 'No multi-model InferenceService here' : '—'} />}
              {items.map((t) => (
                <FormSelectOption key={t.name} value={t.name} label={targetLabel(t)} />
              ))}
            </FormSelect>
          </FormGroup>
          <FormGroup label="TrainedModel name" isRequired fieldId="deploy-name">
            <TextInput id="deploy-name" isRequired value={name} onChange={(_e, v) => setName(v)} validated={nameError ? 'error' : 'default'} />
            <Helper error={nameError} hint="Lower-case letters, digits and '-', up to 63 (the model's name in the InferenceService's URLs)." />
          </FormGroup>
          <FormGroup label="Memory" isRequired fieldId="deploy-memory">
            <TextInput id="deploy-memory" isRequired value={memory} placeholder="256Mi" onChange={(_e, v) => setMemory(v)} validated={memoryError ? 'error' : 'default'} />
            <Helper error={memoryError} hint="What the model needs loaded, as a Kubernetes quantity (256Mi, 1Gi). It counts against the InferenceService's memory limit." />
          </FormGroup>
        </Form>
      </ModalBody>
      <ModalFooter>
        <Button type="submit" form="deploy-form" isLoading={busy} isDisabled={busy || !allowed || !isvc}>
          Deploy
        </Button>
        <Button variant="link" onClick={() => onClose()}>
          Cancel
        </Button>
      </ModalFooter>
    </Modal>
  );
}
