// Register a model (with its first version and model artifact), and add a version to a model.
// The form checks what it can first (a name, a URI, an object-storage location, as upstream's
// does); the rest is the registry's: its message is shown inline, under the field it concerns.
import React, { useState } from 'react';
import { Alert, Button, Form, FormGroup, FormHelperText, HelperText, HelperTextItem, Modal, ModalBody, ModalFooter, ModalHeader, Radio, TextInput } from '@patternfly/react-core';
import { ApiError, post } from '../api';
import { objectStorageProblems, objectStorageUri, uriProblem, type ObjectStorage } from '../format';
import { mrPath } from '../registry';
import type { Artifact, ModelVersion, RegisteredModel } from '../types';

type Field = 'modelName' | 'versionName' | 'uri' | 'form';

function FieldError({ msg }: { msg?: string }) {
  if (!msg) return null;
  return (
    <FormHelperText>
      <HelperText>
        <HelperTextItem variant="error">{msg}</HelperTextItem>
      </HelperText>
    </FormHelperText>
  );
}

/** Where a model comes from, recorded on its ModelArtifact as upstream does. */
export interface ModelSource {
  modelSourceKind: 'catalog';
  modelSourceClass: string;
  modelSourceName: string;
  modelSourceGroup?: string;
  modelSourceId?: string;
}

/** What the register form starts with (from a catalog model). */
export interface RegisterInitial {
  name: string;
  description: string;
  versionName: string;
  uri: string;
  format: string;
  /** labels of the registered model (custom properties with an empty value) */
  labels: string[];
  source: ModelSource;
}

/** Creates the version (and its model artifact when a URI is given) under model id. */
async function createVersion(modelId: string, versionName: string, author: string, uri: string, format: string, fail: (f: Field, e: unknown) => never, source?: ModelSource): Promise<ModelVersion> {
  let v: ModelVersion;
  try {
    v = await post<ModelVersion>(await mrPath('registered_models', modelId, 'versions'), { name: versionName, registeredModelId: modelId, author: author || undefined });
  } catch (e) {
    return fail('versionName', e);
  }
  if (uri) {
    try {
      await post<Artifact>(await mrPath('model_versions', v.id, 'artifacts'), { artifactType: 'model-artifact', name: versionName, uri, modelFormatName: format || undefined, ...(source ?? {}) });
    } catch (e) {
      return fail('uri', e);
    }
  }
  return v;
}

/** The model artifact's location: a URI, or upstream's object-storage fields that make one. */
interface Location {
  mode: 'uri' | 's3';
  uri: string;
  s3: ObjectStorage;
}

const emptyLocation = (uri = ''): Location => ({ mode: 'uri', uri, s3: { endpoint: '', bucket: '', region: '', path: '' } });

/** The location's URI, or the field failure the form shows before anything is sent. */
function locationUri(l: Location): string {
  if (l.mode === 'uri') {
    const problem = uriProblem(l.uri);
    if (problem) failWith('uri', new Error(problem));
    return l.uri.trim();
  }
  const problems = objectStorageProblems(l.s3);
  const first = Object.values(problems)[0];
  if (first) failWith('uri', new Error(first));
  return objectStorageUri(l.s3);
}

function LocationFields({ id, value, onChange, error }: { id: string; value: Location; onChange: (l: Location) => void; error?: string }) {
  const s3 = (k: keyof ObjectStorage, label: string, placeholder: string, required = true) => (
    <FormGroup label={label} isRequired={required} fieldId={`${id}-s3-${k}`}>
      <TextInput id={`${id}-s3-${k}`} value={value.s3[k]} placeholder={placeholder} onChange={(_e, v) => onChange({ ...value, s3: { ...value.s3, [k]: v } })} />
    </FormGroup>
  );
  return (
    <>
      <FormGroup role="radiogroup" isInline label="Model location" fieldId={`${id}-mode`}>
        <Radio id={`${id}-mode-uri`} name={`${id}-mode`} label="URI" isChecked={value.mode === 'uri'} onChange={() => onChange({ ...value, mode: 'uri' })} />
        <Radio id={`${id}-mode-s3`} name={`${id}-mode`} label="Object storage" isChecked={value.mode === 's3'} onChange={() => onChange({ ...value, mode: 's3' })} />
      </FormGroup>
      {value.mode === 'uri' ? (
        <FormGroup label="Model artifact URI" fieldId={`${id}-uri`}>
          <TextInput id={`${id}-uri`} value={value.uri} placeholder="s3://bucket/path" onChange={(_e, v) => onChange({ ...value, uri: v })} validated={error ? 'error' : 'default'} />
          <FieldError msg={error} />
        </FormGroup>
      ) : (
        <>
          {s3('endpoint', 'Endpoint', 'https://s3.us-east-1.amazonaws.com')}
          {s3('bucket', 'Bucket', 'models')}
          {s3('region', 'Region', 'us-east-1', false)}
          {s3('path', 'Path', 'iris/v1')}
          <FieldError msg={error} />
        </>
      )}
    </>
  );
}

class FieldFailure extends Error {
  constructor(readonly field: Field, readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

const failWith = (f: Field, e: unknown): never => {
  throw new FieldFailure(f, e);
};

function messageOf(e: unknown): string {
  return e instanceof ApiError ? e.message : e instanceof Error ? e.message : String(e);
}

/** A form's submit: busy while run() works, its failure shown under the field it names. */
function useSubmit(run: () => Promise<void>) {
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const [busy, setBusy] = useState(false);
  const submit = async (ev?: React.FormEvent) => {
    ev?.preventDefault();
    setBusy(true);
    setErrors({});
    try {
      await run();
    } catch (e) {
      if (e instanceof FieldFailure) setErrors({ [e.field]: messageOf(e.cause) });
      else setErrors({ form: messageOf(e) });
    } finally {
      setBusy(false);
    }
  };
  return { errors, busy, submit };
}

export function RegisterModelModal({ onClose, initial }: { onClose: (createdId?: string, versionId?: string) => void; initial?: RegisterInitial }) {
  const [name, setName] = useState(initial?.name ?? '');
  const [description, setDescription] = useState(initial?.description ?? '');
  const [owner, setOwner] = useState('');
  const [versionName, setVersionName] = useState(initial?.versionName ?? 'v1');
  const [location, setLocation] = useState<Location>(emptyLocation(initial?.uri));
  const [format, setFormat] = useState(initial?.format ?? '');
  const [createdId, setCreatedId] = useState<string | undefined>();
  const { errors, busy, submit } = useSubmit(async () => {
    if (!name.trim()) failWith('modelName', new Error('The model name is required.'));
    const uri = locationUri(location);
    let id = createdId;
    if (!id) {
      try {
        const labels = Object.fromEntries((initial?.labels ?? []).map((l) => [l, { metadataType: 'MetadataStringValue', string_value: '' }]));
        const m = await post<RegisteredModel>(await mrPath('registered_models'), { name, description: description || undefined, owner: owner || undefined, customProperties: initial?.labels.length ? labels : undefined });
        id = m.id;
        setCreatedId(id);
      } catch (e) {
        failWith('modelName', e);
      }
    }
    const v = id && versionName ? await createVersion(id, versionName, owner, uri, format, failWith, initial?.source) : undefined;
    onClose(id, v?.id);
  });

  return (
    <Modal isOpen onClose={() => onClose(createdId)} variant="medium" aria-labelledby="register-title">
      <ModalHeader title="Register model" labelId="register-title" description={initial ? `From the catalog: ${initial.source.modelSourceName} (source ${initial.source.modelSourceClass}). The version's artifact records where it came from.` : undefined} />
      <ModalBody>
        {createdId && <Alert isInline variant="info" title="The model was registered; fix the version and submit again to add it." />}
        {errors.form && <Alert isInline variant="danger" title={errors.form} />}
        <Form id="register-form" onSubmit={submit}>
          <FormGroup label="Model name" isRequired fieldId="rm-name">
            <TextInput id="rm-name" isRequired value={name} onChange={(_e, v) => setName(v)} isDisabled={!!createdId} validated={errors.modelName ? 'error' : 'default'} />
            <FieldError msg={errors.modelName} />
          </FormGroup>
          <FormGroup label="Description" fieldId="rm-description">
            <TextInput id="rm-description" value={description} onChange={(_e, v) => setDescription(v)} isDisabled={!!createdId} />
          </FormGroup>
          <FormGroup label="Owner" fieldId="rm-owner">
            <TextInput id="rm-owner" value={owner} onChange={(_e, v) => setOwner(v)} isDisabled={!!createdId} />
          </FormGroup>
          <FormGroup label="Version name" fieldId="rm-version">
            <TextInput id="rm-version" value={versionName} onChange={(_e, v) => setVersionName(v)} validated={errors.versionName ? 'error' : 'default'} />
            <FieldError msg={errors.versionName} />
          </FormGroup>
          <LocationFields id="rm" value={location} onChange={setLocation} error={errors.uri} />
          <FormGroup label="Model format" fieldId="rm-format">
            <TextInput id="rm-format" value={format} placeholder="sklearn" onChange={(_e, v) => setFormat(v)} />
          </FormGroup>
        </Form>
      </ModalBody>
      <ModalFooter>
        <Button type="submit" form="register-form" isLoading={busy} isDisabled={busy}>
          Register
        </Button>
        <Button variant="link" onClick={() => onClose(createdId)}>
          Cancel
        </Button>
      </ModalFooter>
    </Modal>
  );
}

export function AddVersionModal({ modelId, onClose }: { modelId: string; onClose: (added: boolean) => void }) {
  const [versionName, setVersionName] = useState('');
  const [author, setAuthor] = useState('');
  const [location, setLocation] = useState<Location>(emptyLocation());
  const [format, setFormat] = useState('');
  const { errors, busy, submit } = useSubmit(async () => {
    if (!versionName.trim()) failWith('versionName', new Error('The version name is required.'));
    const uri = locationUri(location);
    await createVersion(modelId, versionName, author, uri, format, failWith);
    onClose(true);
  });

  return (
    <Modal isOpen onClose={() => onClose(false)} variant="medium" aria-labelledby="version-title">
      <ModalHeader title="Add version" labelId="version-title" />
      <ModalBody>
        {errors.form && <Alert isInline variant="danger" title={errors.form} />}
        <Form id="version-form" onSubmit={submit}>
          <FormGroup label="Version name" isRequired fieldId="mv-name">
            <TextInput id="mv-name" isRequired value={versionName} onChange={(_e, v) => setVersionName(v)} validated={errors.versionName ? 'error' : 'default'} />
            <FieldError msg={errors.versionName} />
          </FormGroup>
          <FormGroup label="Author" fieldId="mv-author">
            <TextInput id="mv-author" value={author} onChange={(_e, v) => setAuthor(v)} />
          </FormGroup>
          <LocationFields id="mv" value={location} onChange={setLocation} error={errors.uri} />
          <FormGroup label="Model format" fieldId="mv-format">
            <TextInput id="mv-format" value={format} onChange={(_e, v) => setFormat(v)} />
          </FormGroup>
        </Form>
      </ModalBody>
      <ModalFooter>
        <Button type="submit" form="version-form" isLoading={busy} isDisabled={busy}>
          Add version
        </Button>
        <Button variant="link" onClick={() => onClose(false)}>
          Cancel
        </Button>
      </ModalFooter>
    </Modal>
  );
}
