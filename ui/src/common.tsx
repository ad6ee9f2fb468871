// Shared pieces of the screens: async loading state, error banners, empty states, status labels.
import React, { useCallback, useEffect, useRef, useState } from 'react';
import { Alert, Bullseye, Button, Content, DescriptionList, DescriptionListDescription, DescriptionListGroup, DescriptionListTerm, EmptyState, EmptyStateBody, ExpandableSection, Form, FormGroup, FormHelperText, HelperText, HelperTextItem, Label, Modal, ModalBody, ModalFooter, ModalHeader, Spinner, TextArea, TextInput } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { ApiError } from './api';
import { absoluteTime, conditionColor, labelsOf, logoSrc, loadedColor, loadedText, propertyRows, relativeTime, replicaStateColor, type Condition, type Loaded, type StatusColor } from './format';
import { modelName, versionName } from './registry';
import { href } from './router';
import type { ReplicaView } from './types';
import { goNext, goPrev, hasNext, hasPrev, type PagerState } from './pager';

export type Async<T> = { state: 'loading' } | { state: 'error'; error: ApiError } | { state: 'ok'; data: T };

function asApiError(e: unknown): ApiError {
  return e instanceof ApiError ? e : new ApiError(0, (e as Error)?.message ?? String(e));
}

/** Runs load() whenever deps change or reload() is called; a newer run wins over an older one still in flight. */
export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: React.DependencyList): [Async<T>, () => void] {
  const [v, setV] = useState<Async<T>>({ state: 'loading' });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const lastTick = useRef(tick);
  useEffect(() => {
    const ac = new AbortController();
    // a reload() of data on screen keeps it there until the new answer replaces it (no flash of
    // a spinner after a save); new deps, or a retry after an error, show the spinner
    const refresh = lastTick.current !== tick;
    lastTick.current = tick;
    setV((old) => (refresh && old.state === 'ok' ? old : { state: 'loading' }));
    loadRef.current(ac.signal).then(
      (data) => !ac.signal.aborted && setV({ state: 'ok', data }),
      (e) => !ac.signal.aborted && setV({ state: 'error', error: asApiError(e) }),
    );
    return () => ac.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return [v, reload];
}

const SOURCE_NAMES: Record<string, string> = {
  registry: 'The model registry',
  catalog: 'The model catalog',
  kubernetes: 'The Kubernetes API',
};

function bannerTitle(error: ApiError, what: string): string {
  const svc = SOURCE_NAMES[error.source];
  if (error.status === 503 || error.status === 502) return `${svc ?? 'A service'} is unavailable: ${what} cannot be shown`;
  if (error.status === 403) return `Access denied to ${what}`;
  if (error.status === 401) return 'You are not signed in';
  return `Could not load ${what}`;
}

/** A clear banner for a failed call; names the service that failed when the BFF says which. */
export function ErrorBanner({ error, what, onRetry }: { error: ApiError; what: string; onRetry?: () => void }) {
  return (
    <Alert
      variant="danger"
      isInline
      title={bannerTitle(error, what)}
      role="alert"
      data-testid="error-banner"
      actionLinks={
        onRetry ? (
          <Button variant="link" isInline onClick={onRetry}>
            Retry
          </Button>
        ) : undefined
      }
    >
      {error.message}
    </Alert>
  );
}

export interface Failure {
  state: Async<unknown>;
  what: string;
  retry: () => void;
}

/** "a, b and c" */
function joinWords(words: string[]): string {
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

/**
 * One banner per outage: the failed calls of a page grouped by (status, source, message), each
 * group one banner naming everything it hides, with one Retry that repeats every call in it.
 */
export function ErrorBanners({ calls }: { calls: Failure[] }) {
  const groups = new Map<string, { error: ApiError; whats: string[]; retries: (() => void)[] }>();
  for (const c of calls) {
    if (c.state.state !== 'error') continue;
    const e = c.state.error;
    const key = `${e.status}\u0000${e.source}\u0000${e.message}`;
    const g = groups.get(key) ?? { error: e, whats: [], retries: [] };
    g.whats.push(c.what);
    g.retries.push(c.retry);
    groups.set(key, g);
  }
  return (
    <>
      {[...groups.entries()].map(([k, g]) => (
        <ErrorBanner key={k} error={g.error} what={joinWords(g.whats)} onRetry={() => g.retries.forEach((r) => r())} />
      ))}
    </>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <Bullseye>
      <Spinner size="lg" aria-label={`Loading ${what}`} />
    </Bullseye>
  );
}

export function Empty({ title, children }: { title: string; children?: React.ReactNode }) {
  return (
    <EmptyState titleText={title} headingLevel="h3" variant="sm" data-testid="empty-state">
      {children ? <EmptyStateBody>{children}</EmptyStateBody> : null}
    </EmptyState>
  );
}

const PF_COLORS: Record<StatusColor, 'green' | 'red' | 'orange' | 'grey'> = { green: 'green', red: 'red', orange: 'orange', grey: 'grey' };

export function StatusLabel({ color, children }: { color: StatusColor; children: React.ReactNode }) {
  return <Label color={PF_COLORS[color]}>{children}</Label>;
}

export function ConditionsTable({ conditions, caption }: { conditions: Condition[]; caption: string }) {
  if (conditions.length === 0) return <Empty title="No conditions reported yet" />;
  return (
    <Table aria-label={caption} variant="compact">
      <Thead>
        <Tr>
          <Th>Type</Th>
          <Th>Status</Th>
          <Th>Reason</Th>
          <Th>Message</Th>
          <Th>Last transition</Th>
        </Tr>
      </Thead>
      <Tbody>
        {conditions.map((c) => (
          <Tr key={c.type}>
            <Td dataLabel="Type">{c.type}</Td>
            <Td dataLabel="Status">
              <StatusLabel color={conditionColor(c)}>{c.status}</StatusLabel>
            </Td>
            <Td dataLabel="Reason">{c.reason ?? ''}</Td>
            <Td dataLabel="Message">{c.message ?? ''}</Td>
            <Td dataLabel="Last transition">{c.lastTransitionTime ?? ''}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}

/** Conditions behind a toggle, collapsed by default: "Conditions (6: 1 False)". */
export function ConditionsSection({ conditions, caption, testId }: { conditions: Condition[]; caption: string; testId?: string }) {
  const [open, setOpen] = useState(false);
  const notTrue = conditions.filter((c) => c.status !== 'True').length;
  const text = `Conditions (${conditions.length}${notTrue ? `, ${notTrue} not True` : ''})`;
  return (
    <ExpandableSection toggleText={text} isExpanded={open} onToggle={(_e, v) => setOpen(v)} data-testid={testId}>
      <ConditionsTable conditions={conditions} caption={caption} />
    </ExpandableSection>
  );
}

/** "2/3 loaded", coloured: all green, some orange, none red. */
export function LoadedLabel({ loaded }: { loaded: Loaded | null | undefined }) {
  return (
    <span data-testid="loaded">
      <StatusLabel color={loadedColor(loaded)}>{loadedText(loaded)}</StatusLabel>
    </span>
  );
}

/** One row per serving replica: pod, state, reason, since (from the controller's detail). */
export function ReplicasTable({ replicas, caption }: { replicas: ReplicaView[] | null | undefined; caption: string }) {
  if (!replicas || replicas.length === 0) return <Empty title="No replica reports its state yet" />;
  const now = Date.now();
  return (
    <Table aria-label={caption} variant="compact" data-testid="replicas-table">
      <Thead>
        <Tr>
          <Th>Pod</Th>
          <Th>State</Th>
          <Th>Reason</Th>
          <Th>Since</Th>
        </Tr>
      </Thead>
      <Tbody>
        {replicas.map((r) => (
          <Tr key={r.pod}>
            <Td dataLabel="Pod" className="mp-mono">
              {r.pod}
            </Td>
            <Td dataLabel="State">
              <StatusLabel color={replicaStateColor(r.state)}>{r.state}</StatusLabel>
            </Td>
            <Td dataLabel="Reason">{r.reason ?? ''}</Td>
            <Td dataLabel="Since">{r.since ? <time dateTime={r.since} title={absoluteTime(r.since)}>{relativeTime(r.since, now)}</time> : '—'}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}

/** A name read from the registry, shown as fallback until it is known. */
function useName(load: () => Promise<string>, fallback: string, deps: React.DependencyList): string {
  const [name, setName] = useState(fallback);
  useEffect(() => {
    let live = true;
    setName(fallback);
    load().then((n) => live && setName(n));
    return () => {
      live = false;
    };
  }, deps);
  return name;
}

/** "iris / v1" linking to the version's page (the model's when no version is named). */
export function RegisteredVersionLink({ modelId, versionId }: { modelId: string; versionId?: string }) {
  const m = useName(() => modelName(modelId), `model ${modelId}`, [modelId]);
  const v = useName(() => (versionId ? versionName(versionId) : Promise.resolve('')), versionId ? `version ${versionId}` : '', [versionId]);
  return <a href={href({ screen: 'model', id: modelId, version: versionId })}>{v ? `${m} / ${v}` : m}</a>;
}

export function PropertiesTable({ props, caption }: { props: Record<string, unknown> | undefined; caption: string }) {
  const rows = propertyRows(props);
  if (rows.length === 0) return <Empty title="No custom properties" />;
  return (
    <Table aria-label={caption} variant="compact">
      <Thead>
        <Tr>
          <Th>Key</Th>
          <Th>Type</Th>
          <Th>Value</Th>
        </Tr>
      </Thead>
      <Tbody>
        {rows.map((r) => (
          <Tr key={r.key}>
            <Td dataLabel="Key">{r.key}</Td>
            <Td dataLabel="Type">{r.type}</Td>
            <Td dataLabel="Value">{r.value}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}

/** Previous/next page buttons of a list paged by nextPageToken. */
export function PagerNav({ pager, setPager, label }: { pager: PagerState; setPager: (f: (p: PagerState) => PagerState) => void; label: string }) {
  return (
    <nav className="mp-pager" aria-label={label}>
      <span data-testid="page-number">Page {pager.index + 1}</span>
      <Button variant="secondary" isDisabled={!hasPrev(pager)} onClick={() => setPager(goPrev)}>
        Previous page
      </Button>
      <Button variant="secondary" isDisabled={!hasNext(pager)} onClick={() => setPager(goNext)}>
        Next page
      </Button>
    </nav>
  );
}

/** A horizontal description list of (term, text) pairs; an empty text shows as "—". */
export function Fields({ items }: { items: [string, React.ReactNode][] }) {
  return (
    <DescriptionList isHorizontal isCompact>
      {items.map(([t, v]) => (
        <DescriptionListGroup key={t}>
          <DescriptionListTerm>{t}</DescriptionListTerm>
          <DescriptionListDescription>{v === undefined || v === null || v === '' ? '—' : v}</DescriptionListDescription>
        </DescriptionListGroup>
      ))}
    </DescriptionList>
  );
}

function messageOf(e: unknown): string {
  return e instanceof ApiError ? e.message : e instanceof Error ? e.message : String(e);
}

/**
 * A text shown with an Edit button; editing it opens a text area with Save and Cancel. save()
 * does the write; its failure (a validation message, or a concurrent change) is shown in words
 * under the field and the text stays in the editor.
 */
export function EditableText({ label, value, save, testId }: { label: string; value: string | undefined; save: (v: string) => Promise<void>; testId?: string }) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(value ?? '');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  if (!editing)
    return (
      <span className="mp-editable" data-testid={testId}>
        <span>{value || '—'}</span>
        <Button
          variant="link"
          isInline
          aria-label={`Edit ${label}`}
          onClick={() => {
            setDraft(value ?? '');
            setError('');
            setEditing(true);
          }}
        >
          Edit
        </Button>
      </span>
    );
  const submit = async () => {
    setBusy(true);
    setError('');
    try {
      await save(draft);
      setEditing(false);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="mp-editing" data-testid={testId}>
      <TextArea aria-label={label} value={draft} onChange={(_e, v) => setDraft(v)} validated={error ? 'error' : 'default'} autoResize />
      {error && (
        <HelperText>
          <HelperTextItem variant="error" data-testid="edit-error">
            {error}
          </HelperTextItem>
        </HelperText>
      )}
      <span className="mp-edit-actions">
        <Button variant="primary" size="sm" isLoading={busy} isDisabled={busy} onClick={submit}>
          Save
        </Button>
        <Button variant="link" size="sm" isDisabled={busy} onClick={() => setEditing(false)}>
          Cancel
        </Button>
      </span>
    </span>
  );
}

/**
 * A change confirmed by typing: the user types expected (a name, an id) before the action's
 * button is enabled; onConfirm()'s failure is shown in words and the dialog stays open.
 */
export function TypeToConfirmModal({ title, children, label, expected, action, onConfirm, onClose }: { title: string; children: React.ReactNode; label: string; expected: string; action: string; onConfirm: () => Promise<void>; onClose: () => void }) {
  const [typed, setTyped] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const go = async (ev?: React.FormEvent) => {
    ev?.preventDefault();
    if (typed !== expected) return;
    setBusy(true);
    setError('');
    try {
      await onConfirm();
      onClose();
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  };
  return (
    <Modal isOpen onClose={onClose} variant="small" aria-labelledby="confirm-title">
      <ModalHeader title={title} labelId="confirm-title" titleIconVariant="warning" />
      <ModalBody>
        <Content component="p">{children}</Content>
        {error && <Alert isInline variant="danger" title={error} data-testid="confirm-error" />}
        <Form id="confirm-form" onSubmit={go}>
          <FormGroup label={label} fieldId="confirm-typed">
            <TextInput id="confirm-typed" value={typed} onChange={(_e, v) => setTyped(v)} autoComplete="off" />
          </FormGroup>
        </Form>
      </ModalBody>
      <ModalFooter>
        <Button variant="danger" type="submit" form="confirm-form" isDisabled={typed !== expected || busy} isLoading={busy}>
          {action}
        </Button>
        <Button variant="link" onClick={onClose}>
          Cancel
        </Button>
      </ModalFooter>
    </Modal>
  );
}

/** Archive after confirmation: the user types the name of what is archived. */
export function ArchiveModal({ kind, name, onArchive, onClose }: { kind: string; name: string; onArchive: () => Promise<void>; onClose: () => void }) {
  return (
    <TypeToConfirmModal title={`Archive ${kind}?`} label={`Type the ${kind} name, ${name}, to confirm`} expected={name} action="Archive" onConfirm={onArchive} onClose={onClose}>
      {kind === 'model' ? 'The model will be archived (its versions are not changed): it stays in the registry, listed under archived models, and can be restored.' : 'The version will be archived: it stays in the registry and can be restored.'}
    </TypeToConfirmModal>
  );
}

/**
 * Upstream's labels (custom properties with an empty string value), each removable, and a field
 * to add one. save() gets the whole new customProperties map (the registry's PATCH replaces it);
 * a failure is shown in words.
 */
export function LabelsEditor({ owner, props, save }: { owner: string; props: Record<string, unknown> | undefined; save: (next: Record<string, unknown>) => Promise<void> }) {
  const [adding, setAdding] = useState(false);
  const [draft, setDraft] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const labels = labelsOf(props);
  const run = async (next: Record<string, unknown>) => {
    setBusy(true);
    setError('');
    try {
      await save(next);
      setAdding(false);
      setDraft('');
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  const add = (ev?: React.FormEvent) => {
    ev?.preventDefault();
    const l = draft.trim();
    if (!l) return setError('A label needs a name.');
    if (props && l in props) return setError(labels.includes(l) ? `${owner} already has the label ${l}.` : `${owner} already has a property named ${l}.`);
    void run({ ...(props ?? {}), [l]: { metadataType: 'MetadataStringValue', string_value: '' } });
  };
  const remove = (l: string) => {
    const next = { ...(props ?? {}) };
    delete next[l];
    void run(next);
  };
  return (
    <span className="mp-editing" data-testid="labels">
      <span className="mp-editable">
        {labels.length === 0 && <span>—</span>}
        {labels.map((l) => (
          <Label key={l} isCompact className="mp-tag" onClose={busy ? undefined : () => remove(l)} closeBtnAriaLabel={`Remove label ${l}`}>
            {l}
          </Label>
        ))}
        {!adding && (
          <Button variant="link" isInline aria-label={`Add label to ${owner}`} onClick={() => setAdding(true)}>
            Add label
          </Button>
        )}
      </span>
      {adding && (
        <form className="mp-edit-actions" onSubmit={add}>
          <TextInput aria-label={`New label of ${owner}`} value={draft} onChange={(_e, v) => setDraft(v)} validated={error ? 'error' : 'default'} />
          <Button variant="primary" size="sm" type="submit" isLoading={busy} isDisabled={busy}>
            Add
          </Button>
          <Button
            variant="link"
            size="sm"
            onClick={() => {
              setAdding(false);
              setError('');
            }}
          >
            Cancel
          </Button>
        </form>
      )}
      {error && (
        <HelperText>
          <HelperTextItem variant="error" data-testid="labels-error">
            {error}
          </HelperTextItem>
        </HelperText>
      )}
    </span>
  );
}

/** The icon of a catalog model without a logo (or whose logo did not load): a cube, decorative. */
function ModelIcon({ size }: { size: number }) {
  return (
    <svg className="mp-logo mp-logo-fallback" width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" focusable="false" data-testid="catalog-logo-fallback">
      <path d="M12 2 3 7v10l9 5 9-5V7l-9-5Zm0 2.3L18.9 8 12 11.7 5.1 8 12 4.3ZM5 9.7l6 3.3v6.6l-6-3.3V9.7Zm8 9.9V13l6-3.3v6.6l-6 3.3Z" fill="currentColor" />
    </svg>
  );
}

/**
 * A catalog model's logo, decorative beside its name: format.ts logoSrc() decides what may be
 * loaded (an image data URI or an https: address, loaded without a referrer); anything else, and
 * a logo that fails to load, shows the fallback icon when asked for (fallback), else nothing.
 */
export function CatalogLogo({ logo, size = 24, fallback = false }: { logo: string | undefined | null; size?: number; fallback?: boolean }) {
  const src = logoSrc(logo);
  const [failed, setFailed] = useState<string | null>(null);
  if (!src || failed === src) return fallback ? <ModelIcon size={size} /> : null;
  return <img className="mp-logo" src={src} alt="" width={size} height={size} referrerPolicy="no-referrer" loading="lazy" decoding="async" onError={() => setFailed(src)} data-testid="catalog-logo" />;
}

export interface Outcome {
  ok: boolean;
  text: string;
}

/**
 * One change at a time and what came of it: run(what, call) marks busy, awaits call, then shows
 * what (done) or the server's refusal in words, and calls done() after a success (a reload).
 */
export function useChange(done: () => void): { busy: boolean; outcome: Outcome | null; run: (what: string, call: () => Promise<unknown>) => Promise<void> } {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const run = async (what: string, call: () => Promise<unknown>) => {
    setBusy(true);
    setOutcome(null);
    try {
      await call();
      setOutcome({ ok: true, text: what });
      done();
    } catch (e) {
      setOutcome({ ok: false, text: e instanceof ApiError ? e.message : String(e) });
    } finally {
      setBusy(false);
    }
  };
  return { busy, outcome, run };
}

/** What came of the last change: its words on success, the refusal in words otherwise. */
export function ChangeOutcome({ outcome }: { outcome: Outcome | null }) {
  if (!outcome) return null;
  return (
    <Alert isInline variant={outcome.ok ? 'success' : 'danger'} title={outcome.ok ? outcome.text : 'The change was refused'} data-testid="change-outcome">
      {!outcome.ok && outcome.text}
    </Alert>
  );
}

/** One text field with its help, or its problem once the form was submitted. */
export function Field({ id, label, help, problem, shown, isRequired, children }: { id: string; label: string; help: string; problem?: string; shown: boolean; isRequired?: boolean; children: (validated: 'error' | 'default', describedBy: string) => React.ReactNode }) {
  const bad = shown && !!problem;
  return (
    <FormGroup label={label} isRequired={isRequired} fieldId={id}>
      {children(bad ? 'error' : 'default', `${id}-help`)}
      <FormHelperText>
        <HelperText id={`${id}-help`}>
          <HelperTextItem variant={bad ? 'error' : 'default'}>{bad ? problem : help}</HelperTextItem>
        </HelperText>
      </FormHelperText>
    </FormGroup>
  );
}
