#!/usr/bin/env bash
# Builds the bed's expandable storage (decision 98) into ~/.cache/tailor/csi/<versions>/bin: the CSI
# sidecars csi-provisioner (external-provisioner) and csi-resizer (external-resizer) from their
# pinned Go modules, and tailor-csi-hostdir, Tailor's own driver, from hack/csi-hostdir. One lock per
# part. A sidecar is rebuilt only when its version changes (a new directory); the driver when a hash
# of its sources changes (recorded beside it, so an edit of the driver rebuilds the driver alone).
# Never starts a process; a second run builds nothing. The last line names the directory and the
# driver's hash (hack/bed/csi.sh reads it). `--built` only answers, by its exit status, whether every
# part is built (it neither builds nor waits on a build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.sh"
. "$here/lib/go-module.sh"
cache=${TAILOR_CACHE:-$HOME/.cache/tailor}
root=$cache/csi/provisioner-v$CSI_PROVISIONER_VERSION-resizer-v$CSI_RESIZER_VERSION
out=$root/bin
driver_src=$here/csi-hostdir
driver_hash=$(cd "$driver_src" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-12)
if [ "${1:-}" = --built ]; then
  [ -x "$out/csi-provisioner" ] && [ -x "$out/csi-resizer" ] && [ -x "$out/tailor-csi-hostdir" ] &&
    [ "$(cat "$out/tailor-csi-hostdir.hash" 2>/dev/null)" = "$driver_hash" ]
  exit
fi
mkdir -p "$out"

# Builds ./cmd/<command> of a module, in a writable copy by the module's go.mod and go.sum (its vendor
# directory lacks modules.txt in the module zip), at nice 19 and -p 1 like the other parts.
sidecar() { # module, version (with v), command
  local mod=$1 version=$2 command=$3 src=$root/src-$3 start
  exec 9>"$root/$command.lock"
  flock 9
  if [ -x "$out/$command" ]; then
    echo "$command $version cached"
  else
    echo "building $command $version (first run: about 3 minutes; cached afterwards)"
    require_go 1.26
    module_source "$mod" "$version" "$src"
    rm -rf "$src/vendor"
    start=$SECONDS
    (cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 19 go build -p 1 -trimpath -ldflags "-s -w" -o "$out/$command.tmp.$$" "./cmd/$command")
    mv "$out/$command.tmp.$$" "$out/$command"
    rm -rf "$src"
    echo "built $command in $((SECONDS - start))s"
  fi
  exec 9>&-
}

# The driver is built by its own go.mod and go.sum, read-only: a build never rewrites the repository.
driver() {
  local start
  exec 9>"$root/tailor-csi-hostdir.lock"
  flock 9
  if [ -x "$out/tailor-csi-hostdir" ] && [ "$(cat "$out/tailor-csi-hostdir.hash" 2>/dev/null)" = "$driver_hash" ]; then
    echo "tailor-csi-hostdir $driver_hash cached"
  else
    echo "building tailor-csi-hostdir $driver_hash (hack/csi-hostdir)"
    require_go 1.26
    start=$SECONDS
    (cd "$driver_src" && CGO_ENABLED=0 nice -n 19 go build -p 1 -trimpath -ldflags "-s -w" -o "$out/tailor-csi-hostdir.tmp.$$" .)
    mv "$out/tailor-csi-hostdir.tmp.$$" "$out/tailor-csi-hostdir"
    echo "$driver_hash" >"$out/tailor-csi-hostdir.hash"
    echo "built tailor-csi-hostdir in $((SECONDS - start))s"
  fi
  exec 9>&-
}

sidecar github.com/kubernetes-csi/external-provisioner/v6 "v$CSI_PROVISIONER_VERSION" csi-provisioner
sidecar github.com/kubernetes-csi/external-resizer/v2 "v$CSI_RESIZER_VERSION" csi-resizer
driver
echo "CSI parts in $out (hostdir $driver_hash)"
