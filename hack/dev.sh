#!/usr/bin/env bash
# `make dev`: the full local cluster with Tailor running against it and the sample CloneSet
# applied and Ready. Safe to run again: healthy parts are kept, the controller restarts only when
# its build changed, and the sample is created only when it does not exist.
# The controller runs on the node as a host process (like the kubelet) under the cluster's
# process bookkeeping; `make cluster-down` stops it with the rest.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/versions.sh"
bin=${TAILOR_CACHE:-$HOME/.cache/tailor}/kubernetes/v$KUBE_VERSION/bin
cluster=$repo/.tailor/cluster
export KUBECONFIG=$cluster/kubeconfig
kubectl() { "$bin/kubectl" "$@"; }

bash "$here/cluster.sh" up full
(cd "$repo" && npx tsc -p tsconfig.build.json)
kubectl apply -f "$repo/crds/" >/dev/null
kubectl wait --for condition=established --timeout=60s crd/clonesets.apps.tailor.dev >/dev/null

pidfile=$cluster/pids/tailor-controller.pid
running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }
if running && [ -z "$(find "$repo/dist" -newer "$pidfile" -name '*.js' | head -1)" ]; then
  echo "dev: tailor controller already running (pid $(cat "$pidfile"))"
else
  if running; then kill -TERM "$(cat "$pidfile")"; while running; do sleep 0.2; done; fi
  # Scoped to the default namespace, where the sample lives: `make test` runs its own controllers
  # in their own namespaces on this cluster, and two controllers must never act on one CloneSet.
  setsid node "$repo/dist/cli/main.js" controller --kubeconfig "$KUBECONFIG" --namespace default \
    --metrics-bind-address 127.0.0.1:8080 --health-probe-bind-address 127.0.0.1:8081 \
    >>"$cluster/logs/tailor-controller.log" 2>&1 </dev/null 8>&- &
  echo $! >"$pidfile"
  for _ in $(seq 1 60); do curl -sf http://127.0.0.1:8081/readyz >/dev/null && break; sleep 0.5; done
  curl -sf http://127.0.0.1:8081/readyz >/dev/null || { echo "dev: the controller did not become ready; see $cluster/logs/tailor-controller.log" >&2; exit 1; }
  echo "dev: tailor controller running (pid $(cat "$pidfile")), metrics on http://127.0.0.1:8080/metrics"
fi

# Created once: re-applying would undo the user's `kubectl edit`s of the sample.
kubectl get clone web >/dev/null 2>&1 || kubectl apply -f "$repo/config/samples/cloneset.yaml"
kubectl wait --for=jsonpath='{.status.readyReplicas}'=3 --timeout=180s clone/web
kubectl get clone web

cat <<EOF

Tailor is running on a local Kubernetes v$KUBE_VERSION cluster, with the sample CloneSet "web" Ready.
Next:
  export KUBECONFIG=$KUBECONFIG PATH=$bin:\$PATH
  kubectl edit clone web        # change the image to tailor.local/busybox:v2, or cpu/memory
  kubectl get clone web -w      # watch UPDATED / READY / RESIZING move; pods keep their UIDs
EOF
