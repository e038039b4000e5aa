#!/usr/bin/env bash
# Builds `verdicts` (main.go) into ~/.cache/tailor/readers/ and prints its path: kstatus from
# sigs.k8s.io/cli-utils and Argo CD's Lua engine (../argocd, whose Argo CD files are extracted from
# its released module first, as ../argocd/run.sh does). Only Go and the module proxy; Go's module
# and build caches make a second build take a second or two.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ARGOCD_VERSION=$(sed -n 's/^ARGOCD_VERSION=//p' "$here/../argocd/run.sh")
[ -x /usr/local/go/bin/go ] && PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "error: no Go toolchain on PATH: install Go >= 1.26 and retry" >&2; exit 1; }
export GOTOOLCHAIN=local
module_dir=$(cd / && go mod download -json "github.com/argoproj/argo-cd/v3@v$ARGOCD_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
[ -d "$module_dir/resource_customizations" ] || { echo "error: no Argo CD v$ARGOCD_VERSION module from the module proxy" >&2; exit 1; }
(cd "$here/../argocd" && go run ./cmd/extract "$module_dir" argolua) >&2
out=${XDG_CACHE_HOME:-$HOME/.cache}/tailor/readers
mkdir -p "$out"
(cd "$here" && go build -o "$out/verdicts" .) >&2
echo "$out/verdicts"
