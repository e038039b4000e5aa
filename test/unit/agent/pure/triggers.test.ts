// Which pod changes wake the node agent: a pod with a request is reconciled, a pending one is
// retried when what the node's pods hold may have changed — judged by value, so a pod re-read
// with the same annotations (a new object each time) is not a change.
import { describe, expect, test } from '@jest/globals';
import { hasRequest, holdingsMayHaveChanged, pending, sameAnnotations } from '../../../../src/agent/pure/triggers.js';
import { ANNOTATION_RESIZE_REQUEST, ANNOTATION_RESIZE_STATUS } from '../../../../src/api/types.js';
import type { Pod } from '../../../../src/api/wire.js';
import { buildPod } from '../../../support/fixtures/pods.js';

const REQUEST = JSON.stringify({ revision: 'r2', containers: { app: { requests: { cpu: '200m' } } } });
const status = (state: string): string => JSON.stringify({ revision: 'r2', state, since: '2026-01-01T00:00:00Z' });
const pod = (annotations?: Record<string, string>, phase = 'Running'): Pod =>
  buildPod({ ...(annotations ? { annotations: { ...annotations } } : {}), phase });

describe('sameAnnotations', () => {
  test.each<[string, Record<string, string> | undefined, Record<string, string> | undefined, boolean]>([
    ['both absent', undefined, undefined, true],
    ['absent and empty', undefined, {}, true],
    ['equal values in distinct objects', { a: '1', b: '2' }, { b: '2', a: '1' }, true],
    ['a value changed', { a: '1' }, { a: '2' }, false],
    ['a key added', { a: '1' }, { a: '1', b: '2' }, false],
    ['a key removed', { a: '1', b: '2' }, { a: '1' }, false],
    ['a key renamed', { a: '1' }, { b: '1' }, false],
  ])('%s', (_, a, b, want) => {
    expect(sameAnnotations(a, b)).toBe(want);
    expect(sameAnnotations(b, a)).toBe(want);
  });
});

describe('holdingsMayHaveChanged', () => {
  const before = pod({ [ANNOTATION_RESIZE_REQUEST]: REQUEST, [ANNOTATION_RESIZE_STATUS]: status('Deferred') });
  test.each<[string, Pod, boolean]>([
    ['the same object (a resync)', before, false],
    ['a copy with the same annotations and phase', pod({ ...before.metadata?.annotations }), false],
    [
      'the resize status changed',
      pod({ [ANNOTATION_RESIZE_REQUEST]: REQUEST, [ANNOTATION_RESIZE_STATUS]: status('') }),
      true,
    ],
    ['the status annotation went away', pod({ [ANNOTATION_RESIZE_REQUEST]: REQUEST }), true],
    ['the phase changed', pod({ ...before.metadata?.annotations }, 'Succeeded'), true],
  ])('%s', (_, after, want) => {
    expect(holdingsMayHaveChanged(before, after)).toBe(want);
  });
});

describe('hasRequest and pending', () => {
  test.each<[string, Pod, boolean, boolean]>([
    ['no request', pod(), false, false],
    ['a request with no status yet', pod({ [ANNOTATION_RESIZE_REQUEST]: REQUEST }), true, true],
    [
      'a deferred request',
      pod({ [ANNOTATION_RESIZE_REQUEST]: REQUEST, [ANNOTATION_RESIZE_STATUS]: status('Deferred') }),
      true,
      true,
    ],
    [
      'an applied request',
      pod({ [ANNOTATION_RESIZE_REQUEST]: REQUEST, [ANNOTATION_RESIZE_STATUS]: status('') }),
      true,
      false,
    ],
    [
      'an unreadable status',
      pod({ [ANNOTATION_RESIZE_REQUEST]: REQUEST, [ANNOTATION_RESIZE_STATUS]: '{' }),
      true,
      true,
    ],
  ])('%s', (_, p, request, isPending) => {
    expect(hasRequest(p)).toBe(request);
    expect(pending(p)).toBe(isPending);
  });
});
