#!/usr/bin/env bash
# Builds the pinned OpenKruise kruise-manager (github.com/openkruise/kruise, the peer column of the
# scale bench) from its Go module into ~/.cache/tailor/kruise/v$KRUISE_VERSION/bin, and keeps the
# module's CRDs beside it in .../crds. Owns nothing else: it never starts a process and never
# touches the Kubernetes or kwok builds. A second run with the binary present builds nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.sh"
. "$here/lib/go-module.sh"
cache=${TAILOR_CACHE:-$HOME/.cache/tailor}
root=$cache/kruise/v$KRUISE_VERSION
out=$root/bin
mod=github.com/openkruise/kruise

mkdir -p "$out"
# One build at a time per version: concurrent runs would race on the same output.
exec 9>"$root/.lock"
flock 9

if [ -x "$out/kruise-manager" ] && [ -f "$root/crds/apps.kruise.io_clonesets.yaml" ]; then
  echo "kruise-manager v$KRUISE_VERSION cached in $out"
  exit 0
fi
echo "building kruise-manager v$KRUISE_VERSION (first run: ten minutes or more on 2 cores; cached afterwards)"

require_go 1.22
src=$root/src
module_source "$mod" "v$KRUISE_VERSION" "$src"

mkdir -p "$root/crds"
cp "$src"/config/crd/bases/*.yaml "$root/crds/"

build_root_package "$src" "$out/kruise-manager"
echo "kruise-manager v$KRUISE_VERSION in $out, CRDs in $root/crds"
