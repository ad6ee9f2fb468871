// A catalog model's benchmarks: the hardware configuration table with its filters (hardware
// type, a latency and its maximum, a target RPS), which go to the catalog's
// .../artifacts/performance endpoint. Replicas, total RPS and which configurations are
// recommended are the catalog's answers (docs/catalog.md), never computed here.
import { useEffect, useState } from 'react';
import { Content, FormSelect, FormSelectOption, Switch, TextInput, Title, Toolbar, ToolbarContent, ToolbarFilter, ToolbarGroup, ToolbarItem } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { Empty, Loading, type Async } from '../common';
import { LATENCY_METRICS, PERCENTILES, figure, figureColumns, isPositiveNumber, isTargetRps, latencyOf, perfChips, perfRows, splitLatency, type PerfChipKey, type PerfFilters } from '../performance';
import type { CatalogArtifact } from '../types';
import type { ListPage } from '../api';

/** A text field whose valid value is committed after a pause in typing ('' clears it). */
function useCommitted(value: string | undefined, valid: (s: string) => boolean, commit: (v: string | undefined) => void): [string, (s: string) => void, boolean] {
  const [text, setText] = useState(value ?? '');
  // a chip removed or "Clear all filters" empties the field too
  useEffect(() => setText(value ?? ''), [value]);
  const ok = text.trim() === '' || valid(text.trim());
  useEffect(() => {
    const t = text.trim();
    if ((t === '' ? undefined : t) === value || !(t === '' || valid(t))) return;
    const h = setTimeout(() => commit(t === '' ? undefined : t), 400);
    return () => clearTimeout(h);
  }, [text]);
  return [text, setText, ok];
}

export default function PerformanceTable({ perf, filters, setFilters, hardwareTypes, workloads }: { perf: Async<ListPage<CatalogArtifact>>; filters: PerfFilters; setFilters: (f: (old: PerfFilters) => PerfFilters) => void; hardwareTypes: string[]; workloads: string[] }) {
  const set = (patch: Partial<PerfFilters>) => setFilters((old) => ({ ...old, ...patch }));
  const latency = latencyOf(filters);
  const { metric, percentile } = splitLatency(latency);
  const [maxText, setMaxText, maxOk] = useCommitted(filters.maxLatency, isPositiveNumber, (v) => set({ maxLatency: v }));
  const [rpsText, setRpsText, rpsOk] = useCommitted(filters.rps, isTargetRps, (v) => set({ rps: v }));
  const chips = perfChips(filters);
  const chip = (key: PerfChipKey) => chips.filter((c) => c.key === key).map((c) => c.label);
  const clear = (key: PerfChipKey) => set(key === 'latency' ? { latency: undefined, maxLatency: undefined } : { [key]: undefined });
  // a value of the URL that the catalog no longer offers stays selectable (and removable)
  const withChosen = (v: string | undefined, vs: string[]) => (v && !vs.includes(v) ? [v, ...vs] : vs);
  const hw = withChosen(filters.hardware, hardwareTypes);
  const wl = withChosen(filters.workload, workloads);

  const rows = perf.state === 'ok' ? perfRows(perf.data.items ?? []) : [];
  const figs = figureColumns(rows, latency);
  const hasWorkload = rows.some((r) => r.workload);
  const hasReplicas = rows.some((r) => r.replicas !== undefined);
  const hasTokens = rows.some((r) => r.inputTokens !== undefined || r.outputTokens !== undefined);
  const hasFramework = rows.some((r) => r.framework);

  return (
    <>
      <Title headingLevel="h2">Hardware configurations</Title>
      <Content component="p">
        The model&apos;s benchmarks, one row per hardware configuration (type × count) and workload.{' '}
        {filters.all ? 'Every benchmark is shown.' : 'Only the configurations the catalog recommends: per hardware type the cheapest, and a costlier one only where it is markedly faster.'}{' '}
        Replicas and total RPS are the catalog&apos;s answer for the target RPS.
      </Content>
      <Toolbar clearAllFilters={() => setFilters((old) => ({ all: old.all }))} clearFiltersButtonText="Clear all filters" data-testid="performance-filters">
        <ToolbarContent>
          <ToolbarGroup variant="filter-group" className="mp-perf-filters">
            <ToolbarFilter categoryName="Workload" labels={chip('workload')} deleteLabel={() => clear('workload')} deleteLabelGroup={() => clear('workload')}>
              <FormSelect aria-label="Filter by workload" value={filters.workload ?? ''} isDisabled={wl.length === 0} onChange={(_e, v) => set({ workload: v || undefined })}>
                <FormSelectOption value="" label={wl.length === 0 ? 'Workload: none in the catalog' : 'Any workload'} />
                {wl.map((x) => (
                  <FormSelectOption key={x} value={x} label={`Workload: ${x}`} />
                ))}
              </FormSelect>
            </ToolbarFilter>
            <ToolbarFilter categoryName="Hardware" labels={chip('hardware')} deleteLabel={() => clear('hardware')} deleteLabelGroup={() => clear('hardware')}>
              <FormSelect aria-label="Filter by hardware type" value={filters.hardware ?? ''} isDisabled={hw.length === 0} onChange={(_e, v) => set({ hardware: v || undefined })}>
                <FormSelectOption value="" label={hw.length === 0 ? 'Hardware: none in the catalog' : 'Any hardware'} />
                {hw.map((x) => (
                  <FormSelectOption key={x} value={x} label={`Hardware: ${x}`} />
                ))}
              </FormSelect>
            </ToolbarFilter>
            <ToolbarFilter categoryName="Latency" labels={chip('latency')} deleteLabel={() => clear('latency')} deleteLabelGroup={() => clear('latency')}>
              <div className="mp-perf-inline">
                <span aria-hidden="true">Latency</span>
                <FormSelect aria-label="Latency metric" value={metric} onChange={(_e, v) => set({ latency: `${v}_${percentile}` })}>
                  {LATENCY_METRICS.map((m) => (
                    <FormSelectOption key={m.key} value={m.key} label={`${m.label} (${m.what})`} />
                  ))}
                </FormSelect>
                <FormSelect aria-label="Latency percentile" value={percentile} onChange={(_e, v) => set({ latency: `${metric}_${v}` })}>
                  {PERCENTILES.map((p) => (
                    <FormSelectOption key={p.key} value={p.key} label={p.label} />
                  ))}
                </FormSelect>
                <span aria-hidden="true">≤</span>
                <TextInput className="mp-perf-number" aria-label="Maximum latency (ms)" placeholder="any" inputMode="decimal" value={maxText} validated={maxOk ? 'default' : 'error'} onChange={(_e, v) => setMaxText(v)} />
                <span aria-hidden="true">ms</span>
              </div>
            </ToolbarFilter>
            <ToolbarFilter categoryName="Target RPS" labels={chip('rps')} deleteLabel={() => clear('rps')} deleteLabelGroup={() => clear('rps')}>
              <div className="mp-perf-inline">
                <span aria-hidden="true">Target</span>
                <TextInput className="mp-perf-number" aria-label="Target requests per second" placeholder="RPS" inputMode="numeric" value={rpsText} validated={rpsOk ? 'default' : 'error'} onChange={(_e, v) => setRpsText(v)} />
                <span aria-hidden="true">requests/s</span>
              </div>
            </ToolbarFilter>
          </ToolbarGroup>
          <ToolbarItem>
            <Switch id="mp-perf-recommended" label="Recommended only" isChecked={!filters.all} onChange={(_e, on) => set({ all: on ? undefined : true })} />
          </ToolbarItem>
        </ToolbarContent>
      </Toolbar>
      {!maxOk && <Content component="p" className="mp-perf-error">The maximum latency is a positive number of milliseconds.</Content>}
      {!rpsOk && <Content component="p" className="mp-perf-error">The target RPS is a whole number from 1 to 2147483647.</Content>}
      {perf.state === 'loading' && <Loading what="performance data" />}
      {perf.state === 'ok' && rows.length === 0 && <Empty title="No benchmark matches">{chips.length ? 'Change or clear the filters.' : 'The catalog has no performance data for this model.'}</Empty>}
      {perf.state === 'ok' && rows.length > 0 && (
        <div className="mp-scroll-x">
          <Table aria-label="Hardware configurations" variant="compact" data-testid="hardware-configurations">
            <Thead>
              <Tr>
                <Th>Hardware configuration</Th>
                {hasWorkload && <Th>Workload</Th>}
                {hasReplicas && <Th info={{ tooltip: "The catalog's replicas for the target RPS (1 without one)" }}>Replicas</Th>}
                <Th>RPS per replica</Th>
                {hasReplicas && <Th>Total RPS</Th>}
                {figs.map((c) => (
                  <Th key={c.key}>{`${c.label} (${c.unit})`}</Th>
                ))}
                {hasTokens && <Th>Mean input / output tokens</Th>}
                {hasFramework && <Th>Framework</Th>}
              </Tr>
            </Thead>
            <Tbody>
              {rows.map((r) => (
                <Tr key={r.key}>
                  <Td dataLabel="Hardware configuration">{r.hardware}</Td>
                  {hasWorkload && <Td dataLabel="Workload">{r.workload ?? '—'}</Td>}
                  {hasReplicas && <Td dataLabel="Replicas">{figure(r.replicas)}</Td>}
                  <Td dataLabel="RPS per replica">{figure(r.rps)}</Td>
                  {hasReplicas && <Td dataLabel="Total RPS">{figure(r.totalRps)}</Td>}
                  {figs.map((c) => (
                    <Td key={c.key} dataLabel={c.label}>
                      {figure(r.figures[c.key])}
                    </Td>
                  ))}
                  {hasTokens && <Td dataLabel="Mean input / output tokens">{`${figure(r.inputTokens)} / ${figure(r.outputTokens)}`}</Td>}
                  {hasFramework && <Td dataLabel="Framework">{r.framework ?? '—'}</Td>}
                </Tr>
              ))}
            </Tbody>
          </Table>
        </div>
      )}
      {perf.state === 'ok' && perf.data.nextPageToken && <Content component="p">The first {rows.length} benchmarks are shown; narrow them with the filters.</Content>}
    </>
  );
}
