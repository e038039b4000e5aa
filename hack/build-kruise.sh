#!/usr/bin/env bash
# Builds the pinned OpenKruise kruise-manager (github.com/openkruise/kruise, the peer column of the
# scale bench) from its Go module into ~/.cache/tailor/kruise/v$KRUISE_VERSION/bin, and keeps the
# module's CRDs beside it in .../crds. Owns nothing else: it never starts a process and never
# touches the Kubernetes or kwok builds. A second run with the binary present builds nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.sh"
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

[ -x /usr/local/go/bin/go ] && PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "error: no Go toolchain on PATH: install Go >= 1.22 and retry" >&2; exit 1; }

# `go install mod@version` refuses a module whose go.mod has replace directives (kruise pins every
# k8s.io module to v0.30.x that way), so the module's own source is downloaded and built in place:
# its go.mod and go.sum decide the dependency graph exactly as the release does.
src=$root/src
if [ ! -f "$src/.complete" ]; then
  echo "downloading $mod@v$KRUISE_VERSION"
  json=$(go mod download -json "$mod@v$KRUISE_VERSION")
  dir=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  [ -n "$dir" ] && [ -f "$dir/go.mod" ] || { echo "error: go mod download gave no source for $mod@v$KRUISE_VERSION:" >&2; printf '%s\n' "$json" >&2; exit 1; }
  rm -rf "$src"
  # The module cache is read-only; the build needs a writable copy (go may touch go.sum).
  cp -r "$dir" "$src"
  chmod -R u+w "$src"
  touch "$src/.complete"
fi

mkdir -p "$root/crds"
cp "$src"/config/crd/bases/*.yaml "$root/crds/"

cd "$src"
start=$SECONDS
# nice and -p 1: the machine has two cores and other people's builds and tests run beside this one.
CGO_ENABLED=0 nice -n 19 go build -p 1 -trimpath -ldflags "-s -w" -o "$out/kruise-manager.tmp.$$" .
mv "$out/kruise-manager.tmp.$$" "$out/kruise-manager"
echo "built kruise-manager in $((SECONDS - start))s"
echo "kruise-manager v$KRUISE_VERSION in $out, CRDs in $root/crds"
