# shellcheck shell=bash disable=SC2034 # sourced: its variables are read by the scripts that source it
# The test bed's shared vocabulary, sourced by hack/cluster.sh before the other hack/bed/ files:
# its binaries and addresses, on top of hack/lib/ (paths, logging, and the bookkeeping of the
# processes it starts: one pid file and one log per process under $CLUSTER_DIR). Defines functions
# and variables only. Must not: start or stop anything by itself.
LOG_PREFIX=cluster
# shellcheck source=../lib/paths.sh disable=SC2154 # repo: set by hack/cluster.sh
. "$repo/hack/lib/paths.sh"
# shellcheck source=../lib/log.sh
. "$repo/hack/lib/log.sh"
# shellcheck source=../lib/procs.sh
. "$repo/hack/lib/procs.sh"

# The control plane's binaries and kubectl are the default release's; the kubelet is KUBE_VERSION's
# (the same release, or an older one as a node-version skew; decision 62).
BIN=$CACHE/kubernetes/v$KUBE_CONTROL_PLANE_VERSION/bin
KUBELET_BIN=$CACHE/kubernetes/v$KUBE_VERSION/bin/kubelet
CONTAINERD_BIN=$CACHE/containerd/v$CONTAINERD_VERSION/bin
RUN_DIR=/run/tailor

# Every address is in 198.18.0.0/15 (RFC 2544, benchmarking), blackholed on the host: nothing the
# bed does is routed off the machine. The API server and the registry listen on the host's
# loopback at 198.18.0.1; each node has 198.18.1.<i> on the nodes' bridge (hack/bed/network.sh).
TESTBED_RANGE=198.18.0.0/15
APISERVER_IP=198.18.0.1
APISERVER_PORT=6443
SERVICE_CIDR=198.19.0.0/16
ETCD_PORT=2379
ETCD_PEER_PORT=2380
# The test bed's image registry (Debian's docker-registry, htpasswd auth): real pulls, with pull
# secrets, for the image pre-pull e2e. On the API server's address, which every node reaches.
REGISTRY=$APISERVER_IP:5050
REGISTRY_USER=tailor
REGISTRY_PASSWORD=tailor-pull
export KUBECONFIG
# kubectl's discovery cache, per bed: the default (~/.kube/cache) is keyed by the server's address,
# which every bed shares, so a bed that once served Kruise's CRDs (the peer bench) left kubectl
# resolving the short name `clone` to clonesets.apps.kruise.io on the next bed for hours.
KUBECACHEDIR=$CLUSTER_DIR/kubectl-cache
export KUBECACHEDIR

kubectl() { "$BIN/kubectl" --kubeconfig "$CLUSTER_DIR/kubeconfig" "$@"; }

port_free_or_ours() { # port, component
  local port=$1 name=$2 holder
  running "$name" && return 0
  holder=$(ss -Hltnp "sport = :$port" 2>/dev/null | sed -n 's/.*users:((\("[^"]*"\),pid=\([0-9]*\).*/\1 pid \2/p' | head -1)
  [ -z "$holder" ] || die "port $port (for $name) is taken by $holder: stop that process or run 'make cluster-down'"
}

require_root() {
  [ "$(id -u)" = 0 ] || die "the test bed needs root (it adds addresses and network namespaces, runs containerd and kubelets): run as root, e.g. 'sudo make cluster-up'"
}

ensure_packages() { # mode
  local missing=()
  command -v openssl >/dev/null || missing+=(openssl)
  command -v ss >/dev/null || missing+=(iproute2)
  command -v curl >/dev/null || missing+=(curl)
  if [ "$1" = full ]; then
    command -v runc >/dev/null || missing+=(runc)
    command -v nsenter >/dev/null || missing+=(util-linux)
    [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
    [ -x /bin/busybox ] || missing+=(busybox-static)
    command -v iptables >/dev/null || missing+=(iptables)
    command -v conntrack >/dev/null || missing+=(conntrack)
    command -v docker-registry >/dev/null || missing+=(docker-registry)
    command -v htpasswd >/dev/null || missing+=(apache2-utils)
  fi
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get: install them and retry"
  log "installing ${missing[*]}"
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; } \
    >"$CLUSTER_DIR/apt.log" 2>&1 || die "apt-get install ${missing[*]} failed; see $CLUSTER_DIR/apt.log"
}

ensure_binaries() { # mode
  # shellcheck disable=SC2154 # here (hack/) is set by hack/cluster.sh, which sources this file
  if [ "$1" = full ]; then
    KUBE_VERSION=$KUBE_CONTROL_PLANE_VERSION bash "$here/build-k8s.sh" etcd kube-apiserver kube-controller-manager kube-scheduler kubectl
    bash "$here/build-k8s.sh" kubelet
    bash "$here/build-containerd.sh"
    bash "$here/build-storage.sh"
  else
    KUBE_VERSION=$KUBE_CONTROL_PLANE_VERSION bash "$here/build-k8s.sh" etcd kube-apiserver kubectl
  fi
}
