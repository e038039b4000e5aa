# shellcheck shell=bash # sourced, never run
# A node of the test bed: its own containerd (2.x, hack/build-containerd.sh) and kubelet, both in
# the node's network namespace (hack/bed/network.sh) and in a mount namespace of the node's own,
# where /run/tailor/containerd and /run/tailor/kubelet/pki are the node's (so a DaemonSet's
# hostPath finds its own node's socket and certificate, as on a real node); its own directories,
# cgroup root (/<node>: no kubelet ever sees another's pods), pod CIDR and images. Sourced by
# hack/cluster.sh.
# Owns: per node, $CLUSTER_DIR/nodes/<node>, $RUN_DIR/nodes/<node>, the mount namespace file
# $RUN_DIR/ns/<node>, the processes containerd-<node> and kubelet-<node>, the node's certificates.
# Must not: touch another node's files or processes, or the control plane.

# Resources a node keeps from its pods (the kubelet's systemReserved), per node: a node can be
# made smaller than the machine, so one is full while another has room. Space-separated
# <node>:<reserved> entries. By default the third node keeps one of the machine's CPUs, so a pod
# that fits the others can be too large for it (the node-level e2e; decision 61).
NODE_RESERVED=${NODE_RESERVED-tailor-node-3:cpu=1}
NS_DIR=$RUN_DIR/ns

node_name() { if [ "$1" = 1 ]; then echo tailor-node; else echo "tailor-node-$1"; fi; }
node_dir() { echo "$CLUSTER_DIR/nodes/$1"; }
node_run() { echo "$RUN_DIR/nodes/$1"; }
node_socket() { echo "$(node_run "$1")/containerd/containerd.sock"; }
# ctr warns on every call that cgroup v1 is deprecated (this machine's kernel runs v1): not news.
ctr_() {
  local node=$1; shift
  "$CONTAINERD_BIN/ctr" --address "$(node_socket "$node")" --namespace k8s.io "$@" 2> >(sed '/support for cgroup v1 is deprecated/d' >&2)
}
in_node() { local node=$1; shift; nsenter --net="/run/netns/$node" --mount="$NS_DIR/$node" -- "$@"; }

ensure_cgroup_hierarchies() {
  # The kubelet's cgroupfs manager expects every v1 controller the kernel offers to be mounted.
  local c
  for c in hugetlb net_cls perf_event; do
    grep -q "^$c\s" /proc/cgroups || continue
    mountpoint -q "/sys/fs/cgroup/$c" && continue
    if ! { mkdir -p "/sys/fs/cgroup/$c" && mount -t cgroup -o "$c" cgroup "/sys/fs/cgroup/$c"; }; then log "could not mount cgroup $c (continuing)"; fi
  done
}

# The node's cgroup root in every v1 hierarchy (the kubelet refuses a root that does not exist).
ensure_node_cgroup_root() { # node
  local d
  for d in /sys/fs/cgroup/*/; do
    [ -L "${d%/}" ] && continue
    mkdir -p "$d$1"
  done
}

# A mount namespace per node, kept by a bind mount of it on $NS_DIR/<node> (as `ip netns` keeps
# network namespaces): inside it, the node's own runtime socket and kubelet certificate directory
# sit where the chart's DaemonSet mounts them from. Mounts the host makes later propagate in.
ensure_node_mount_ns() { # node
  local node=$1 run
  run=$(node_run "$node")
  mkdir -p "$NS_DIR" "$run/containerd" "$run/kubelet/pki" "$RUN_DIR/containerd" "$RUN_DIR/kubelet/pki"
  chmod 700 "$run/kubelet/pki"
  if ! mountpoint -q "$NS_DIR"; then mount --bind "$NS_DIR" "$NS_DIR"; mount --make-private "$NS_DIR"; fi
  mountpoint -q "$NS_DIR/$node" && return 0
  touch "$NS_DIR/$node"
  unshare --mount="$NS_DIR/$node" --propagation slave sh -c \
    "mount --bind '$run/containerd' '$RUN_DIR/containerd' && mount --bind '$run/kubelet/pki' '$RUN_DIR/kubelet/pki'"
}

ensure_node_pki() { # node
  local node=$1
  issue_cert "kubelet-client-$node" "/O=system:nodes/CN=system:node:$node"
  issue_cert "kubelet-serving-$node" "/CN=$node" "DNS:$node,IP:$(node_ip "$node"),IP:127.0.0.1"
  write_kubeconfig "$(node_dir "$node")/kubelet.kubeconfig" "kubelet-client-$node"
  # The kubelet's client certificate and key in one file where a kubelet with certificate rotation
  # keeps it (kubelet-client-current.pem): the node agent reads image pull secrets with it, as the
  # node (decision 53); make dev's DaemonSet mounts this directory.
  local pem
  pem=$(node_run "$node")/kubelet/pki/kubelet-client-current.pem
  cmp -s <(cat "$PKI/kubelet-client-$node.crt" "$PKI/kubelet-client-$node.key") "$pem" ||
    (umask 077 && cat "$PKI/kubelet-client-$node.crt" "$PKI/kubelet-client-$node.key" >"$pem")
}

write_containerd_config() { # node
  local node=$1 dir run
  dir=$(node_dir "$node"); run=$(node_run "$node")
  mkdir -p "$dir/containerd" "$dir/cni/net.d" "$run/containerd"
  # The one containerd configuration, shared with the cri tier (hack/containerd.toml).
  # shellcheck disable=SC2154 # here (hack/) is set by hack/cluster.sh, which sources this file
  sed -e "s|@ROOT@|$dir/containerd/root|" -e "s|@STATE@|$run/containerd/state|" \
    -e "s|@SOCKET@|$(node_socket "$node")|g" -e "s|@RUNC_ROOT@|$run/runc|" \
    -e "s|@CNI_CONF_DIR@|$dir/cni/net.d|" -e "s|@REGISTRY_HOSTS@|$dir/containerd/certs.d|" \
    "$here/containerd.toml" >"$dir/containerd/config.toml"
  # The registry speaks plain HTTP.
  mkdir -p "$dir/containerd/certs.d/$REGISTRY"
  cat >"$dir/containerd/certs.d/$REGISTRY/hosts.toml" <<EOT
server = "http://$REGISTRY"
[host."http://$REGISTRY"]
  capabilities = ["pull", "resolve", "push"]
EOT
  cat >"$dir/cni/net.d/10-tailor.conflist" <<EOT
{
  "cniVersion": "0.4.0",
  "name": "tailor",
  "plugins": [{
    "type": "bridge", "bridge": "tailor0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": "$(node_pod_cidr "$node")", "gateway": "$(node_pod_gateway "$node")"}]],
      "routes": [{"dst": "$TESTBED_RANGE"}],
      "dataDir": "$dir/cni/ipam"
    }
  }]
}
EOT
}

up_containerd() { # node
  local node=$1 config before=
  config=$(node_dir "$node")/containerd/config.toml
  [ ! -f "$config" ] || before=$(cat "$config")
  write_containerd_config "$node"
  if running "containerd-$node" && ctr_ "$node" version >/dev/null 2>&1; then
    [ "$before" != "$(cat "$config")" ] || return 0
    # A running containerd reads its configuration only at start; pods keep running in their shims.
    log "$node: containerd's configuration changed: restarting it"
    stop "containerd-$node"
  fi
  : >"$LOGS/containerd-$node.log"
  # Its runc shim is found on PATH: the one built with it, never a packaged containerd's.
  start "containerd-$node" env PATH="$CONTAINERD_BIN:$PATH" nsenter --net="/run/netns/$node" --mount="$NS_DIR/$node" -- \
    "$CONTAINERD_BIN/containerd" --config "$config"
  wait_for "$node: containerd" 30 ctr_ "$node" version
  # ctr answers as soon as containerd serves, but its CRI plugin finishes starting a moment later
  # and until then answers "server is not initialized yet", on which a starting kubelet exits.
  wait_for "$node: containerd's CRI plugin" 30 grep -q 'containerd successfully booted' "$LOGS/containerd-$node.log"
  log "$node: containerd v$CONTAINERD_VERSION up at $(node_socket "$node")"
}

# The test images (busybox v1/v2 and the sandbox image), built once into $CACHE/images/v2 from
# Debian's static busybox, never pulled.
build_images() {
  local images=$CACHE/images/v2 links=() applet
  mkdir -p "$images"
  [ -f "$images/busybox-v2.tar" ] && return 0
  (cd "$here/images" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$images/pause-bin" ./pause \
    && go build -o "$images/ocibuild" ./ocibuild)
  for applet in sh ash sleep echo cat ls ps date env hostname id mkdir rm touch test true false kill grep \
    head tail dd yes wget nc httpd printf seq sed awk wc tr cut top free df uname; do
    links+=(-link "/bin/$applet=busybox")
  done
  "$images/ocibuild" -ref tailor.local/pause:1 -out "$images/pause.tar" -entrypoint /pause -file "/pause=$images/pause-bin"
  for v in v1 v2; do
    # The release file makes the two tags' content, and so their image IDs, differ.
    "$images/ocibuild" -ref "tailor.local/busybox:$v" -out "$images/busybox-$v.tar" -cmd /bin/sh \
      -file /bin/busybox=/bin/busybox "${links[@]}" -text "/etc/tailor-release=$v" -text /tmp/.keep=
  done
}

import_images() { # node
  local node=$1 images=$CACHE/images/v2 ref tar
  for tar in pause busybox-v1 busybox-v2; do
    case $tar in pause) ref=tailor.local/pause:1 ;; *) ref=tailor.local/busybox:${tar#busybox-} ;; esac
    ctr_ "$node" images ls -q | grep -qx "$ref" && continue
    ctr_ "$node" images import "$images/$tar.tar" >/dev/null
    # Pinned images are never garbage-collected by the kubelet.
    ctr_ "$node" images label "$ref" io.cri-containerd.pinned=pinned >/dev/null
  done
}

node_reserved() { # node: its systemReserved entries, as a YAML flow mapping body
  local entry
  for entry in $NODE_RESERVED; do
    [ "${entry%%:*}" = "$1" ] || continue
    echo "${entry#*:}" | tr ',' '\n' | sed 's/=\(.*\)/: "\1"/' | paste -sd, - | sed 's/,/, /g'
  done
}

write_kubelet_config() { # node
  local node=$1 dir
  dir=$(node_dir "$node")
  mkdir -p "$dir/kubelet" "$dir/pod-logs"
  cat >"$dir/kubelet/config.yaml" <<EOT
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $(node_ip "$node")
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $PKI/kubelet-serving-$node.crt
tlsPrivateKeyFile: $PKI/kubelet-serving-$node.key
cgroupDriver: cgroupfs
cgroupRoot: /$node
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$(node_socket "$node")
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
podCIDR: $(node_pod_cidr "$node")
podLogsDir: $dir/pod-logs
maxPods: 110
serializeImagePulls: false
imageGCHighThresholdPercent: 95
imageGCLowThresholdPercent: 90
systemReserved: {$(node_reserved "$node")}
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, nodefs.inodesFree: 1%, imagefs.available: 1%}
featureGates: {$(echo "$FEATURE_GATES" | tr ',' '\n' | sed -n 's/^\(.*\)=\(.*\)$/\1: \2/p' | paste -sd, - | sed 's/,/, /g')}
EOT
}

node_ready() { # node, since (epoch seconds): a Ready condition left over from an earlier run does not count
  local node=$1 since=$2 cond
  running "kubelet-$node" || die "$node: the kubelet exited; see $LOGS/kubelet-$node.log"
  cond=$(kubectl get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}' 2>/dev/null) || return 1
  [ "${cond%% *}" = True ] && [ "$(date -d "${cond#* }" +%s)" -ge "$since" ]
}

kubelet_healthy() { in_node_netns "$1" curl -sf http://127.0.0.1:10248/healthz; }

up_kubelet() { # node
  local node=$1 dir
  dir=$(node_dir "$node")
  if running "kubelet-$node" && kubelet_healthy "$node" >/dev/null 2>&1; then return 0; fi
  write_kubelet_config "$node"
  local started=$(($(date +%s) - 1))
  start "kubelet-$node" nsenter --net="/run/netns/$node" --mount="$NS_DIR/$node" -- "$KUBELET_BIN" \
    --config "$dir/kubelet/config.yaml" --kubeconfig "$dir/kubelet.kubeconfig" --root-dir "$dir/kubelet/root" \
    --hostname-override "$node" --node-ip "$(node_ip "$node")" --v=1
  wait_for "kubelet node $node Ready" 120 node_ready "$node" "$started"
  log "$node: kubelet up, Ready"
}

up_node() { # node
  local node=$1
  mkdir -p "$(node_dir "$node")"
  ensure_node_network "$node"
  ensure_node_mount_ns "$node"
  ensure_node_cgroup_root "$node"
  ensure_node_pki "$node"
  up_containerd "$node"
  import_images "$node"
  up_kubelet "$node"
}

remove_pod_sandboxes() { # node: the kubelet is gone; remove what it left so no container process survives
  local node=$1 id
  for id in $(ctr_ "$node" tasks ls -q 2>/dev/null); do ctr_ "$node" tasks kill -a -s SIGKILL "$id" >/dev/null 2>&1 || true; done
  sleep 1
  for id in $(ctr_ "$node" tasks ls -q 2>/dev/null); do ctr_ "$node" tasks delete -f "$id" >/dev/null 2>&1 || true; done
  for id in $(ctr_ "$node" containers ls -q 2>/dev/null); do ctr_ "$node" containers delete "$id" >/dev/null 2>&1 || true; done
}

down_node() { # node
  local node=$1 dir
  dir=$(node_dir "$node")
  # The CSI node plugin (csi.sh) lives in the node's mount namespace: it goes before the namespace.
  stop "csi-node-$node"
  stop "kubelet-$node"
  if running "containerd-$node"; then remove_pod_sandboxes "$node"; fi
  stop "containerd-$node"
  pkill -TERM -f "containerd-shim-runc-v2 .*-address $(node_socket "$node")" 2>/dev/null || true
  # The mount namespace (and the pod mounts in it) goes with its last process.
  ! mountpoint -q "$NS_DIR/$node" || umount "$NS_DIR/$node"
  rm -f "$NS_DIR/$node"
  remove_node_network "$node"
  rm -rf "$dir/cni/ipam"
}
