// Label selectors as the API server defines them: matching a label set, and the string form that
// status.labelSelector (the scale subresource, HPA, `kubectl get -l`) expects. Pure.
import type * as k8s from '@kubernetes/client-node';
import type { Labels } from '../../api/wire.js';

export function matchesSelector(labels: Labels | undefined, selector: k8s.V1LabelSelector | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, e.key);
    const value = l[e.key];
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(value!)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(value!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

export function selectorString(selector: k8s.V1LabelSelector | undefined): string {
  if (!selector) return '';
  const parts = Object.entries(selector.matchLabels ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}
