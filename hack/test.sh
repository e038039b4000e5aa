#!/usr/bin/env bash
# Runs the test tiers in order and records each tier's Jest JSON under .tailor/test-results/.
#   hack/test.sh all | typecheck | unit | integration | cri | e2e
# Integration, cri and e2e start the test-bed cluster they need through their Jest global setup
# (test/support/cluster-setup.js) and stop it again if they started it.
# Ends with the plain line "N passed, N failed" and exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
results=.tailor/test-results
mkdir -p "$results"
tiers=("$@"); [ "${1:-all}" = all ] && tiers=(typecheck unit integration cri e2e)
[ "${1:-all}" = all ] && rm -f "$results"/*.json
rc=0
for tier in "${tiers[@]}"; do
  echo "=== $tier"
  if [ "$tier" = typecheck ]; then
    npx tsc --noEmit -p tsconfig.json || rc=1
    continue
  fi
  # Cluster tiers run the built CLI (dist/) as real processes.
  if [ "$tier" != unit ]; then npx tsc -p tsconfig.build.json || rc=1; fi
  rm -f "$results/$tier.json"
  inband=(); [ "$tier" = unit ] || inband=(--runInBand)  # cluster tiers share one node
  NODE_OPTIONS=--experimental-vm-modules npx jest --selectProjects "$tier" "${inband[@]}" --passWithNoTests \
    --json --outputFile "$results/$tier.json" || rc=1
done
node hack/test-summary.mjs "$results" || rc=1
exit $rc
