#!/usr/bin/env bash
# Builds the pinned OpenKruise Rollout manager (github.com/openkruise/rollouts, the canary driver of
# the e2e tier) from its Go module into ~/.cache/tailor/kruise-rollout/v$KRUISE_ROLLOUT_VERSION/bin,
# and keeps the module's source beside it in .../src, whose config/ the e2e tier installs as it
# ships (test/support/cluster/kruise-rollout.ts). Owns nothing else: it never starts a process. A
# second run with the binary present builds nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.sh"
. "$here/lib/go-module.sh"
cache=${TAILOR_CACHE:-$HOME/.cache/tailor}
root=$cache/kruise-rollout/v$KRUISE_ROLLOUT_VERSION
out=$root/bin
mod=github.com/openkruise/rollouts

mkdir -p "$out"
# One build at a time per version: concurrent runs would race on the same output.
exec 9>"$root/.lock"
flock 9

if [ -x "$out/kruise-rollout" ] && [ -f "$root/src/.complete" ]; then
  echo "kruise-rollout v$KRUISE_ROLLOUT_VERSION cached in $out"
  exit 0
fi
echo "building kruise-rollout v$KRUISE_ROLLOUT_VERSION (first run: minutes on 2 cores; cached afterwards)"

require_go 1.19
src=$root/src
module_source "$mod" "v$KRUISE_ROLLOUT_VERSION" "$src"

build_root_package "$src" "$out/kruise-rollout"
echo "kruise-rollout v$KRUISE_ROLLOUT_VERSION in $out, its manifests in $src/config"
