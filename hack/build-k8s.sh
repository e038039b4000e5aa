#!/usr/bin/env bash
# Builds a Kubernetes release of hack/versions.sh (KUBE_VERSION: the environment's, else the
# default) from Go modules, into ~/.cache/tailor/kubernetes/v$KUBE_VERSION/bin: for the control
# plane's release (the default) every binary the bed runs and the etcd it is tested with; for
# another listed release only its kubelet, the one binary of it the bed runs (decision 62).
# Owns nothing else: it never starts a process.
# A second run with every binary present builds nothing; each release has its own directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.sh" || exit 1
cache=${TAILOR_CACHE:-$HOME/.cache/tailor}
out=$cache/kubernetes/v$KUBE_VERSION/bin
# No kube-proxy: nothing starts it (no test uses a Service; decision 61).
binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
[ "$KUBE_VERSION" = "$KUBE_CONTROL_PLANE_VERSION" ] || binaries=(kubelet)
wanted=("${@:-${binaries[@]}}")  # a subset may be named: build-k8s.sh etcd kube-apiserver
for b in "${wanted[@]}"; do
  [[ " ${binaries[*]} " == *" $b "* ]] || { echo "error: $b is not built for v$KUBE_VERSION (the bed runs ${binaries[*]} of it; decision 62)" >&2; exit 1; }
done

mkdir -p "$out"
# One build at a time per version: concurrent runs would race on the same outputs.
exec 9>"$out/../.lock"
flock 9

missing=()
for b in "${wanted[@]}"; do [ -x "$out/$b" ] || missing+=("$b"); done
if [ ${#missing[@]} -eq 0 ]; then echo "kubernetes v$KUBE_VERSION binaries cached in $out"; exit 0; fi
echo "building ${missing[*]} of v$KUBE_VERSION (first run: about 10 minutes for the control plane, 3 for a kubelet alone, on 2 cores; cached afterwards)"

[ -x /usr/local/go/bin/go ] && PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "error: no Go toolchain on PATH: install Go >= 1.26 (https://go.dev/dl) and retry" >&2; exit 1; }

work=$cache/kubernetes/v$KUBE_VERSION/module
mkdir -p "$work"
cd "$work"
if [ ! -f go.sum ] || [ ! -f .resolved ]; then
  echo "resolving k8s.io/kubernetes v$KUBE_VERSION (first run: downloads the module graph)"
  rm -f go.mod go.sum
  go mod init tailor.local/kubebuild >/dev/null 2>&1
  modfile=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  # Every staging module that the release replaces with ./staging/... is published as v0.<minor>.<patch>.
  staging_version=v0.${KUBE_VERSION#1.}
  {
    echo "require k8s.io/kubernetes v$KUBE_VERSION"
    echo "replace ("
    sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\t\1 => \1 '"$staging_version"'#p' "$modfile"
    echo ")"
  } >> go.mod
  # Pin every package to the release's own versions: a bare `go get pkg` would upgrade to latest.
  etcd_version=$(sed -n 's#^\s*go.etcd.io/etcd/server/v3 \(v[0-9.]*\).*#\1#p' "$modfile")
  pkgs=()
  for b in "${binaries[@]}"; do
    case $b in etcd) pkgs+=("go.etcd.io/etcd/server/v3@$etcd_version") ;; *) pkgs+=("k8s.io/kubernetes/cmd/$b@v$KUBE_VERSION") ;; esac
  done
  go get "${pkgs[@]}"
  grep -q "k8s.io/kubernetes v$KUBE_VERSION\$" go.mod || { echo "error: module resolution moved k8s.io/kubernetes off v$KUBE_VERSION" >&2; exit 1; }
  touch .resolved
fi

# Stamp the release version so `kubectl version` and /version report it, as a release build does.
minor=$(echo "$KUBE_VERSION" | cut -d. -f2)
ldflags="-s -w"
for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $v.gitVersion=v$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor"
  ldflags+=" -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
done
for b in "${missing[@]}"; do
  case $b in etcd) pkg=go.etcd.io/etcd/server/v3 ;; *) pkg=k8s.io/kubernetes/cmd/$b ;; esac
  echo "building $b ($pkg)"
  start=$SECONDS
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/$b.tmp.$$" "$pkg"
  mv "$out/$b.tmp.$$" "$out/$b"
  echo "built $b in $((SECONDS - start))s"
done
echo "kubernetes v$KUBE_VERSION binaries in $out"
