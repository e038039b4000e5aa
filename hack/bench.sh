#!/usr/bin/env bash
# Builds src/ and bench/ into .tailor/bench-dist (tsconfig.bench.json) and runs every
# bench/*.bench.ts in turn with node, so each benchmark prints its figures and their ratio to the
# DESIGN.md §6 targets. A benchmark that misses a target still prints; one that crashes makes this
# script exit non-zero after the others have run. Must not: start or stop the test-bed cluster
# (benchmarks that need it say so themselves).
set -uo pipefail
cd "$(dirname "$0")/.."
out=.tailor/bench-dist
rm -rf "$out"
npx tsc -p tsconfig.bench.json || exit 1
rc=0
shopt -s nullglob
benches=(bench/*.bench.ts)
[ ${#benches[@]} -gt 0 ] || { echo "bench: no bench/*.bench.ts"; exit 1; }
for ts in "${benches[@]}"; do
  js="$out/${ts%.ts}.js"
  echo "=== $ts"
  # --expose-gc: memory benchmarks collect garbage before reading RSS.
  node --expose-gc "$js" || { echo "bench: $ts failed (exit $?)"; rc=1; }
done
exit $rc
