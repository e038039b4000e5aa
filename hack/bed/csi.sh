# shellcheck shell=bash # sourced, never run
# The test bed's expandable storage (decision 98): StorageClasses `allow-volume-expansion` and
# `disallow-volume-expansion` (the names OpenKruise's e2e uses; neither is the default), served by
# Tailor's own CSI driver (hack/csi-hostdir: directories under $CLUSTER_DIR/csi-volumes) beside the
# real sidecars, external-provisioner and external-resizer (hack/build-csi.sh). The driver's
# controller half and the sidecars run on the host with the admin kubeconfig; its node half runs in
# each node's namespaces and registers with that node's kubelet. Sourced by hack/cluster.sh.
# Owns: those processes, the CSIDriver and the two StorageClasses, $CLUSTER_DIR/csi-volumes.
# Must not: touch the default class (storage.sh's) or a claim.

CSI_DRIVER=hostdir.csi.tailor.dev
csi_parts() { # hack/build-csi.sh's last line: "CSI parts in <bin directory> (hostdir <hash>)"
  # shellcheck disable=SC2154 # here (hack/) is set by hack/cluster.sh, which sources this file
  bash "$here/build-csi.sh" | tail -1
}
csi_parts_built() { bash "$here/build-csi.sh" --built; }
CSI_VOLUMES=$CLUSTER_DIR/csi-volumes
CSI_CONTROLLER_SOCKET=$RUN_DIR/csi/controller.sock

csi_manifests() {
  cat <<EOT
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: $CSI_DRIVER}
spec: {attachRequired: false, podInfoOnMount: false, volumeLifecycleModes: [Persistent], fsGroupPolicy: File}
EOT
  local class expand
  for class in allow-volume-expansion disallow-volume-expansion; do
    expand=true
    [ "$class" = allow-volume-expansion ] || expand=false
    cat <<EOT
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $class}
provisioner: $CSI_DRIVER
allowVolumeExpansion: $expand
reclaimPolicy: Delete
volumeBindingMode: Immediate
EOT
  done
}

# Under the node's run directory: a unix socket path has 107 bytes at most.
csi_node_socket() { echo "$(node_run "$1")/csi/hostdir.sock"; }

csi_registered() { # node: the kubelet lists the driver on its CSINode
  kubectl get csinode "$1" -o jsonpath='{.spec.drivers[*].name}' 2>/dev/null | grep -qw "$CSI_DRIVER"
}

up_csi_node() { # node, bin directory
  local node=$1 bin=$2 root
  running "csi-node-$node" && return 0
  root=$(node_dir "$node")/kubelet/root
  start "csi-node-$node" nsenter --net="/run/netns/$node" --mount="$NS_DIR/$node" -- "$bin/tailor-csi-hostdir" \
    --mode=node --endpoint="unix://$(csi_node_socket "$node")" --node-id="$node" \
    --registration-dir="$root/plugins_registry" --root="$CSI_VOLUMES"
}

up_csi() { # nodes...
  local parts bin node
  parts=$(csi_parts)
  bin=$(echo "$parts" | sed -n 's/^CSI parts in \(.*\) (hostdir [0-9a-f]*)$/\1/p')
  [ -n "$bin" ] || die "hack/build-csi.sh did not say where it built (it said: $parts)"
  mkdir -p "$CSI_VOLUMES" "$(dirname "$CSI_CONTROLLER_SOCKET")"
  # Parts built anew (other versions, an edited driver) replace the running ones.
  if [ "$(cat "$CLUSTER_DIR/csi.bin" 2>/dev/null)" != "$parts" ]; then
    down_csi
    for node in "$@"; do stop "csi-node-$node"; done
    echo "$parts" >"$CLUSTER_DIR/csi.bin"
  fi
  csi_manifests | kubectl apply -f - >/dev/null
  if ! running csi-controller; then
    # A socket a killed driver left would pass the wait below before the new one listens.
    rm -f "$CSI_CONTROLLER_SOCKET"
    start csi-controller "$bin/tailor-csi-hostdir" --mode=controller \
      --endpoint="unix://$CSI_CONTROLLER_SOCKET" --root="$CSI_VOLUMES"
    wait_for csi-controller 30 test -S "$CSI_CONTROLLER_SOCKET"
  fi
  # --csi-address, --kubeconfig, --leader-election: csi-lib-utils' standard flags, both sidecars'.
  running csi-provisioner || start csi-provisioner "$bin/csi-provisioner" --csi-address="$CSI_CONTROLLER_SOCKET" \
    --kubeconfig="$CLUSTER_DIR/kubeconfig" --leader-election=false --v=2
  running csi-resizer || start csi-resizer "$bin/csi-resizer" --csi-address="$CSI_CONTROLLER_SOCKET" \
    --kubeconfig="$CLUSTER_DIR/kubeconfig" --leader-election=false --v=2
  for node in "$@"; do up_csi_node "$node" "$bin"; done
  for node in "$@"; do wait_for "$CSI_DRIVER registered on $node" 60 csi_registered "$node"; done
  log "storage: StorageClasses allow-volume-expansion and disallow-volume-expansion ($CSI_DRIVER)"
}

down_csi() {
  stop csi-resizer
  stop csi-provisioner
  stop csi-controller
}
