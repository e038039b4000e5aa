// How long listing large ControllerRevisions holds the event loop (issue 47 item 3: a page of 20
// revisions of about 1.37 MB held it for seconds, against the 10 s lease renew deadline):
//  - before: one page of 20 parsed and trimmed in one piece, as the informer did;
//  - now: the longest gap between event-loop turns while an Informer lists the same 100 revisions
//    at the controller's page size (5), trimming in slices (src/runtime/informer.ts).
// Printed with their ratio, measured in this run. The pages come from an in-process stand-in
// client that parses each page from its JSON text, as KubeClient does; no API server.
// Owns: nothing outside this process. Must not: talk to a cluster.
// Run: hack/bench.sh (BENCH=list-page for this one alone).
import { trimRevision } from '../src/workload/revision-store.js';
import type { ControllerRevision } from '../src/api/revision.js';
import { Informer } from '../src/runtime/informer.js';
import type { KubeList } from '../src/api/wire.js';
import { silentLogger } from '../src/runtime/logger.js';

const REVISIONS = 100;
const OLD_PAGE = 20;
const PAGE = 5; // src/workload/setup.ts REVISION_PAGE_SIZE
/** A fifth of the lease renew deadline (10 s): what one list may hold the loop for at most. */
const TARGET_MS = 2_000;

/** A revision whose template is about 1.37 MB of JSON, as the reviewer's. */
const revision = (i: number): ControllerRevision => ({
  apiVersion: 'apps/v1',
  kind: 'ControllerRevision',
  metadata: { name: `web-${i}`, namespace: 'bench', uid: `uid-${i}`, resourceVersion: String(i + 1) },
  revision: i + 1,
  data: {
    template: {
      metadata: { labels: { app: 'web', revision: String(i) } },
      spec: {
        containers: [
          {
            name: 'app',
            image: `busybox:${i}`,
            env: Array.from({ length: 9_000 }, (_, n) => ({ name: `VAR_${n}`, value: `${i}-`.padEnd(140, 'x') })),
          },
        ],
      },
    },
  },
});

const pageText = (from: number, size: number, more: boolean): string =>
  JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'ControllerRevisionList',
    metadata: { resourceVersion: '1000', ...(more ? { continue: String(from + size) } : {}) },
    items: Array.from({ length: Math.min(size, REVISIONS - from) }, (_, k) => revision(from + k)),
  });

/** The old way: one page parsed and every object trimmed without a turn of the loop between. */
function onePieceMs(size: number): number {
  const text = pageText(0, size, false);
  const started = performance.now();
  const page = JSON.parse(text) as KubeList<ControllerRevision>;
  for (const item of page.items) trimRevision(item);
  return performance.now() - started;
}

/** The longest gap between turns of the event loop while an Informer lists every revision at `pageSize`. */
async function longestGapMs(pageSize: number): Promise<number> {
  const pages = new Map<string, string>();
  for (let from = 0; from < REVISIONS; from += pageSize)
    pages.set(String(from), pageText(from, pageSize, from + pageSize < REVISIONS));
  const client = {
    list: <T>(_path: string, query?: Record<string, unknown>): Promise<KubeList<T>> =>
      Promise.resolve(
        JSON.parse(
          pages.get(typeof query?.['continue'] === 'string' ? query['continue'] : '0') ?? '{"items":[]}',
        ) as KubeList<T>,
      ),
    // The watch that follows the list answers nothing until the bench stops the informer.
    request: (_method: string, _path: string, options: { signal?: AbortSignal }): Promise<never> =>
      new Promise<never>((_resolve, reject) =>
        options.signal?.addEventListener('abort', () => reject(new Error('stopped'))),
      ),
  };
  const informer = new Informer<ControllerRevision>({
    name: 'bench-revisions',
    client,
    path: '/apis/apps/v1/controllerrevisions',
    pageSize,
    transform: trimRevision,
    logger: silentLogger(),
  });
  let longest = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  informer.start();
  while (!informer.hasSynced()) await new Promise((resolve) => setTimeout(resolve, 5));
  clearInterval(ticker);
  await informer.stop();
  return longest;
}

const before = onePieceMs(OLD_PAGE);
const now = await longestGapMs(PAGE);
console.log(`list of ${REVISIONS} revisions of ~1.37 MB: the event loop held at most`);
console.log(`  before (a page of ${OLD_PAGE} parsed and trimmed in one piece): ${before.toFixed(0)} ms`);
console.log(`  now (pages of ${PAGE}, trimmed in slices of 20 ms): ${now.toFixed(0)} ms`);
console.log(
  `  ratio before/now: ${(before / now).toFixed(1)}x; target <= ${TARGET_MS} ms (a fifth of the renew deadline): ${now <= TARGET_MS ? 'met' : 'MISSED'}`,
);
