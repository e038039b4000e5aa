#!/usr/bin/env bash
# Runs the test tiers in order and records, under .tailor/test-results/, what each step did:
# <step>.rc (its exit code) for every step that ran, <tier>.json (Jest's results) for Jest tiers,
# and `planned` (the steps this run meant to run), so hack/test-summary.mjs can count a tier that
# never produced results (its cluster failed to start, Jest crashed, the run stopped before it)
# as failed instead of leaving it out.
#   hack/test.sh all | lint | typecheck | unit | integration | cri | e2e | fault
# Cluster tiers start the test-bed cluster they need through their Jest global setup
# (test/support/cluster-setup.js) and stop it again if they started it. They run the built CLI
# (dist/) as real processes, so the build runs once before the first of them, and a failed build
# stops the run: no cluster tier ever tests a stale dist/.
# Ends with the plain line "N passed, N failed[, N skipped]" and exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
results=.tailor/test-results
mkdir -p "$results"
tiers=("$@"); [ "${1:-all}" = all ] && tiers=(lint typecheck unit integration cri e2e fault)
[ "${1:-all}" = all ] && rm -f "$results"/*.json "$results"/*.rc
needs_build=false
for tier in "${tiers[@]}"; do case $tier in lint|typecheck|unit) ;; *) needs_build=true ;; esac; done
planned=()
for tier in "${tiers[@]}"; do
  case $tier in lint|typecheck|unit) ;; *) if $needs_build && [[ ! " ${planned[*]-} " == *" build "* ]]; then planned+=(build); fi ;; esac
  planned+=("$tier")
done
printf '%s\n' "${planned[@]}" >"$results/planned"
for step in "${planned[@]}"; do rm -f "$results/$step.json" "$results/$step.rc"; done

rc=0
for step in "${planned[@]}"; do
  echo "=== $step"
  case $step in
    lint) make --no-print-directory lint; code=$? ;;
    typecheck) npx tsc --noEmit -p tsconfig.json; code=$? ;;
    build) npx tsc -p tsconfig.build.json; code=$? ;;
    *)
      inband=(); [ "$step" = unit ] || inband=(--runInBand)  # cluster tiers share one node
      NODE_OPTIONS=--experimental-vm-modules npx jest --selectProjects "$step" "${inband[@]}" \
        --json --outputFile "$results/$step.json"
      code=$? ;;
  esac
  echo "$code" >"$results/$step.rc"
  [ "$code" = 0 ] || rc=1
  if [ "$step" = build ] && [ "$code" != 0 ]; then
    echo "=== build failed: the cluster tiers are not run (they would test a stale dist/)" >&2
    break
  fi
done
node hack/test-summary.mjs "$results" || rc=1
exit $rc
