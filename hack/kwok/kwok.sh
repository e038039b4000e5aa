#!/usr/bin/env bash
# Simulated nodes on the test bed for the scale benchmark (issue 16):
#
#   hack/kwok/kwok.sh up [nodes]   kwok (pinned, built by hack/build-kwok.sh) playing the Stages in
#                                  this directory, a kube-scheduler of its own for pods that ask for
#                                  schedulerName tailor-kwok, and <nodes> (default 20) Nodes named
#                                  kwok-node-<i>, labelled type=kwok, tainted kwok.x-k8s.io/node=fake:NoSchedule
#   hack/kwok/kwok.sh down         deletes those Nodes (and pods still bound to them), stops both processes
#   hack/kwok/kwok.sh controller-manager up|down
#                                  the fleet bench's realistic profile (issue 45): kube-controller-manager
#                                  at its defaults (client QPS 20, burst 30; every default controller,
#                                  the EndpointSlice controller among them), with only the flags a bed
#                                  needs to run it; down stops it (kwok.sh down and cluster.sh down too)
#
# Needs the test bed's API server (make cluster-up; MODE=control-plane is enough). Owns: the Nodes
# labelled type=kwok, the processes it records as tailor-kwok*.pid under the cluster's pids
# directory (so `cluster.sh down` stops them too), logs under .tailor/kwok. Must not: start or stop
# the cluster, or touch the real node and its pods (kwok manages only nodes labelled type=kwok; the
# scheduler schedules only pods that name it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/hack/versions.sh"
LOG_PREFIX=kwok
# shellcheck source=../lib/paths.sh
. "$repo/hack/lib/paths.sh"
# shellcheck source=../lib/log.sh
. "$repo/hack/lib/log.sh"
# shellcheck source=../lib/procs.sh
. "$repo/hack/lib/procs.sh"
KBIN=$CACHE/kubernetes/v$KUBE_CONTROL_PLANE_VERSION/bin # the control plane's kubectl and kube-scheduler
KWOK=$CACHE/kwok/v$KWOK_VERSION/bin/kwok
STATE=$repo/.tailor/kwok
PROC_LOGS=$STATE # kwok's logs stay beside its state, not the cluster's
SCHEDULER_PORT=10359
KWOK_PORT=10347
KCM_PORT=10357 # clear of the bed's own kube-controller-manager (10257, full mode only)
# Pod addresses kwok hands out: inside the test bed's range, clear of the node (198.18.0.1), the
# real pods (198.18.16.0/20) and services (198.19.0.0/16). Nothing routes to them.
POD_RANGE=198.18.64.0/18
NODE_IP=198.18.0.1
SERVICE_CIDR=198.19.0.0/16 # the API server's (hack/bed/common.sh)

kubectl() { "$KBIN/kubectl" --kubeconfig "$KUBECONFIG" "$@"; }

nodes_ready() { # count
  local ready
  ready=$(kubectl get nodes -l type=kwok -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$' || true)
  [ "$ready" -ge "$1" ]
}

cmd_up() {
  local count=${1:-20}
  [ -f "$KUBECONFIG" ] || die "no test bed at $KUBECONFIG: run 'make cluster-up' first"
  kubectl get --raw /readyz >/dev/null 2>&1 || die "the test bed's API server is not answering: run 'make cluster-up'"
  bash "$repo/hack/build-kwok.sh" >/dev/null
  bash "$repo/hack/build-k8s.sh" kube-scheduler kubectl >/dev/null
  mkdir -p "$STATE"

  if ! pid_of tailor-kwok >/dev/null; then
    # Node leases are kwok's; Node status and pod status come from the Stages only (no built-in ones).
    start tailor-kwok "$KWOK" --kubeconfig "$KUBECONFIG" \
      --config "$here/kwok.yaml" --config "$here/stages-node.yaml" --config "$here/stages-pod.yaml" \
      --manage-all-nodes=false --manage-nodes-with-label-selector type=kwok \
      --cidr "$POD_RANGE" --node-ip "$NODE_IP" --node-lease-duration-seconds 40 \
      --server-address "127.0.0.1:$KWOK_PORT" --v WARN
    wait_for "kwok" 30 curl -sf "http://127.0.0.1:$KWOK_PORT/healthz"
    log "kwok v$KWOK_VERSION up (pid $(pid_of tailor-kwok))"
  fi

  if ! pid_of tailor-kwok-scheduler >/dev/null; then
    cat >"$STATE/scheduler.yaml" <<EOC
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$KUBECONFIG", qps: 5000, burst: 10000}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: tailor-kwok
EOC
    start tailor-kwok-scheduler "$KBIN/kube-scheduler" --config "$STATE/scheduler.yaml" \
      --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
      --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --v=1
    wait_for "kube-scheduler (tailor-kwok)" 60 curl -sfk "https://127.0.0.1:$SCHEDULER_PORT/healthz"
    log "kube-scheduler for schedulerName tailor-kwok up (pid $(pid_of tailor-kwok-scheduler))"
  fi

  local i manifest=""
  for i in $(seq 0 $((count - 1))); do
    manifest+="---
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  labels: {type: kwok, kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64}
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: \"0\"}
spec:
  taints: [{key: kwok.x-k8s.io/node, value: fake, effect: NoSchedule}]
"
  done
  echo "$manifest" | kubectl apply -f - >/dev/null
  wait_for "$count kwok nodes Ready" 120 nodes_ready "$count"
  log "$count simulated nodes Ready (label type=kwok)"
}

cmd_down() {
  if [ -f "$KUBECONFIG" ] && kubectl get --raw /readyz >/dev/null 2>&1; then
    local nodes
    nodes=$(kubectl get nodes -l type=kwok -o name)
    if [ -n "$nodes" ]; then
      # Pods still bound to these nodes would wait forever for a kubelet: remove them at once.
      local node
      for node in $nodes; do
        kubectl delete pods -A --field-selector "spec.nodeName=${node#node/}" --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
      done
      kubectl delete nodes -l type=kwok --wait=false >/dev/null
      log "deleted $(echo "$nodes" | wc -l) simulated nodes"
    fi
  fi
  stop tailor-kwok-scheduler
  stop tailor-kwok
}

cmd_controller_manager() {
  case ${1:-} in
    up)
      [ -f "$CLUSTER_DIR/controller-manager.kubeconfig" ] || die "no test bed credentials for kube-controller-manager: run 'make cluster-up'"
      pid_of tailor-kwok-controller-manager >/dev/null && return 0
      # A full bed runs its own (leader election off): a second one would write every object twice.
      if pid_of kube-controller-manager >/dev/null; then log "the bed's own kube-controller-manager runs (full mode): using it"; return 0; fi
      bash "$repo/hack/build-k8s.sh" kube-controller-manager >/dev/null
      # No rate, grace period or controller flag: its defaults are what a cluster runs.
      start tailor-kwok-controller-manager "$KBIN/kube-controller-manager" \
        --kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" \
        --authentication-kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" \
        --authorization-kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --use-service-account-credentials=true \
        --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
        --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
        --service-cluster-ip-range "$SERVICE_CIDR" \
        --allocate-node-cidrs=false --v=1
      wait_for "kube-controller-manager (realistic profile)" 60 curl -sfk "https://127.0.0.1:$KCM_PORT/healthz"
      log "kube-controller-manager at its defaults up (pid $(pid_of tailor-kwok-controller-manager))"
      ;;
    down) stop tailor-kwok-controller-manager ;;
    *) echo "usage: $0 controller-manager up|down" >&2; exit 2 ;;
  esac
}

case ${1:-} in
  up) cmd_up "${2:-20}" ;;
  down) cmd_controller_manager down; cmd_down ;;
  controller-manager) cmd_controller_manager "${2:-}" ;;
  *) echo "usage: $0 up [nodes] | down | controller-manager up|down" >&2; exit 2 ;;
esac
