import { describe, expect, test } from '@jest/globals';
import { Registry, register as globalRegistry } from 'prom-client';
import { RuntimeMetrics, renderMetrics } from '../../../src/runtime/metrics.js';
import { metricValue } from './metric-values.js';

describe('RuntimeMetrics', () => {
  test('exposes the controller-runtime and client-go metric names exactly', async () => {
    const metrics = new RuntimeMetrics();
    metrics.forController('cloneset');
    metrics.forWorkQueue('cloneset');

    const text = await metrics.render();

    for (const line of [
      '# TYPE controller_runtime_reconcile_total counter',
      '# TYPE controller_runtime_reconcile_errors_total counter',
      '# TYPE controller_runtime_terminal_reconcile_errors_total counter',
      '# TYPE controller_runtime_reconcile_time_seconds histogram',
      '# TYPE controller_runtime_active_workers gauge',
      '# TYPE workqueue_depth gauge',
      '# TYPE workqueue_adds_total counter',
      '# TYPE workqueue_queue_duration_seconds histogram',
      '# TYPE workqueue_work_duration_seconds histogram',
      '# TYPE workqueue_retries_total counter',
      '# TYPE rest_client_requests_total counter',
      '# TYPE tailor_expectations_expired_total counter',
    ]) {
      expect(text).toContain(line);
    }
  });

  test('a controller series starts at zero for every result label', async () => {
    const metrics = new RuntimeMetrics();

    metrics.forController('cloneset');

    const text = await metrics.render();
    for (const result of ['success', 'error', 'requeue_after', 'requeue']) {
      expect(text).toContain(`controller_runtime_reconcile_total{controller="cloneset",result="${result}"} 0`);
    }
  });

  test('many instances live side by side, each on its own registry, none on the global one', async () => {
    const first = new RuntimeMetrics();
    const second = new RuntimeMetrics(new Registry());

    first.recordRestRequest('patch', 200, 'api.local:6443');
    second.recordRestRequest('get', 404, 'api.local:6443');

    expect(first.registry).not.toBe(second.registry);
    expect(await metricValue(first.registry, 'rest_client_requests_total', { method: 'PATCH', code: '200' })).toBe(1);
    expect(await metricValue(second.registry, 'rest_client_requests_total', { method: 'PATCH' })).toBeUndefined();
    expect(globalRegistry.getSingleMetric('rest_client_requests_total')).toBeUndefined();
  });

  test('recordRestRequest counts by code, upper-cased method and host, and works as a detached callback', async () => {
    const metrics = new RuntimeMetrics();
    const observe = metrics.recordRestRequest;

    observe('patch', 200, 'api.local:6443');
    observe('PATCH', '200', 'api.local:6443');
    observe('get', '<error>', 'api.local:6443');

    expect(
      await metricValue(metrics.registry, 'rest_client_requests_total', {
        code: '200',
        method: 'PATCH',
        host: 'api.local:6443',
      }),
    ).toBe(2);
    expect(await metricValue(metrics.registry, 'rest_client_requests_total', { code: '<error>', method: 'GET' })).toBe(
      1,
    );
  });

  test('renderMetrics renders any registry in the Prometheus text format', async () => {
    const metrics = new RuntimeMetrics();
    metrics.recordExpectationsExpired('scale');

    const text = await renderMetrics(metrics.registry);

    expect(text).toContain('tailor_expectations_expired_total{kind="scale"} 1');
    expect(metrics.contentType).toContain('text/plain');
  });

  test('exposes what the process memory is made of, read when scraped', async () => {
    const metrics = new RuntimeMetrics();

    const rss = await metricValue(metrics.registry, 'process_resident_memory_bytes', {});
    const heapUsed = await metricValue(metrics.registry, 'nodejs_heap_size_used_bytes', {});
    const heapTotal = await metricValue(metrics.registry, 'nodejs_heap_size_total_bytes', {});
    const external = await metricValue(metrics.registry, 'nodejs_external_memory_bytes', {});
    const code = await metricValue(metrics.registry, 'nodejs_heap_space_size_used_bytes', { space: 'code' });
    const oldSpace = await metricValue(metrics.registry, 'nodejs_heap_space_size_used_bytes', { space: 'old' });

    expect(heapUsed).toBeGreaterThan(0);
    expect(heapTotal).toBeGreaterThanOrEqual(heapUsed ?? Infinity);
    expect(rss).toBeGreaterThan(heapUsed ?? Infinity);
    expect(external).toBeGreaterThan(0);
    expect(code).toBeGreaterThan(0);
    expect(oldSpace).toBeGreaterThan(0);
  });
});
