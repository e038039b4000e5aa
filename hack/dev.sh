#!/usr/bin/env bash
# `make dev`: the full local cluster with Tailor running *in* it, installed with its Helm chart
# (charts/tailor as release "tailor" in tailor-system, values hack/dev-values.yaml: the controller
# Deployment, two replicas with leader election, and the node agent DaemonSet, idle while the
# kubelet resizes), the sample CloneSet applied and Ready, and the `kubectl tailor` plugin linked
# onto PATH (`make install-plugin`).
# Safe to run again: `helm upgrade --install` changes only what changed, the controller and the
# agent roll only when the image changed (the image build is deterministic; its digest is a pod
# annotation), and the sample is created only when it does not exist. What the release finds
# without Helm's ownership (a bed installed by an older `make dev` with kubectl apply -k, the CRD
# the tests apply from crds/) it takes over.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/versions.sh"
bin=${TAILOR_CACHE:-$HOME/.cache/tailor}/kubernetes/v$KUBE_CONTROL_PLANE_VERSION/bin # kubectl
cluster=${CLUSTER_DIR:-$repo/.tailor/cluster}
export KUBECONFIG=$cluster/kubeconfig
kubectl() { "$bin/kubectl" "$@"; }

bash "$here/cluster.sh" up full
# Helm v$HELM_VERSION, built from its Go module once and cached (hack/build-chart-tools.sh).
bash "$here/build-chart-tools.sh" helm | sed '/^HELM=/d'
helm=${TAILOR_CACHE:-$HOME/.cache/tailor}/helm/v$HELM_VERSION/bin/helm
bash "$here/image.sh"
digest=$("${TAILOR_CACHE:-$HOME/.cache/tailor}/containerd/v$CONTAINERD_VERSION/bin/ctr" --address /run/tailor/nodes/tailor-node/containerd/containerd.sock \
  --namespace k8s.io images ls "name==tailor.local/tailor:dev" 2>/dev/null | awk 'NR==2 {print $3}')
# --wait: until the CRD is established and the controller and agent have rolled out and are ready
# (kstatus). --take-ownership and --force-conflicts: the release owns what it renders, whoever
# applied it before.
"$helm" upgrade --install tailor "$repo/charts/tailor" --namespace tailor-system --create-namespace \
  --values "$here/dev-values.yaml" \
  --set-string "controller.podAnnotations.tailor\\.dev/image-digest=$digest" \
  --set-string "agent.podAnnotations.tailor\\.dev/image-digest=$digest" \
  --take-ownership --force-conflicts --wait --timeout 5m 2> >(grep -v 'found symbolic link in path' >&2) |
  sed -n '/^NAME:/,/^REVISION:/p'
kubectl wait --for condition=established --timeout=60s crd/clonesets.apps.tailor.dev >/dev/null

# Created once: re-applying would undo the user's `kubectl edit`s of the sample.
kubectl get clonesets.apps.tailor.dev web >/dev/null 2>&1 || kubectl apply -f "$repo/config/samples/cloneset.yaml"
kubectl wait --for=jsonpath='{.status.readyReplicas}'=3 --timeout=180s clonesets.apps.tailor.dev/web >/dev/null
kubectl -n tailor-system get deployment,daemonset
kubectl get clonesets.apps.tailor.dev web
# `kubectl tailor` on PATH, as `make install-plugin` links it (/usr/local/bin, else ~/.local/bin),
# so the README's `kubectl tailor status web` works after `make dev` alone. -o build: image.sh
# compiled dist/ above.
make -C "$repo" --no-print-directory -o build install-plugin

cat <<EOF

Tailor runs in a local Kubernetes v$KUBE_CONTROL_PLANE_VERSION cluster (kubelet v$KUBE_VERSION) (namespace tailor-system), with the sample CloneSet "web" Ready.
Next:
  export KUBECONFIG=$KUBECONFIG PATH=$bin:\$PATH
  kubectl edit clone web        # change the image to tailor.local/busybox:v2, or cpu/memory
  kubectl get clone web -w      # watch UPDATED / READY / RESIZING move; pods keep their UIDs
  kubectl tailor status web     # or wait for the rollout's verdict (exit 0 complete, 1 blocked, 2 timed out)
EOF
