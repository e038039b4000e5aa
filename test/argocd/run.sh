#!/usr/bin/env bash
# The `argocd` step of hack/test.sh: tests config/argocd (Argo CD's health check and actions for
# apps.tailor.dev/CloneSet and InPlaceStatefulSet) in the Lua engine Argo CD runs, with Argo CD's own Kruise CloneSet
# script and fixtures as the reference (harness_test.go says what runs).
#   bash test/argocd/run.sh [results.json]   # Jest-style counts for hack/test-summary.mjs
# Needs only Go (>= 1.26) and the module proxy: Argo CD's released module and the harness's few
# modules go to Go's module cache, the build to Go's build cache (as hack/build-k8s.sh's and
# hack/build-kwok.sh's do), so a second run downloads and compiles nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=${1:-}
[ -z "$results" ] || results=$(cd "$(dirname "$results")" && pwd)/$(basename "$results")
# The Argo CD release whose scripts, fixtures and Lua glue are the reference. go.mod pins the
# gopher-lua and gopher-json versions its go.mod requires (a test checks they agree).
ARGOCD_VERSION=3.5.1

[ -x /usr/local/go/bin/go ] && PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "error: no Go toolchain on PATH: install Go >= 1.26 (https://go.dev/dl) and retry" >&2; exit 1; }
export GOTOOLCHAIN=local

# Outside any module, so nothing is added to a go.mod; from the cache when already downloaded.
module_json=$(cd / && go mod download -json "github.com/argoproj/argo-cd/v3@v$ARGOCD_VERSION") || {
  echo "error: could not download github.com/argoproj/argo-cd/v3@v$ARGOCD_VERSION from the module proxy" >&2; exit 1; }
ARGOCD_MODULE_DIR=$(echo "$module_json" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
[ -d "$ARGOCD_MODULE_DIR/resource_customizations" ] || { echo "error: no Argo CD module in '$ARGOCD_MODULE_DIR'" >&2; exit 1; }
export ARGOCD_MODULE_DIR
echo "Argo CD v$ARGOCD_VERSION from $ARGOCD_MODULE_DIR"

cd "$here"
go run ./cmd/extract "$ARGOCD_MODULE_DIR" argolua
out=${results:-$(mktemp)}
set +e
go test -count=1 -json ./... | go run ./cmd/jestjson "$out"
codes=("${PIPESTATUS[@]}")
set -e
[ "${codes[0]}" = 0 ] && [ "${codes[1]}" = 0 ]
