#!/usr/bin/env bash
# The local test-bed cluster: a real Kubernetes built from the pinned release, with N real nodes.
#
#   hack/cluster.sh up [control-plane|full]   start what is missing, reuse what is healthy
#   hack/cluster.sh down                      stop every process this script started
#   hack/cluster.sh status                    one line per component
#   hack/cluster.sh csi                       the expandable StorageClasses on a running full bed
#
# `up full` starts the expandable storage (hack/bed/csi.sh) only when its parts are already built:
# their first build takes minutes, and only the files that use those classes wait for it, by
# `csi`, which builds them first (outside the bed's lock, so other cluster commands go on).
#
# NODES (default 3) is how many nodes `up full` runs: tailor-node, tailor-node-2, ... each a
# kubelet and a containerd of its own in its own network namespace (decision 61). NODE_RESERVED
# makes a node smaller than the machine (hack/bed/node.sh). The nodes' kubelet is hack/versions.sh's
# KUBE_VERSION (the environment overrides it); the control plane is always the default release, so
# another release runs as a node-version skew (decision 62). $CLUSTER_DIR/version records the
# release the cluster's state belongs to: `up` on another release stops the cluster and starts it
# afresh (new etcd data and kubelet state; certificates and images are kept).
#
# One file per concern under hack/bed/: common.sh (addresses, processes), control-plane.sh,
# network.sh, node.sh, registry.sh, storage.sh, csi.sh. This file only sequences them.
# Must not: touch a process it did not start, route traffic off the machine (all addresses are in
# 198.18.0.0/15, blackholed on the host; no masquerade, no default route in nodes or pods).
set -Eeuo pipefail
# set -e would otherwise stop the script without a word: say which command failed.
# shellcheck disable=SC2154 # rc is set inside the trap
trap 'rc=$?; echo "cluster: error: line $LINENO: \"$BASH_COMMAND\" exited $rc; see $LOGS/" >&2' ERR

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/versions.sh" || exit 1
. "$here/bed/common.sh"
. "$here/bed/control-plane.sh"
. "$here/bed/network.sh"
. "$here/bed/node.sh"
. "$here/bed/registry.sh"
. "$here/bed/storage.sh"
. "$here/bed/csi.sh"

NODES=${NODES:-3}
case $NODES in [1-9]) ;; *) die "NODES=$NODES: the bed runs 1 to 9 nodes" ;; esac
wanted_nodes() { local i; for i in $(seq 1 "$NODES"); do node_name "$i"; done; }
# Nodes with state on this machine (a bed brought up with more nodes earlier).
known_nodes() { local d; for d in "$CLUSTER_DIR"/nodes/*/; do if [ -d "$d" ]; then basename "$d"; fi; done; }

# State that belongs to one release: etcd's data (a newer etcd's data dir is not readable by an
# older one, and the API server's storage versions differ) and the kubelets' checkpoints.
# $CLUSTER_DIR/version holds the kubelets' release, control-plane-version the control plane's (a bed
# without that file, from before decision 62, ran the control plane of its own release).
ensure_release() {
  local recorded='' recorded_cp=''
  [ -f "$CLUSTER_DIR/version" ] && recorded=$(cat "$CLUSTER_DIR/version")
  recorded_cp=$recorded
  [ -f "$CLUSTER_DIR/control-plane-version" ] && recorded_cp=$(cat "$CLUSTER_DIR/control-plane-version")
  [ "$recorded" = "$KUBE_VERSION" ] && [ "$recorded_cp" = "$KUBE_CONTROL_PLANE_VERSION" ] && return 0
  if [ -n "$recorded" ] || [ -d "$CLUSTER_DIR/etcd" ]; then
    log "the cluster's state is v${recorded:-unknown} (control plane v${recorded_cp:-unknown}), wanted v$KUBE_VERSION (control plane v$KUBE_CONTROL_PLANE_VERSION): stopping it and starting afresh"
    cmd_down
    # The CSI volumes go with the PVs that named them (etcd's).
    rm -rf "$CLUSTER_DIR/etcd" "$CLUSTER_DIR/nodes" "$CLUSTER_DIR/feature-gates" "$CLUSTER_DIR/csi-volumes"
  fi
  echo "$KUBE_VERSION" >"$CLUSTER_DIR/version"
  echo "$KUBE_CONTROL_PLANE_VERSION" >"$CLUSTER_DIR/control-plane-version"
}

# A node beyond NODES (a bed that ran more nodes before) is stopped and its Node object removed,
# so the scheduler never waits on it.
remove_extra_nodes() {
  local node
  for node in $(known_nodes); do
    # grep reads all of it (no -q): under pipefail, wanted_nodes killed by SIGPIPE after an early
    # match would fail the test and remove a wanted node.
    wanted_nodes | grep -x "$node" >/dev/null && continue
    log "$node: not among the $NODES wanted: removing it"
    down_node "$node"
    kubectl delete node "$node" --ignore-not-found >/dev/null
    rm -rf "$(node_dir "$node")"
  done
}

cmd_up() {
  local mode=${1:-control-plane} node
  case $mode in control-plane|full) ;; *) die "unknown MODE '$mode': use MODE=control-plane or MODE=full" ;; esac
  require_root
  mkdir -p "$CLUSTER_DIR" "$LOGS" "$PIDS"
  ensure_packages "$mode"
  ensure_binaries "$mode"
  ensure_pki
  ensure_release
  # After ensure_release: a cluster of another release is taken down first, network included.
  ensure_host_network
  # A different feature-gate profile (e.g. the agent's: InPlacePodVerticalScaling=false) restarts
  # the components whose gates change: the kubelets, and the control plane only when its own gates
  # do (on a 1.35+ control plane the agent's profile leaves them unchanged). Pods keep running and
  # the kubelets adopt them again. The file holds the kubelets' gates, then the control plane's.
  local running_gates=$FEATURE_GATES running_cp_gates=$CONTROL_PLANE_GATES
  if [ -f "$CLUSTER_DIR/feature-gates" ]; then
    running_gates=$(sed -n 1p "$CLUSTER_DIR/feature-gates")
    running_cp_gates=$(sed -n 2p "$CLUSTER_DIR/feature-gates")
  fi
  if running kube-apiserver && [ "$running_gates" != "$FEATURE_GATES" ]; then
    log "kubelet feature gates change to '$FEATURE_GATES': restarting the kubelets"
    for node in $(known_nodes); do stop "kubelet-$node"; done
  fi
  if running kube-apiserver && [ "$running_cp_gates" != "$CONTROL_PLANE_GATES" ]; then
    log "control-plane feature gates change to '$CONTROL_PLANE_GATES': restarting the components that read them"
    stop kube-scheduler; stop kube-controller-manager; stop kube-apiserver
  fi
  printf '%s\n%s\n' "$FEATURE_GATES" "$CONTROL_PLANE_GATES" >"$CLUSTER_DIR/feature-gates"
  up_etcd
  up_apiserver
  if [ "$mode" = full ]; then
    ensure_cgroup_hierarchies
    up_controller_manager
    up_scheduler
    up_registry
    build_images
    remove_extra_nodes
    for node in $(wanted_nodes); do up_node "$node"; done
    push_registry_images tailor-node
    # shellcheck disable=SC2046 # one word a node
    up_storage $(wanted_nodes)
    # shellcheck disable=SC2046 # one word a node
    if csi_parts_built; then up_csi $(wanted_nodes); else log "CSI parts not built yet: \`hack/cluster.sh csi\` builds and starts them"; fi
  fi
  echo "$mode" >"$CLUSTER_DIR/mode"
  log "ready ($mode, control plane v$KUBE_CONTROL_PLANE_VERSION, $([ "$mode" = full ] && echo "$NODES node(s), kubelet v$KUBE_VERSION" || echo "no nodes")): export KUBECONFIG=$CLUSTER_DIR/kubeconfig"
}

cmd_down() {
  require_root
  # Processes started on top of the cluster (make dev's controller) go first.
  local extra node
  for extra in "$PIDS"/tailor-*.pid; do [ -e "$extra" ] && stop "$(basename "$extra" .pid)"; done
  stop local-path-provisioner
  down_csi
  for node in $(known_nodes); do down_node "$node"; done
  stop registry
  stop kube-scheduler
  stop kube-controller-manager
  stop kube-apiserver
  stop etcd
  # Pod network namespaces a node's containerd left on the host.
  for ns in $(ip netns list 2>/dev/null | awk '/^cni-/ {print $1}'); do ip netns delete "$ns" 2>/dev/null || true; done
  remove_host_network
  rm -f "$CLUSTER_DIR/mode" "$CLUSTER_DIR/storage.digest" "$CLUSTER_DIR/csi.bin"
  rm -rf "$KUBECACHEDIR"
  log "down"
}

cmd_status() {
  local c state node
  [ ! -f "$CLUSTER_DIR/version" ] || echo "release                  v$(cat "$CLUSTER_DIR/version") (kubelets)"
  for c in etcd kube-apiserver kube-controller-manager kube-scheduler registry local-path-provisioner \
    csi-controller csi-provisioner csi-resizer \
    $(for node in $(known_nodes); do echo "containerd-$node kubelet-$node csi-node-$node"; done); do
    if running "$c"; then state="running (pid $(pid_of "$c"))"; else state="stopped"; fi
    printf '%-32s %s\n' "$c" "$state"
  done
  if running kube-apiserver && apiserver_ready >/dev/null 2>&1; then
    kubectl version 2>/dev/null | sed -n 's/^Server Version: /server version: /p'
    kubectl get nodes --no-headers 2>/dev/null | sed 's/^/node: /' || true
  fi
}

cmd_csi() {
  require_root
  if [ "$(cat "$CLUSTER_DIR/mode" 2>/dev/null)" != full ] || ! running kube-apiserver; then
    die "csi: no full bed is running (hack/cluster.sh up full)"
  fi
  # shellcheck disable=SC2046 # one word a node
  up_csi $(known_nodes)
}

# The CSI parts' build takes minutes cold: it runs before the lock below, holding only its own.
[ "${1:-}" != csi ] || bash "$here/build-csi.sh" >/dev/null
# One cluster command at a time: concurrent test runs would race to start the same components.
mkdir -p "$CLUSTER_DIR"
exec 8>"$CLUSTER_DIR/.lock"
flock 8

case ${1:-} in
  up) cmd_up "${2:-${MODE:-control-plane}}" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  csi) cmd_csi ;;
  *) echo "usage: $0 up [control-plane|full] | down | status | csi" >&2; exit 2 ;;
esac
