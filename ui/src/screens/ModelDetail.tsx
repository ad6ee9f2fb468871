// A registered model: its details, versions (each with artifacts and custom properties), the
// InferenceServices that serve it, archive/restore, and adding a version.
import React, { useEffect, useState } from 'react';
import { Alert, Breadcrumb, BreadcrumbItem, Button, Content, DescriptionList, DescriptionListDescription, DescriptionListGroup, DescriptionListTerm, PageSection, Title, Toolbar, ToolbarContent, ToolbarItem } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { ApiError, get, patch, type ListPage } from '../api';
import { ArchiveModal, EditableText, Empty, LabelsEditor, ErrorBanner, Loading, LoadedLabel, PropertiesTable, RegisteredVersionLink, StatusLabel, useAsync, type Async } from '../common';
import { deploymentsPath, deploymentsQuery } from '../deployments';
import { absoluteTime, filterLiteral, registryLink, summaryStatus, type Loaded } from '../format';
import { usePoll } from '../live';
import { mrPath, patchUnchanged } from '../registry';
import { href } from '../router';
import type { Artifact, Deployments, ModelVersion, RegisteredModel, RegistryInferenceService, TrainedModelView } from '../types';
import { DeployModal } from './DeployModal';
import { AddVersionModal } from './RegisterModel';

function Field({ term, children }: { term: string; children: React.ReactNode }) {
  return (
    <DescriptionListGroup>
      <DescriptionListTerm>{term}</DescriptionListTerm>
      <DescriptionListDescription>{children}</DescriptionListDescription>
    </DescriptionListGroup>
  );
}

/** Where a version came from, when it was registered from the catalog (upstream's fields). */
export function provenance(arts: Artifact[]): { source: string; name: string } | null {
  const a = arts.find((x) => x.modelSourceKind === 'catalog' && x.modelSourceClass && x.modelSourceName);
  return a ? { source: a.modelSourceClass as string, name: a.modelSourceName as string } : null;
}

function VersionDetail({ version, modelId, modelName, onChanged, deployNow }: { version: ModelVersion; modelId: string; modelName: string; onChanged: () => void; deployNow?: boolean }) {
  const [arts] = useAsync(async (signal) => get<ListPage<Artifact>>(await mrPath('model_versions', version.id, 'artifacts'), { pageSize: 50 }, signal), [version.id]);
  const deployments = usePoll<Deployments>(deploymentsPath, deploymentsQuery(modelId, version.id));
  // ?deploy=1 ("Register and deploy" from the catalog): the dialog opens at once, and the URL
  // forgets the flag so that a reload does not open it again
  const [deploying, setDeploying] = useState(() => !!deployNow && version.state !== 'ARCHIVED');
  useEffect(() => {
    if (deployNow) window.history.replaceState(null, '', href({ screen: 'model', id: modelId, version: version.id }));
  }, [deployNow, modelId, version.id]);
  const [made, setMade] = useState<TrainedModelView | null>(null);
  const [archiving, setArchiving] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const archived = version.state === 'ARCHIVED';
  const from = arts.state === 'ok' ? provenance(arts.data.items ?? []) : null;
  const setState = async (state: 'LIVE' | 'ARCHIVED') => {
    setError(null);
    try {
      await patch<ModelVersion>(await mrPath('model_versions', version.id), { state });
      onChanged();
    } catch (e) {
      if (state === 'ARCHIVED') throw e;
      setError(e instanceof ApiError ? e : new ApiError(0, String(e)));
    }
  };
  return (
    <section aria-label={`Version ${version.name}`} data-testid="version-detail">
      <Title headingLevel="h3">Version {version.name}</Title>
      {from && (
        <p data-testid="provenance">
          Registered from <a href={href({ screen: 'catalogModel', source: from.source, name: from.name })}>{`${from.name} (catalog source ${from.source})`}</a>
        </p>
      )}
      <Toolbar>
        <ToolbarContent>
          <ToolbarItem>
            <StatusLabel color={archived ? 'grey' : 'green'}>{archived ? 'Archived' : 'Live'}</StatusLabel>
          </ToolbarItem>
          <ToolbarItem>
            <Button variant="primary" onClick={() => setDeploying(true)} isDisabled={archived}>
              Deploy
            </Button>
          </ToolbarItem>
          <ToolbarItem>
            {archived ? (
              <Button variant="secondary" onClick={() => setState('LIVE')}>
                Restore version
              </Button>
            ) : (
              <Button variant="secondary" isDanger onClick={() => setArchiving(true)}>
                Archive version
              </Button>
            )}
          </ToolbarItem>
        </ToolbarContent>
      </Toolbar>
      {error && <ErrorBanner error={error} what="the change" />}
      {made && (
        <Alert isInline variant="success" title={`TrainedModel ${made.name} created in ${made.namespace} on ${made.inferenceService}`} data-testid="deploy-done">
          Its state follows below, live, until every replica has loaded it.
        </Alert>
      )}
      <DescriptionList isHorizontal isCompact>
        <Field term="ID">{version.id}</Field>
        <Field term="Description">
          <EditableText
            label={`description of version ${version.name}`}
            value={version.description}
            testId="version-description"
            save={async (description) => {
              await patchUnchanged<ModelVersion>(await mrPath('model_versions', version.id), version.lastUpdateTimeSinceEpoch, { description }, `Version ${version.name}`);
              onChanged();
            }}
          />
        </Field>
        <Field term="Labels">
          <LabelsEditor
            owner={`version ${version.name}`}
            props={version.customProperties}
            save={async (customProperties) => {
              await patchUnchanged<ModelVersion>(await mrPath('model_versions', version.id), version.lastUpdateTimeSinceEpoch, { customProperties }, `Version ${version.name}`);
              onChanged();
            }}
          />
        </Field>
        <Field term="Author">{version.author ?? '—'}</Field>
        <Field term="Created">{absoluteTime(version.createTimeSinceEpoch)}</Field>
        <Field term="Link">
          <a href={href({ screen: 'model', id: modelId, version: version.id })}>{`${modelName} / ${version.name}`}</a>
        </Field>
        <Field term="Loaded">
          <DeployedCount deployments={deployments} versionId={version.id} />
        </Field>
      </DescriptionList>
      <Title headingLevel="h4">Deployments of this version</Title>
      <DeploymentTables deployments={deployments} showVersion={false} testId="version-deployments" />
      <Title headingLevel="h4">Artifacts</Title>
      {arts.state === 'loading' && <Loading what="artifacts" />}
      {arts.state === 'error' && <ErrorBanner error={arts.error} what="artifacts" />}
      {arts.state === 'ok' && arts.data.items.length === 0 && <Empty title="No artifacts" />}
      {arts.state === 'ok' && arts.data.items.length > 0 && (
        <Table aria-label={`Artifacts of version ${version.name}`} variant="compact">
          <Thead>
            <Tr>
              <Th>Name</Th>
              <Th>Type</Th>
              <Th>URI</Th>
              <Th>Format</Th>
            </Tr>
          </Thead>
          <Tbody>
            {arts.data.items.map((a, i) => (
              <Tr key={a.id ?? i}>
                <Td dataLabel="Name">{a.name ?? ''}</Td>
                <Td dataLabel="Type">{a.artifactType ?? ''}</Td>
                <Td dataLabel="URI" className="mp-mono">
                  {a.uri ?? ''}
                </Td>
                <Td dataLabel="Format">{[a.modelFormatName, a.modelFormatVersion].filter(Boolean).join(' ')}</Td>
              </Tr>
            ))}
          </Tbody>
        </Table>
      )}
      <Title headingLevel="h4">Custom properties</Title>
      <PropertiesTable props={version.customProperties} caption={`Custom properties of version ${version.name}`} />
      {archiving && <ArchiveModal kind="version" name={version.name} onArchive={() => setState('ARCHIVED')} onClose={() => setArchiving(false)} />}
      {deploying && (
        <DeployModal
          modelName={modelName}
          version={version}
          onClose={(tm) => {
            setDeploying(false);
            if (tm) setMade(tm);
          }}
        />
      )}
    </section>
  );
}

/** What the registry recorded: its InferenceService entities for this model. */
function RegistryRecords({ modelId }: { modelId: string }) {
  const [list] = useAsync(async (signal) => get<ListPage<RegistryInferenceService>>(await mrPath('inference_services'), { filterQuery: `registeredModelId = ${filterLiteral(modelId)}`, pageSize: 50 }, signal), [modelId]);
  if (list.state === 'loading') return <Loading what="registry records" />;
  if (list.state === 'error') return <ErrorBanner error={list.error} what="the registry's InferenceServices" />;
  if ((list.data.items ?? []).length === 0) return <Empty title="The registry records no InferenceService for this model" />;
  return (
    <Table aria-label="InferenceServices recorded by the registry" variant="compact" data-testid="registry-isvcs">
      <Thead>
        <Tr>
          <Th>Registry ID</Th>
          <Th>Name</Th>
          <Th>Version</Th>
          <Th>Desired state</Th>
          <Th>Runtime</Th>
        </Tr>
      </Thead>
      <Tbody>
        {list.data.items.map((s) => (
          <Tr key={s.id}>
            <Td dataLabel="Registry ID">{s.id}</Td>
            <Td dataLabel="Name">{s.name ?? ''}</Td>
            <Td dataLabel="Version">{s.modelVersionId ?? ''}</Td>
            <Td dataLabel="Desired state">{s.desiredState ?? ''}</Td>
            <Td dataLabel="Runtime">{s.runtime ?? ''}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}

/** The TrainedModels of a version (or all) and their replicas: "2 TrainedModels, 3/4 loaded". */
function loadedSum(tms: TrainedModelView[]): Loaded | null {
  const known = tms.filter((t) => t.loaded);
  if (known.length === 0) return null;
  return { ready: known.reduce((a, t) => a + (t.loaded?.ready ?? 0), 0), total: known.reduce((a, t) => a + (t.loaded?.total ?? 0), 0) };
}

function DeployedCount({ deployments, versionId }: { deployments: Async<Deployments>; versionId?: string }) {
  if (deployments.state !== 'ok') return <>—</>;
  const tms = deployments.data.trainedModels.filter((t) => !versionId || registryLink(t.labels).modelVersionId === versionId);
  if (tms.length === 0) return <>not deployed</>;
  return (
    <span className="mp-editable">
      <span>{`${tms.length} TrainedModel${tms.length === 1 ? '' : 's'}`}</span>
      <LoadedLabel loaded={loadedSum(tms)} />
    </span>
  );
}

/** The TrainedModels and InferenceServices that serve a model (or one version), live. */
function DeploymentTables({ deployments, showVersion, testId }: { deployments: Async<Deployments>; showVersion: boolean; testId: string }) {
  if (deployments.state === 'loading') return <Loading what="deployments" />;
  if (deployments.state === 'error') return <ErrorBanner error={deployments.error} what="deployments" />;
  const { trainedModels: tms, inferenceServices: isvcs, complete } = deployments.data;
  return (
    <div data-testid={testId}>
      {!complete && <Alert isInline variant="info" title="Only the first 100 namespaces you can see were searched." />}
      {tms.length === 0 && isvcs.length === 0 && <Empty title="Not deployed">No TrainedModel or InferenceService that you can see serves it.</Empty>}
      {tms.length > 0 && (
        <Table aria-label="TrainedModels serving it" variant="compact" data-testid="linked-tms">
          <Thead>
            <Tr>
              <Th>TrainedModel</Th>
              <Th>Namespace</Th>
              <Th>InferenceService</Th>
              {showVersion && <Th>Version</Th>}
              <Th>Status</Th>
              <Th>Loaded</Th>
            </Tr>
          </Thead>
          <Tbody>
            {tms.map((t) => {
              const st = summaryStatus(t.ready, t.conditions);
              const link = registryLink(t.labels);
              return (
                <Tr key={`${t.namespace}/${t.name}`} data-testid={`deployed-${t.name}`}>
                  <Td dataLabel="TrainedModel">
                    <a href={href({ screen: 'isvc', ns: t.namespace, name: t.inferenceService })}>{t.name}</a>
                  </Td>
                  <Td dataLabel="Namespace">{t.namespace}</Td>
                  <Td dataLabel="InferenceService">{t.inferenceService}</Td>
                  {showVersion && <Td dataLabel="Version">{link.registeredModelId ? <RegisteredVersionLink modelId={link.registeredModelId} versionId={link.modelVersionId} /> : '—'}</Td>}
                  <Td dataLabel="Status">
                    <StatusLabel color={st.color}>{st.label}</StatusLabel>
                    {st.message && <div data-testid="status-message">{st.message}</div>}
                  </Td>
                  <Td dataLabel="Loaded">
                    <LoadedLabel loaded={t.loaded} />
                  </Td>
                </Tr>
              );
            })}
          </Tbody>
        </Table>
      )}
      {isvcs.length > 0 && (
        <Table aria-label="InferenceServices serving it" variant="compact" data-testid="linked-isvcs">
          <Thead>
            <Tr>
              <Th>InferenceService</Th>
              <Th>Namespace</Th>
              {showVersion && <Th>Version</Th>}
              <Th>Registry link</Th>
              <Th>Status</Th>
            </Tr>
          </Thead>
          <Tbody>
            {isvcs.map((s) => {
              const st = summaryStatus(s.ready, s.conditions);
              const link = registryLink(s.labels);
              return (
                <Tr key={`${s.namespace}/${s.name}`}>
                  <Td dataLabel="InferenceService">
                    <a href={href({ screen: 'isvc', ns: s.namespace, name: s.name })}>{s.name}</a>
                  </Td>
                  <Td dataLabel="Namespace">{s.namespace}</Td>
                  {showVersion && <Td dataLabel="Version">{link.registeredModelId ? <RegisteredVersionLink modelId={link.registeredModelId} versionId={link.modelVersionId} /> : '—'}</Td>}
                  <Td dataLabel="Registry link">{link.inferenceServiceId ? `recorded as ${link.inferenceServiceId}` : 'not recorded yet'}</Td>
                  <Td dataLabel="Status">
                    <StatusLabel color={st.color}>{st.label}</StatusLabel>
                  </Td>
                </Tr>
              );
            })}
          </Tbody>
        </Table>
      )}
    </div>
  );
}

export default function ModelDetail({ id, version, deploy }: { id: string; version?: string; deploy?: boolean }) {
  const [model, reloadModel] = useAsync(async (signal) => get<RegisteredModel>(await mrPath('registered_models', id), undefined, signal), [id]);
  const [versions, reloadVersions] = useAsync(async (signal) => get<ListPage<ModelVersion>>(await mrPath('registered_models', id, 'versions'), { pageSize: 100, orderBy: 'CREATE_TIME', sortOrder: 'DESC' }, signal), [id]);
  // the version of the URL, read by itself (it may be older than the 100 listed)
  const [one, reloadOne] = useAsync(async (signal) => (version ? get<ModelVersion>(await mrPath('model_versions', version), undefined, signal) : null), [version]);
  const deployments = usePoll<Deployments>(deploymentsPath, deploymentsQuery(id));
  const [adding, setAdding] = useState(false);
  const [archiving, setArchiving] = useState(false);
  const [actionError, setActionError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  const setState = async (state: 'LIVE' | 'ARCHIVED') => {
    setBusy(true);
    setActionError(null);
    try {
      await patch<RegisteredModel>(await mrPath('registered_models', id), { state });
      reloadModel();
      reloadVersions();
    } catch (e) {
      if (state === 'ARCHIVED') throw e;
      setActionError(e instanceof ApiError ? e : new ApiError(0, String(e)));
    } finally {
      setBusy(false);
    }
  };

  const crumbs = (
    <Breadcrumb>
      <BreadcrumbItem to={href({ screen: 'models', q: '', state: '', sort: '', owner: '' })}>Registered models</BreadcrumbItem>
      <BreadcrumbItem isActive>{model.state === 'ok' ? model.data.name : id}</BreadcrumbItem>
    </Breadcrumb>
  );
  if (model.state === 'loading')
    return (
      <PageSection>
        {crumbs}
        <Loading what="model" />
      </PageSection>
    );
  if (model.state === 'error')
    return (
      <PageSection>
        {crumbs}
        <ErrorBanner error={model.error} what={`model ${id}`} />
      </PageSection>
    );
  const m = model.data;
  const archived = m.state === 'ARCHIVED';
  const versionList = versions.state === 'ok' ? versions.data.items : [];
  const picked = version ? (one.state === 'ok' ? one.data : null) : versionList[0];
  const shown = picked && picked.registeredModelId === m.id ? picked : null;
  const versionChanged = () => {
    reloadVersions();
    reloadOne();
  };
  return (
    <>
      <PageSection>
        {crumbs}
        <Title headingLevel="h1" data-testid="model-name">
          {m.name}
        </Title>
        <Toolbar>
          <ToolbarContent>
            <ToolbarItem>
              <StatusLabel color={archived ? 'grey' : 'green'}>{archived ? 'Archived' : 'Live'}</StatusLabel>
            </ToolbarItem>
            <ToolbarItem>
              {archived ? (
                <Button variant="secondary" isLoading={busy} isDisabled={busy} onClick={() => setState('LIVE')}>
                  Restore model
                </Button>
              ) : (
                <Button variant="secondary" isDanger isLoading={busy} isDisabled={busy} onClick={() => setArchiving(true)}>
                  Archive model
                </Button>
              )}
            </ToolbarItem>
            <ToolbarItem>
              <Button variant="primary" onClick={() => setAdding(true)} isDisabled={archived}>
                Add version
              </Button>
            </ToolbarItem>
          </ToolbarContent>
        </Toolbar>
        {actionError && <ErrorBanner error={actionError} what="the change" />}
        <DescriptionList isHorizontal isCompact>
          <Field term="ID">{m.id}</Field>
          <Field term="Description">
            <EditableText
              label={`description of model ${m.name}`}
              value={m.description}
              testId="model-description"
              save={async (description) => {
                await patchUnchanged<RegisteredModel>(await mrPath('registered_models', m.id), m.lastUpdateTimeSinceEpoch, { description }, `The model ${m.name}`);
                reloadModel();
              }}
            />
          </Field>
          <Field term="Labels">
            <LabelsEditor
              owner={`model ${m.name}`}
              props={m.customProperties}
              save={async (customProperties) => {
                await patchUnchanged<RegisteredModel>(await mrPath('registered_models', m.id), m.lastUpdateTimeSinceEpoch, { customProperties }, `The model ${m.name}`);
                reloadModel();
              }}
            />
          </Field>
          <Field term="Owner">{m.owner || '—'}</Field>
          <Field term="Created">{absoluteTime(m.createTimeSinceEpoch)}</Field>
          <Field term="Last updated">{absoluteTime(m.lastUpdateTimeSinceEpoch)}</Field>
        </DescriptionList>
        <Title headingLevel="h2">Custom properties</Title>
        <PropertiesTable props={m.customProperties} caption="Custom properties of the model" />
      </PageSection>
      <PageSection>
        <Title headingLevel="h2">Versions</Title>
        {versions.state === 'loading' && <Loading what="versions" />}
        {versions.state === 'error' && <ErrorBanner error={versions.error} what="versions" />}
        {versions.state === 'ok' && versionList.length === 0 && <Empty title="No versions">Add a version to deploy this model.</Empty>}
        {versionList.length > 0 && (
          <Table aria-label="Versions" variant="compact" data-testid="versions-table">
            <Thead>
              <Tr>
                <Th>Name</Th>
                <Th>Author</Th>
                <Th>State</Th>
                <Th>Deployed</Th>
                <Th>Created</Th>
              </Tr>
            </Thead>
            <Tbody>
              {versionList.map((v) => (
                <Tr key={v.id} isRowSelected={shown?.id === v.id}>
                  <Td dataLabel="Name">
                    <a href={href({ screen: 'model', id: m.id, version: v.id })} aria-current={shown?.id === v.id ? 'page' : undefined}>
                      {v.name}
                    </a>
                  </Td>
                  <Td dataLabel="Author">{v.author ?? ''}</Td>
                  <Td dataLabel="State">{v.state ?? 'LIVE'}</Td>
                  <Td dataLabel="Deployed">
                    <DeployedCount deployments={deployments} versionId={v.id} />
                  </Td>
                  <Td dataLabel="Created">{absoluteTime(v.createTimeSinceEpoch)}</Td>
                </Tr>
              ))}
            </Tbody>
          </Table>
        )}
        {versions.state === 'ok' && versions.data.nextPageToken && <Alert isInline variant="info" title="Only the 100 newest versions are listed." />}
        {version && one.state === 'loading' && <Loading what={`version ${version}`} />}
        {version && one.state === 'error' && <ErrorBanner error={one.error} what={`version ${version}`} />}
        {version && one.state === 'ok' && one.data && one.data.registeredModelId !== m.id && (
          <Alert isInline variant="warning" title={`Version ${version} belongs to another model`}>
            <a href={href({ screen: 'model', id: one.data.registeredModelId, version })}>Open it under model {one.data.registeredModelId}</a>
          </Alert>
        )}
        {shown && <VersionDetail key={shown.id} version={shown} modelId={m.id} modelName={m.name} onChanged={versionChanged} deployNow={deploy && shown.id === version} />}
      </PageSection>
      <PageSection>
        <Title headingLevel="h2">Deployments</Title>
        <Content component="p">
          Loaded: <DeployedCount deployments={deployments} />
        </Content>
        <DeploymentTables deployments={deployments} showVersion testId="model-deployments" />
        <Title headingLevel="h3">Recorded in the registry</Title>
        <RegistryRecords modelId={m.id} />
      </PageSection>
      {archiving && <ArchiveModal kind="model" name={m.name} onArchive={() => setState('ARCHIVED')} onClose={() => setArchiving(false)} />}
      {adding && (
        <AddVersionModal
          modelId={m.id}
          onClose={(added) => {
            setAdding(false);
            if (added) reloadVersions();
          }}
        />
      )}
    </>
  );
}
