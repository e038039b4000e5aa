#!/usr/bin/env bash
# Builds the bed's expandable storage (decision 98) into ~/.cache/tailor/csi/<key>/bin: the CSI
# sidecars external-provisioner and external-resizer from their pinned Go modules, and Tailor's
# own driver, hack/csi/hostdir (the key includes a hash of its sources, so an edit rebuilds it).
# Never starts a process; a second run with the binaries present builds nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.sh"
. "$here/lib/go-module.sh"
cache=${TAILOR_CACHE:-$HOME/.cache/tailor}
driver_src=$here/csi/hostdir
driver_hash=$(cat "$driver_src"/go.mod "$driver_src"/go.sum "$driver_src"/*.go | sha256sum | cut -c1-12)
root=$cache/csi/provisioner-v$CSI_PROVISIONER_VERSION-resizer-v$CSI_RESIZER_VERSION-hostdir-$driver_hash
out=$root/bin

mkdir -p "$out"
exec 9>"$root/.lock"
flock 9
if [ -x "$out/csi-provisioner" ] && [ -x "$out/csi-resizer" ] && [ -x "$out/tailor-csi-hostdir" ]; then
  echo "CSI parts cached in $out"
  exit 0
fi
echo "building the CSI parts (first run: about 6 minutes; cached afterwards)"
require_go 1.26
sidecar() { # module, version (with v), command
  local src=$root/src-$3
  [ -x "$out/$3" ] && return 0
  module_source "$1" "$2" "$src"
  # Built by the module's go.mod and go.sum: its vendor directory lacks modules.txt in the zip.
  rm -rf "$src/vendor"
  local start=$SECONDS
  (cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 19 go build -p 1 -trimpath -ldflags "-s -w" -o "$out/$3.tmp.$$" "./cmd/$3")
  mv "$out/$3.tmp.$$" "$out/$3"
  rm -rf "$src"
  echo "built $3 in $((SECONDS - start))s"
}
sidecar github.com/kubernetes-csi/external-provisioner/v6 "v$CSI_PROVISIONER_VERSION" csi-provisioner
sidecar github.com/kubernetes-csi/external-resizer/v2 "v$CSI_RESIZER_VERSION" csi-resizer
(cd "$driver_src" && CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 19 go build -trimpath -ldflags "-s -w" -o "$out/tailor-csi-hostdir.tmp.$$" .)
mv "$out/tailor-csi-hostdir.tmp.$$" "$out/tailor-csi-hostdir"
echo "CSI parts built: $out"
