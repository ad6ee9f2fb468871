// The registry switcher in the masthead: shown when the user may see more than one registry
// (GET /api/v1/model_registry). A choice is kept in the browser and the page reloaded on the
// registered models, so that every screen (and every name read from the old one) follows it.
import { FormSelect, FormSelectOption } from '@patternfly/react-core';
import { useAsync } from './common';
import { chooseRegistry, registries, registryLabel, registryName } from './registry';

export function RegistrySwitcher() {
  const [s] = useAsync(() => Promise.all([registries(), registryName()]), []);
  if (s.state !== 'ok' || s.data[0].length < 2) return null;
  const [list, current] = s.data;
  return (
    <FormSelect
      className="mp-registry-switch"
      value={current}
      aria-label="Model registry"
      data-testid="registry-switch"
      onChange={(_e, v) => {
        chooseRegistry(v);
        window.location.hash = '#/models';
        window.location.reload();
      }}>
      {list.map((r) => (
        <FormSelectOption key={r.name} value={r.name} label={registryLabel(r)} />
      ))}
    </FormSelect>
  );
}
