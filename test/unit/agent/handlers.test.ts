// Which change puts which key on which of the node agent's queues: a pod with a resize request is
// reconciled on every change, the node's pending resizes are retried when what its pods hold, the
// Node, or a LimitRange's or quota's spec changes; a restart request goes to the restart worker;
// any pod or revision change makes the pre-pull report again.
import { describe, expect, test } from '@jest/globals';
import { onPrePullRevisions, prePullHandler, resizeHandlers, restartHandler } from '../../../src/agent/handlers.js';
import { ANNOTATION_PREPULL_REVISIONS } from '../../../src/api/prepull-revisions.js';
import type { Node } from '../../../src/api/wire.js';
import {
  ANNOTATION_RESIZE_REQUEST,
  ANNOTATION_RESIZE_STATUS,
  ANNOTATION_RESTART_REQUEST,
} from '../../../src/api/types.js';
import type { Pod } from '../../../src/api/wire.js';
import { buildPod } from '../../support/fixtures/pods.js';

const REQUEST = JSON.stringify({ revision: 'r2', containers: { app: { requests: { cpu: '200m' } } } });
const status = (state: string): string => JSON.stringify({ revision: 'r2', state, since: '2026-01-01T00:00:00Z' });
const pod = (name: string, annotations: Record<string, string> = {}, phase = 'Running'): Pod =>
  buildPod({ name, uid: `uid-${name}`, annotations, phase });

const requested = pod('requested', { [ANNOTATION_RESIZE_REQUEST]: REQUEST });
const deferred = pod('deferred', {
  [ANNOTATION_RESIZE_REQUEST]: REQUEST,
  [ANNOTATION_RESIZE_STATUS]: status('Deferred'),
});
const applied = pod('applied', { [ANNOTATION_RESIZE_REQUEST]: REQUEST, [ANNOTATION_RESIZE_STATUS]: status('') });
const plain = pod('plain');

function setup(cached: Pod[] = [deferred, applied, plain]) {
  const keys: string[] = [];
  const forgotten: string[] = [];
  const handlers = resizeHandlers({
    pods: { list: () => cached },
    queue: { add: (k) => void keys.push(k) },
    forget: (uid) => void forgotten.push(uid),
  });
  return { keys, forgotten, handlers };
}

describe('resizeHandlers', () => {
  test('a pod added with a request is reconciled, and the pending resizes of the node are retried', () => {
    const { keys, handlers } = setup();
    handlers.pods.onAdd?.(requested);
    expect(keys).toEqual(['ns/requested', 'ns/deferred']);
  });

  test('a pod added without a request retries only the pending resizes', () => {
    const { keys, handlers } = setup();
    handlers.pods.onAdd?.(plain);
    expect(keys).toEqual(['ns/deferred']);
  });

  test('an added pod that is itself pending is not queued twice', () => {
    const { keys, handlers } = setup();
    handlers.pods.onAdd?.(deferred);
    expect(keys).toEqual(['ns/deferred']);
  });

  test('a resync (the same pod again) reconciles a pod with a request and retries nothing else', () => {
    const { keys, handlers } = setup();
    handlers.pods.onUpdate?.(applied, applied);
    handlers.pods.onUpdate?.(plain, plain);
    expect(keys).toEqual(['ns/applied']);
  });

  test('a phase change or an annotation change retries the pending resizes', () => {
    const { keys, handlers } = setup();
    handlers.pods.onUpdate?.(plain, pod('plain', {}, 'Succeeded'));
    expect(keys).toEqual(['ns/deferred']);
    handlers.pods.onUpdate?.(
      applied,
      pod('applied', { [ANNOTATION_RESIZE_REQUEST]: REQUEST, [ANNOTATION_RESIZE_STATUS]: status('Deferred') }),
    );
    expect(keys).toEqual(['ns/deferred', 'ns/applied', 'ns/deferred']);
  });

  test('a deleted pod is forgotten and the pending resizes are retried', () => {
    const { keys, forgotten, handlers } = setup();
    handlers.pods.onDelete?.(applied);
    expect(forgotten).toEqual(['uid-applied']);
    expect(keys).toEqual(['ns/deferred']);
  });

  test('a Node change retries the pending resizes', () => {
    const { keys, handlers } = setup();
    handlers.node.onAdd?.({});
    handlers.node.onUpdate?.({}, {});
    expect(keys).toEqual(['ns/deferred', 'ns/deferred']);
  });

  test('a LimitRange or quota retries the pending resizes when it comes, goes or its spec changes, not on a status change', () => {
    const { keys, handlers } = setup();
    handlers.namespaceLimits.onUpdate?.({ spec: { hard: { cpu: '1' } } }, { spec: { hard: { cpu: '1' } } });
    expect(keys).toEqual([]);
    handlers.namespaceLimits.onUpdate?.({ spec: { hard: { cpu: '1' } } }, { spec: { hard: { cpu: '2' } } });
    handlers.namespaceLimits.onAdd?.({});
    handlers.namespaceLimits.onDelete?.({});
    expect(keys).toEqual(['ns/deferred', 'ns/deferred', 'ns/deferred']);
  });
});

describe('restartHandler', () => {
  test('a pod with a restart request is queued on add and on every update; one without is not', () => {
    const keys: string[] = [];
    const handler = restartHandler({ add: (k) => void keys.push(k) });
    const asked = pod('asked', { [ANNOTATION_RESTART_REQUEST]: '{}' });
    handler.onAdd?.(asked);
    handler.onUpdate?.(plain, asked);
    handler.onAdd?.(plain);
    handler.onUpdate?.(asked, plain);
    expect(keys).toEqual(['ns/asked', 'ns/asked']);
  });
});

describe('prePullHandler', () => {
  test('every add, update and delete asks for a report', () => {
    let reports = 0;
    const handler = prePullHandler(() => void (reports += 1));
    handler.onAdd?.(plain);
    handler.onUpdate?.(plain, plain);
    handler.onDelete?.(plain);
    expect(reports).toBe(3);
  });
});

describe('onPrePullRevisions', () => {
  const node = (revisions?: string, beat = '1'): Node => ({
    metadata: {
      name: 'n',
      resourceVersion: beat,
      ...(revisions !== undefined ? { annotations: { [ANNOTATION_PREPULL_REVISIONS]: revisions } } : {}),
    },
  });
  test("the Node's first sight and every change of the named revisions ask for a report; its status beats do not", () => {
    let reports = 0;
    const handler = onPrePullRevisions(() => void (reports += 1));
    handler.onAdd?.(node());
    handler.onUpdate?.(node(), node(undefined, '2'));
    handler.onUpdate?.(node(undefined, '2'), node('["ns/web-2"]', '3'));
    handler.onUpdate?.(node('["ns/web-2"]', '3'), node('["ns/web-2"]', '4'));
    handler.onUpdate?.(node('["ns/web-2"]', '4'), node(undefined, '5'));
    expect(reports).toBe(3);
  });
});
