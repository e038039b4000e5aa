# shellcheck shell=bash # sourced, never run
# The test bed's network: the API server's address on the host's loopback, and per node a network
# namespace (named as the node) joined to the host by a veth on the bridge tailor-nodes, with the
# node's address 198.18.1.<i>, and a route on the host to the node's pod CIDR through it, so pods
# on different nodes reach each other and the API server. Sourced by hack/cluster.sh.
# Owns: the loopback address, the blackhole route, the bridge, the namespaces, the veths and routes.
# Must not: route anything off the machine: every address is in $TESTBED_RANGE, which is
# blackholed on the host; no masquerade, no default route in a node or a pod.

NODES_BRIDGE=tailor-nodes
NODES_GATEWAY=198.18.1.254

node_index() { case $1 in tailor-node) echo 1 ;; tailor-node-*) echo "${1#tailor-node-}" ;; esac; }
node_ip() { echo "198.18.1.$(node_index "$1")"; }
# A /22 per node from 198.18.16.0: 1,022 pod addresses, far above the kubelet's maxPods.
node_pod_cidr() { echo "198.18.$((16 + 4 * ($(node_index "$1") - 1))).0/22"; }
node_pod_gateway() { local c; c=$(node_pod_cidr "$1"); echo "${c%.0/22}.1"; }
in_node_netns() { local node=$1; shift; nsenter --net="/run/netns/$node" -- "$@"; }

ensure_host_network() {
  ip -4 addr show dev lo | grep -q " $APISERVER_IP/" || ip addr add "$APISERVER_IP/32" dev lo
  # Anything in the test-bed range that no bridge or local address claims is dropped, never routed out.
  ip route show type blackhole | grep -q "^blackhole $TESTBED_RANGE" || ip route add blackhole "$TESTBED_RANGE"
  if ! ip link show "$NODES_BRIDGE" >/dev/null 2>&1; then
    ip link add "$NODES_BRIDGE" type bridge
    ip addr add "$NODES_GATEWAY/24" dev "$NODES_BRIDGE"
  fi
  ip link set "$NODES_BRIDGE" up
  # A pod's packet to another node's pod goes node → host bridge → the other node: the host
  # forwards it. It was found off on this machine mid-round (cause not found), and every cross-node
  # check failed; the blackhole above keeps the test-bed range from being forwarded anywhere else.
  [ "$(cat /proc/sys/net/ipv4/ip_forward)" = 1 ] || sysctl -qw net.ipv4.ip_forward=1
}

ensure_node_network() { # node
  local node=$1 i veth ip
  i=$(node_index "$node"); veth=tailor-n$i; ip=$(node_ip "$node")
  [ -e "/run/netns/$node" ] || ip netns add "$node"
  if ! ip link show "$veth" >/dev/null 2>&1; then
    ip link add "$veth" type veth peer name eth0 netns "$node"
    ip link set "$veth" master "$NODES_BRIDGE" up
  fi
  in_node_netns "$node" ip link set lo up
  # (ip names the veth's peer namespace, which it cannot from inside the node: that warning is noise)
  in_node_netns "$node" ip -4 addr show dev eth0 2>/dev/null | grep -q " $ip/" || in_node_netns "$node" ip addr add "$ip/24" dev eth0
  in_node_netns "$node" ip link set eth0 up
  # The node forwards between its pods' bridge and the host; the rest of the range is the host's.
  in_node_netns "$node" sysctl -qw net.ipv4.ip_forward=1
  in_node_netns "$node" ip route replace "$TESTBED_RANGE" via "$NODES_GATEWAY"
  ip route replace "$(node_pod_cidr "$node")" via "$ip"
}

remove_node_network() { # node
  local node=$1
  ip route del "$(node_pod_cidr "$node")" 2>/dev/null || true
  ip link del "tailor-n$(node_index "$node")" 2>/dev/null || true
  [ ! -e "/run/netns/$node" ] || ip netns delete "$node"
}

remove_host_network() {
  ! ip link show "$NODES_BRIDGE" >/dev/null 2>&1 || ip link delete "$NODES_BRIDGE"
}
