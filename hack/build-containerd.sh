#!/usr/bin/env bash
# Builds the pinned containerd 2.x (github.com/containerd/containerd/v2: containerd, its runc shim
# and ctr) from its Go module into ~/.cache/tailor/containerd/v$CONTAINERD_VERSION/bin, the test
# bed's container runtime (decision 61). Owns nothing else: it never starts a process. A second run
# with the binaries present builds nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.sh"
. "$here/lib/go-module.sh"
cache=${TAILOR_CACHE:-$HOME/.cache/tailor}
root=$cache/containerd/v$CONTAINERD_VERSION
out=$root/bin
mod=github.com/containerd/containerd/v2
binaries=(containerd containerd-shim-runc-v2 ctr)

mkdir -p "$out"
# One build at a time per version: concurrent runs would race on the same output.
exec 9>"$root/.lock"
flock 9

missing=()
for b in "${binaries[@]}"; do [ -x "$out/$b" ] || missing+=("$b"); done
if [ ${#missing[@]} -eq 0 ]; then
  echo "containerd v$CONTAINERD_VERSION cached in $out"
  exit 0
fi
echo "building containerd v$CONTAINERD_VERSION (${missing[*]}; first run: about three minutes on 2 cores; cached afterwards)"

require_go 1.24
src=$root/src
module_source "$mod" "v$CONTAINERD_VERSION" "$src"

cd "$src"
start=$SECONDS
# Static, without the snapshotters that need C libraries this machine lacks (btrfs, devmapper,
# zfs): the bed uses overlayfs. The version is stamped so `containerd --version` and the CRI's
# runtime version say which release runs.
for b in "${missing[@]}"; do
  CGO_ENABLED=0 nice -n 19 go build -trimpath -tags "no_btrfs no_devmapper no_zfs" \
    -ldflags "-s -w -X $mod/version.Version=v$CONTAINERD_VERSION -X $mod/version.Package=$mod" \
    -o "$out/$b.tmp.$$" "./cmd/$b"
  mv "$out/$b.tmp.$$" "$out/$b"
done
echo "built containerd v$CONTAINERD_VERSION in $((SECONDS - start))s: $out"
