#!/usr/bin/env bash
# `make dev`: the local cluster with Tailor in it. Brings up the full test-bed cluster (reusing a
# healthy one) and prints how to use it. Safe to run again: it changes nothing that is already right.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/versions.sh"
bin=${TAILOR_CACHE:-$HOME/.cache/tailor}/kubernetes/v$KUBE_VERSION/bin

bash "$here/cluster.sh" up full
export KUBECONFIG=$repo/.tailor/cluster/kubeconfig
if ls "$repo"/crds/*.yaml >/dev/null 2>&1; then "$bin/kubectl" apply -f "$repo/crds/"; fi

cat <<EOF

Tailor's local cluster is up (Kubernetes v$KUBE_VERSION, one node).
Next:
  export KUBECONFIG=$KUBECONFIG PATH=$bin:\$PATH
  kubectl get nodes
  kubectl get clone -A
EOF
