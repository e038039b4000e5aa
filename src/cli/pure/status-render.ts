// The text of a `kubectl tailor status` view (status-view.ts): the full view for a terminal and one
// summary line for logs. Pure. Must not: judge the rollout (status-view.ts does), or write to a
// terminal (plugin.ts does).
import { resizeCounts, shortRevision, type StatusView } from './status-view.js';
import { driverLine } from './driver.js';

/** `[#####-----]`: the share of desired pods running the update revision. */
export function progressBar(done: number, total: number, width = 20): string {
  const ratio = total <= 0 ? 1 : Math.min(1, Math.max(0, done / total));
  let filled = Math.round(ratio * width);
  if (filled === 0 && done > 0) filled = 1;
  if (filled === width && done < total) filled = width - 1;
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

export function renderProgress(view: StatusView, width = 20): string {
  const partition = view.target < view.desired ? ` (partition: target ${view.target})` : '';
  return `${progressBar(view.updated, view.desired, width)} ${view.updated}/${view.desired} updated, ${view.ready}/${view.desired} ready${partition}`;
}

/** One line for logs, printed on each change when the output is not a terminal. */
export function renderSummaryLine(view: StatusView): string {
  const resize = resizeCounts(view.resize);
  return [
    `${view.name}: ${renderProgress(view, 10)}`,
    resize ? `resize ${resize}` : undefined,
    view.driver ? driverLine(view.driver) : undefined,
    `${view.verdict}: ${view.message}`,
  ]
    .filter(Boolean)
    .join('; ');
}

export interface RenderOptions {
  /** Width of the progress bar. */
  barWidth?: number;
  /** Pod lines shown at most; the rest are counted (settled pods are dropped first). */
  maxPods?: number;
}

function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** The header: the workload, its progress, who drives its batches, its resizes. */
function headerLines(view: StatusView, options: RenderOptions): string[] {
  const revision = shortRevision(view.updateRevision, view.name) || '(none yet)';
  const resize = resizeCounts(view.resize);
  return [
    `CloneSet ${view.namespace}/${view.name}  strategy ${view.strategy}  generation ${view.generation} (observed ${view.observedGeneration})  update revision ${revision}${view.paused ? '  PAUSED' : ''}`,
    `Progress  ${renderProgress(view, options.barWidth ?? 20)}`,
    ...(view.driver ? [`Driver    ${driverLine(view.driver)}`] : []),
    ...(resize ? [`Resize    ${resize}`] : []),
  ];
}

/** The full view: header, progress bar, resize counts, pods, what blocks, verdict. */
export function renderStatus(view: StatusView, options: RenderOptions = {}): string[] {
  const maxPods = options.maxPods ?? 20;
  const out = headerLines(view, options);
  if (view.pods.length > 0) {
    const shown = view.pods.slice(0, maxPods);
    const rows = [['POD', 'REVISION', 'UPDATED', 'READY', 'IN-PLACE', 'RESIZE', 'NOTE']];
    for (const p of shown) {
      const note = [p.resizeDetail, p.problem].filter(Boolean).join('; ');
      rows.push([
        p.name,
        p.revision || '-',
        p.updated ? 'yes' : 'no',
        p.ready ? 'yes' : 'no',
        p.inPlace,
        p.resize,
        note,
      ]);
    }
    out.push('', ...table(rows));
    if (view.pods.length > shown.length) out.push(`... and ${view.pods.length - shown.length} more pod(s)`);
  } else {
    out.push('', 'No pods.');
  }
  if (view.blockers.length > 0) {
    out.push('', 'Blocked:');
    for (const b of view.blockers) out.push(`  ${b.source} (${b.reason})${b.message ? `: ${b.message}` : ''}`);
  }
  if (view.warnings.length > 0) {
    out.push('', 'Warnings:');
    for (const w of view.warnings) out.push(`  ${w}`);
  }
  out.push('', `Status: ${view.verdict}: ${view.message}`);
  return out;
}
