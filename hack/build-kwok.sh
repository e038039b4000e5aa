#!/usr/bin/env bash
# Builds the pinned kwok (sigs.k8s.io/kwok, simulated nodes and kubelets for the scale benchmark)
# from its Go module into ~/.cache/tailor/kwok/v$KWOK_VERSION/bin. Owns nothing else: it never
# starts a process and never touches the Kubernetes build. A second run with the binary present
# builds nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.sh"
cache=${TAILOR_CACHE:-$HOME/.cache/tailor}
out=$cache/kwok/v$KWOK_VERSION/bin

mkdir -p "$out"
# One build at a time per version: concurrent runs would race on the same output.
exec 9>"$out/../.lock"
flock 9

if [ -x "$out/kwok" ]; then echo "kwok v$KWOK_VERSION cached in $out"; exit 0; fi
echo "building kwok v$KWOK_VERSION (first run: several minutes on 2 cores; cached afterwards)"

[ -x /usr/local/go/bin/go ] && PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "error: no Go toolchain on PATH: install Go >= 1.26 (kwok v$KWOK_VERSION needs it) and retry" >&2; exit 1; }

# A scratch module that requires kwok at the pinned version and nothing else: kwok's own go.mod
# decides its dependency graph (its k8s.io libraries are newer than the test bed's; the client
# talks to a v1.34 API server through stable core/v1 and coordination/v1 only).
work=$cache/kwok/v$KWOK_VERSION/module
mkdir -p "$work"
cd "$work"
if [ ! -f go.sum ] || [ ! -f .resolved ]; then
  echo "resolving sigs.k8s.io/kwok v$KWOK_VERSION"
  rm -f go.mod go.sum
  go mod init tailor.local/kwokbuild >/dev/null 2>&1
  go get "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION"
  grep -Eq "sigs.k8s.io/kwok v$KWOK_VERSION( // indirect)?$" go.mod || { echo "error: module resolution moved sigs.k8s.io/kwok off v$KWOK_VERSION" >&2; exit 1; }
  touch .resolved
fi

start=$SECONDS
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/kwok.tmp.$$" sigs.k8s.io/kwok/cmd/kwok
mv "$out/kwok.tmp.$$" "$out/kwok"
echo "built kwok in $((SECONDS - start))s"
echo "kwok v$KWOK_VERSION in $out"
