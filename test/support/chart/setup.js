// Global setup of the `chart` tier: builds (or finds cached) helm, kubeconform and the Kubernetes
// JSON schemas (hack/build-chart-tools.sh) and hands their paths to the tests in the environment.
// A failed build fails the tier (no results: hack/test-summary.mjs counts it as failed).
import { execFileSync } from 'node:child_process';

export default function setup() {
  const out = execFileSync('bash', ['hack/build-chart-tools.sh'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  for (const line of out.split('\n')) {
    const m = /^(HELM|KUBECONFORM|SCHEMAS|RELEASES)=(.*)$/.exec(line);
    if (m) process.env[`TAILOR_CHART_${m[1]}`] = m[2];
    else if (line.trim()) process.stderr.write(`${line}\n`);
  }
}
