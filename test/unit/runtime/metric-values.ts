// Reads one series' value from a prom-client Registry, so tests assert on what Prometheus would scrape.

import type { Registry } from 'prom-client';

/**
 * Value of `name` with exactly these label values (other labels ignored). For a histogram pass its
 * base name and a series suffix such as `_sum` or `_count`.
 */
export async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
  histogramSeries?: '_sum' | '_count',
): Promise<number | undefined> {
  const data = await registry.getSingleMetric(name)?.get();
  const wantedName = histogramSeries === undefined ? undefined : `${name}${histogramSeries}`;
  const match = data?.values.find(
    (value) =>
      (wantedName === undefined || ('metricName' in value && value.metricName === wantedName)) &&
      Object.entries(labels).every(([label, expected]) => String(value.labels[label]) === expected),
  );
  return match?.value;
}
