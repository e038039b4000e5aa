#!/usr/bin/env bash
# Builds the pinned local-path-provisioner (github.com/rancher/local-path-provisioner, the dynamic
# provisioner kind ships: node-local volumes created by a helper pod on the claim's node) from its
# Go module into ~/.cache/tailor/local-path-provisioner/v$LOCAL_PATH_PROVISIONER_VERSION/bin, for
# the bed's default StorageClass (hack/bed/storage.sh). Never starts a process; a second run with
# the binary present builds nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.sh"
. "$here/lib/go-module.sh"
cache=${TAILOR_CACHE:-$HOME/.cache/tailor}
root=$cache/local-path-provisioner/v$LOCAL_PATH_PROVISIONER_VERSION
out=$root/bin
mod=github.com/rancher/local-path-provisioner

mkdir -p "$out"
exec 9>"$root/.lock"
flock 9
if [ -x "$out/local-path-provisioner" ]; then
  echo "local-path-provisioner v$LOCAL_PATH_PROVISIONER_VERSION cached in $out"
  exit 0
fi
echo "building local-path-provisioner v$LOCAL_PATH_PROVISIONER_VERSION (first run: about a minute; cached afterwards)"
require_go 1.22
# Built in a writable copy by the module's go.mod and go.sum (its vendor directory lacks
# modules.txt in the module zip, so -mod=vendor cannot use it).
src=$root/src
module_source "$mod" "v$LOCAL_PATH_PROVISIONER_VERSION" "$src"
rm -rf "$src/vendor"
start=$SECONDS
(cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 19 go build -trimpath -ldflags "-s -w" -o "$out/local-path-provisioner.tmp.$$" .)
rm -rf "$src"
mv "$out/local-path-provisioner.tmp.$$" "$out/local-path-provisioner"
echo "built local-path-provisioner in $((SECONDS - start))s: $out"
