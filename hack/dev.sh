#!/usr/bin/env bash
# `make dev`: the full local cluster with Tailor running *in* it (config/local: the controller
# Deployment, two replicas with leader election, and the node agent DaemonSet, idle while the
# kubelet resizes) and the sample CloneSet applied and Ready.
# Safe to run again: healthy parts are kept, the controller rolls only when its image changed
# (the image build is deterministic), and the sample is created only when it does not exist.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/versions.sh"
bin=${TAILOR_CACHE:-$HOME/.cache/tailor}/kubernetes/v$KUBE_VERSION/bin
cluster=$repo/.tailor/cluster
export KUBECONFIG=$cluster/kubeconfig
kubectl() { "$bin/kubectl" "$@"; }

bash "$here/cluster.sh" up full
bash "$here/image.sh"
digest=$(ctr --address /run/tailor/containerd/containerd.sock --namespace k8s.io images ls "name==tailor.local/tailor:dev" | awk 'NR==2 {print $3}')
kubectl apply -k "$repo/config/local" >/dev/null
kubectl wait --for condition=established --timeout=60s crd/clonesets.apps.tailor.dev >/dev/null
# Roll the controller and the agent when (and only when) the image content changed.
for workload in deployment/tailor-controller daemonset/tailor-agent; do
  kubectl -n tailor-system patch "$workload" --type=merge \
    -p "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{\"tailor.dev/image-digest\":\"$digest\"}}}}}" >/dev/null
  kubectl -n tailor-system rollout status "$workload" --timeout=180s
done

# Created once: re-applying would undo the user's `kubectl edit`s of the sample.
kubectl get clonesets.apps.tailor.dev web >/dev/null 2>&1 || kubectl apply -f "$repo/config/samples/cloneset.yaml"
kubectl wait --for=jsonpath='{.status.readyReplicas}'=3 --timeout=180s clonesets.apps.tailor.dev/web >/dev/null
kubectl -n tailor-system get deployment,daemonset
kubectl get clonesets.apps.tailor.dev web

cat <<EOF

Tailor runs in a local Kubernetes v$KUBE_VERSION cluster (namespace tailor-system), with the sample CloneSet "web" Ready.
Next:
  export KUBECONFIG=$KUBECONFIG PATH=$bin:\$PATH
  kubectl edit clone web        # change the image to tailor.local/busybox:v2, or cpu/memory
  kubectl get clone web -w      # watch UPDATED / READY / RESIZING move; pods keep their UIDs
EOF
