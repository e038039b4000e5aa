#!/usr/bin/env bash
# Builds what the chart's offline checks need (the `chart` step of hack/test.sh, hack/gen-config.sh,
# and `helm` on the bed), from Go modules only, into ~/.cache/tailor:
#   helm/v$HELM_VERSION/bin/helm                 helm.sh/helm/v4
#   kubeconform/v$KUBECONFORM_VERSION/bin/kubeconform   github.com/yannh/kubeconform
#   kubeconform/schemas/v<release>-standalone-strict/*.json   one JSON schema per kind, for the
#       oldest and the newest release of hack/versions.sh, generated (hack/openapi2jsonschema.mjs)
#       from the OpenAPI document the release publishes in its own Go module
#       (k8s.io/kubernetes/api/openapi-spec/swagger.json): kubeconform's default schemas live on
#       GitHub, which this machine does not reach, and these are what they are made from.
# Owns nothing else: it never starts a process. A second run with everything present builds
# nothing. Prints the directories as KEY=path lines at the end (read by test/chart/).
#   hack/build-chart-tools.sh        all of the above
#   hack/build-chart-tools.sh helm   helm alone (make dev and the helm e2e), printing only HELM=
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.sh" || exit 1
cache=${TAILOR_CACHE:-$HOME/.cache/tailor}
helm_bin=$cache/helm/v$HELM_VERSION/bin
kc_bin=$cache/kubeconform/v$KUBECONFORM_VERSION/bin
schemas=$cache/kubeconform/schemas
# shellcheck disable=SC2086 # one word a release
oldest=$(printf '%s\n' $KUBE_VERSIONS | sort -V | head -1)
# shellcheck disable=SC2086 # one word a release
newest=$(printf '%s\n' $KUBE_VERSIONS | sort -V | tail -1)
only_helm=false
case ${1:-} in helm) only_helm=true ;; "") ;; *) echo "usage: $0 [helm]" >&2; exit 2 ;; esac

mkdir -p "$helm_bin" "$kc_bin" "$schemas"
exec 9>"$cache/kubeconform/.lock"
flock 9

[ -x /usr/local/go/bin/go ] && PATH=$PATH:/usr/local/go/bin
need_go() { command -v go >/dev/null || { echo "error: no Go toolchain on PATH: install Go >= 1.26 and retry" >&2; exit 1; }; }

# go build <module>@<version> <package> <output> [ldflags]: a scratch module that requires the tool
# at the pinned version, so the tool's own go.mod decides its dependency graph.
build_tool() {
  local module=$1 version=$2 pkg=$3 out=$4 ldflags=${5:-}
  need_go
  local work
  work=$(dirname "$(dirname "$out")")/module
  mkdir -p "$work"
  (
    cd "$work"
    if [ ! -f .resolved ]; then
      rm -f go.mod go.sum
      go mod init "tailor.local/${out##*/}build" >/dev/null 2>&1
      go get "$pkg@v$version"
      grep -Eq "$module v$version( // indirect)?$" go.mod || { echo "error: module resolution moved $module off v$version" >&2; exit 1; }
      touch .resolved
    fi
    local start=$SECONDS
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ldflags" -o "$out.tmp.$$" "$pkg"
    mv "$out.tmp.$$" "$out"
    echo "built ${out##*/} v$version in $((SECONDS - start))s"
  )
}

if [ ! -x "$helm_bin/helm" ]; then
  echo "building helm v$HELM_VERSION (first run: a few minutes on 2 cores; cached afterwards)"
  build_tool helm.sh/helm/v4 "$HELM_VERSION" helm.sh/helm/v4/cmd/helm "$helm_bin/helm" \
    "-X helm.sh/helm/v4/internal/version.version=v$HELM_VERSION -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
fi
if $only_helm; then echo "HELM=$helm_bin/helm"; exit 0; fi
if [ ! -x "$kc_bin/kubeconform" ]; then
  echo "building kubeconform v$KUBECONFORM_VERSION"
  build_tool github.com/yannh/kubeconform "$KUBECONFORM_VERSION" github.com/yannh/kubeconform/cmd/kubeconform "$kc_bin/kubeconform"
fi

for release in $oldest $newest; do
  dir=$schemas/v$release-standalone-strict
  [ -f "$dir/.complete" ] && continue
  need_go
  echo "generating JSON schemas of Kubernetes v$release (from k8s.io/kubernetes@v$release api/openapi-spec/swagger.json)"
  src=$(cd "$schemas" && go mod download -json "k8s.io/kubernetes@v$release" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [ -f "$src/api/openapi-spec/swagger.json" ] || { echo "error: no api/openapi-spec/swagger.json in k8s.io/kubernetes@v$release" >&2; exit 1; }
  rm -rf "$dir.tmp"
  node "$here/openapi2jsonschema.mjs" "$src/api/openapi-spec/swagger.json" "$dir.tmp"
  touch "$dir.tmp/.complete"
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
done

echo "HELM=$helm_bin/helm"
echo "KUBECONFORM=$kc_bin/kubeconform"
echo "SCHEMAS=$schemas"
echo "RELEASES=$oldest $newest"
