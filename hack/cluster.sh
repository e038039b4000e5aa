#!/usr/bin/env bash
# The local test-bed cluster: a real single-node Kubernetes built from the pinned release.
#
#   hack/cluster.sh up [control-plane|full]   start what is missing, reuse what is healthy
#   hack/cluster.sh down                      stop every process this script started
#   hack/cluster.sh status                    one line per component
#
# The release is hack/versions.sh's KUBE_VERSION (the environment overrides it). $CLUSTER_DIR/version
# records the release the cluster's state belongs to: `up` on another release stops the cluster and
# starts it afresh (new etcd data and kubelet state; certificates and images are kept).
#
# Owns: certificates, kubeconfigs, configs, processes, logs under $CLUSTER_DIR (default
# .tailor/cluster), containerd state under /run/tailor, the node address on lo and the pod bridge.
# Must not: touch a process it did not start, route traffic off the machine (all addresses are in
# 198.18.0.0/15, blackholed on the host; no masquerade, no default route in pods).
set -Eeuo pipefail
# set -e would otherwise stop the script without a word: say which command failed.
trap 'rc=$?; echo "cluster: error: line $LINENO: \"$BASH_COMMAND\" exited $rc; see $LOGS/" >&2' ERR

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/versions.sh" || exit 1
CACHE=${TAILOR_CACHE:-$HOME/.cache/tailor}
BIN=$CACHE/kubernetes/v$KUBE_VERSION/bin
CLUSTER_DIR=${CLUSTER_DIR:-$repo/.tailor/cluster}
PKI=$CLUSTER_DIR/pki
LOGS=$CLUSTER_DIR/logs
PIDS=$CLUSTER_DIR/pids
RUN_DIR=/run/tailor
CONTAINERD_SOCK=$RUN_DIR/containerd/containerd.sock
# Feature gates for this profile; the agent's e2e profile sets InPlacePodVerticalScaling=false.
# From 1.35 that gate is GA and locked on: the default profile passes no gate there, a request to
# turn it off is refused, and =true is dropped (a locked gate is removed a few releases later, and
# then naming it stops the components from starting). Decision 60.
if [ "$KUBE_MINOR" -lt 35 ]; then
  FEATURE_GATES=${FEATURE_GATES:-InPlacePodVerticalScaling=true}
else
  case ",${FEATURE_GATES:-}," in
    *,InPlacePodVerticalScaling=false,*)
      echo "cluster: error: Kubernetes v$KUBE_VERSION cannot turn InPlacePodVerticalScaling off (locked on from 1.35); the node agent's profile runs on 1.34.4: KUBE_VERSION=1.34.4" >&2
      exit 1 ;;
  esac
  FEATURE_GATES=$(echo "${FEATURE_GATES:-}" | tr ',' '\n' | grep -v '^InPlacePodVerticalScaling=true$' | paste -sd, -) || true
fi
# Each component's flag, empty when the profile names no gate.
gate_flags=(); [ -z "$FEATURE_GATES" ] || gate_flags=(--feature-gates "$FEATURE_GATES")

NODE_NAME=tailor-node
NODE_IP=198.18.0.1
TESTBED_RANGE=198.18.0.0/15
POD_CIDR=198.18.16.0/20
POD_GATEWAY=198.18.16.1
SERVICE_CIDR=198.19.0.0/16
APISERVER_PORT=6443
# The test bed's image registry (Debian's docker-registry, htpasswd auth): real pulls, with pull
# secrets, for the image pre-pull e2e. Its content is cached with the images.
REGISTRY=127.0.0.1:5050
REGISTRY_USER=tailor
REGISTRY_PASSWORD=tailor-pull
ETCD_PORT=2379
ETCD_PEER_PORT=2380
export KUBECONFIG=$CLUSTER_DIR/kubeconfig

die() { echo "cluster: error: $*" >&2; exit 1; }
log() { echo "cluster: $*"; }
kubectl() { "$BIN/kubectl" --kubeconfig "$CLUSTER_DIR/kubeconfig" "$@"; }

# ---------------------------------------------------------------- process bookkeeping
# A zombie counts as gone: a stopped component whose parent shell has exited may wait for a reaper
# that never comes (PID 1 of a container), and kill -0 still succeeds on it.
alive() { kill -0 "$1" 2>/dev/null && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]; }
pid_of() {
  local f=$PIDS/$1.pid pid
  [ -f "$f" ] && pid=$(cat "$f") && alive "$pid" || return 1
  echo "$pid"
}
running() { pid_of "$1" >/dev/null; }

start() { # name, command...
  local name=$1; shift
  mkdir -p "$LOGS" "$PIDS"
  # 3>&- … 9>&-: the component must not inherit (and hold for its lifetime) this script's lock
  # (fd 8) or a caller's: flock(1) around `cluster.sh up` hands its lock down as fd 3.
  setsid "$@" >>"$LOGS/$name.log" 2>&1 < /dev/null 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
  echo $! >"$PIDS/$name.pid"
}

stop() { # name: TERM, wait up to 20 s, then KILL
  local name=$1 pid
  pid=$(pid_of "$name") || { rm -f "$PIDS/$name.pid"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.2; done
  alive "$pid" && { log "$name did not stop on TERM; killing"; kill -KILL "$pid" 2>/dev/null || true; sleep 0.5; }
  rm -f "$PIDS/$name.pid"
  log "stopped $name"
}

wait_for() { # description, seconds, command...
  local what=$1 seconds=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "$what not healthy after ${seconds}s; see $LOGS/"
    sleep 0.5
  done
}

port_free_or_ours() { # port, component
  local port=$1 name=$2 holder
  running "$name" && return 0
  holder=$(ss -Hltnp "sport = :$port" 2>/dev/null | sed -n 's/.*users:((\("[^"]*"\),pid=\([0-9]*\).*/\1 pid \2/p' | head -1)
  [ -z "$holder" ] || die "port $port (for $name) is taken by $holder: stop that process or run 'make cluster-down'"
}

# ---------------------------------------------------------------- prerequisites
require_root() {
  [ "$(id -u)" = 0 ] || die "the test bed needs root (it adds a node address, runs containerd and a kubelet): run as root, e.g. 'sudo make cluster-up'"
}

ensure_binaries() { # mode
  if [ "$1" = full ]; then bash "$here/build-k8s.sh"; else bash "$here/build-k8s.sh" etcd kube-apiserver kubectl; fi
}

ensure_packages() {
  local missing=()
  command -v openssl >/dev/null || missing+=(openssl)
  command -v ss >/dev/null || missing+=(iproute2)
  command -v curl >/dev/null || missing+=(curl)
  if [ "$1" = full ]; then
    command -v containerd >/dev/null || missing+=(containerd)
    command -v runc >/dev/null || missing+=(runc)
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

ensure_network() {
  ip -4 addr show dev lo | grep -q " $NODE_IP/" || ip addr add "$NODE_IP/32" dev lo
  # Anything in the test-bed range that no bridge or local address claims is dropped, never routed out.
  ip route show type blackhole | grep -q "^blackhole $TESTBED_RANGE" || ip route add blackhole "$TESTBED_RANGE"
}

# ---------------------------------------------------------------- certificates and kubeconfigs
issue_cert() { # name, subject, sans (comma separated, optional)
  local name=$1 subject=$2 sans=${3:-} ext
  [ -f "$PKI/$name.crt" ] && return 0
  ext=$(mktemp)
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=serverAuth,clientAuth"
    [ -n "$sans" ] && echo "subjectAltName=$sans"
  } >"$ext"
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/$name.key" 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subject" -out "$PKI/$name.csr" 2>/dev/null
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$ext" "$PKI/$name.csr"
}

write_kubeconfig() { # file, cert name
  local file=$1 cert=$2
  [ -f "$file" ] && return 0
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: tailor
  cluster:
    server: https://$NODE_IP:$APISERVER_PORT
    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")
users:
- name: $cert
  user:
    client-certificate-data: $(base64 -w0 <"$PKI/$cert.crt")
    client-key-data: $(base64 -w0 <"$PKI/$cert.key")
contexts:
- name: tailor
  context: {cluster: tailor, user: $cert, namespace: default}
current-context: tailor
EOF
  chmod 600 "$file"
}

ensure_pki() {
  mkdir -p "$PKI"
  if [ ! -f "$PKI/ca.crt" ]; then
    openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/ca.key" 2>/dev/null
    openssl req -x509 -new -key "$PKI/ca.key" -subj "/CN=tailor-testbed-ca" -days 3650 -out "$PKI/ca.crt" 2>/dev/null
  fi
  [ -f "$PKI/sa.key" ] || { openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null; openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null; }
  issue_cert apiserver "/CN=kube-apiserver" \
    "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$NODE_IP,IP:${SERVICE_CIDR%.0/16}.1"
  issue_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  issue_cert admin "/O=system:masters/CN=tailor-admin"
  issue_cert controller-manager "/CN=system:kube-controller-manager"
  issue_cert scheduler "/CN=system:kube-scheduler"
  issue_cert kubelet-client "/O=system:nodes/CN=system:node:$NODE_NAME"
  issue_cert kubelet-serving "/CN=$NODE_NAME" "DNS:$NODE_NAME,IP:$NODE_IP,IP:127.0.0.1"
  write_kubeconfig "$CLUSTER_DIR/kubeconfig" admin
  write_kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" controller-manager
  write_kubeconfig "$CLUSTER_DIR/scheduler.kubeconfig" scheduler
  write_kubeconfig "$CLUSTER_DIR/kubelet.kubeconfig" kubelet-client
}

# ---------------------------------------------------------------- control plane
apiserver_ready() { curl -sf --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "https://$NODE_IP:$APISERVER_PORT/readyz"; }
etcd_healthy() { curl -sf "http://127.0.0.1:$ETCD_PORT/health"; }

up_etcd() {
  if running etcd && etcd_healthy >/dev/null; then return 0; fi
  port_free_or_ours $ETCD_PORT etcd
  start etcd "$BIN/etcd" --name tailor --data-dir "$CLUSTER_DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "tailor=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
    --quota-backend-bytes $((2 * 1024 * 1024 * 1024)) --log-level warn
  wait_for etcd 30 etcd_healthy
  log "etcd up"
}

up_apiserver() {
  # A running server that is not ready yet (etcd just came back) gets time; starting a second one
  # would only fail to bind and leave its pid in the pid file.
  if running kube-apiserver; then wait_for "running kube-apiserver ready" 60 apiserver_ready; return 0; fi
  port_free_or_ours $APISERVER_PORT kube-apiserver
  start kube-apiserver "$BIN/kube-apiserver" \
    --advertise-address "$NODE_IP" --bind-address "$NODE_IP" --secure-port "$APISERVER_PORT" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --client-ca-file "$PKI/ca.crt" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$PKI/ca.crt" --kubelet-preferred-address-types InternalIP \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --authorization-mode Node,RBAC --allow-privileged=true \
    "${gate_flags[@]}" --profiling=false --v=1
  wait_for kube-apiserver 90 apiserver_ready
  log "kube-apiserver v$KUBE_VERSION up at https://$NODE_IP:$APISERVER_PORT"
}

up_controller_manager() {
  local ok=(curl -sfk https://127.0.0.1:10257/healthz)
  if running kube-controller-manager && "${ok[@]}" >/dev/null 2>&1; then return 0; fi
  port_free_or_ours 10257 kube-controller-manager
  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --allocate-node-cidrs=false \
    "${gate_flags[@]}" --v=1
  wait_for kube-controller-manager 60 "${ok[@]}"
  log "kube-controller-manager up"
}

up_scheduler() {
  local ok=(curl -sfk https://127.0.0.1:10259/healthz)
  if running kube-scheduler && "${ok[@]}" >/dev/null 2>&1; then return 0; fi
  port_free_or_ours 10259 kube-scheduler
  start kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig "$CLUSTER_DIR/scheduler.kubeconfig" \
    --authentication-kubeconfig "$CLUSTER_DIR/scheduler.kubeconfig" \
    --authorization-kubeconfig "$CLUSTER_DIR/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false "${gate_flags[@]}" --v=1
  wait_for kube-scheduler 60 "${ok[@]}"
  log "kube-scheduler up"
}

# ---------------------------------------------------------------- node: containerd, images, kubelet
ctr_() { ctr --address "$CONTAINERD_SOCK" --namespace k8s.io "$@"; }

ensure_cgroup_hierarchies() {
  # The kubelet's cgroupfs manager expects every v1 controller the kernel offers to be mounted.
  local c
  for c in hugetlb net_cls perf_event; do
    grep -q "^$c\s" /proc/cgroups || continue
    mountpoint -q "/sys/fs/cgroup/$c" && continue
    mkdir -p "/sys/fs/cgroup/$c" && mount -t cgroup -o "$c" cgroup "/sys/fs/cgroup/$c" || log "could not mount cgroup $c (continuing)"
  done
}

write_containerd_config() {
  mkdir -p "$CLUSTER_DIR/containerd" "$CLUSTER_DIR/cni/net.d" "$RUN_DIR/containerd"
  # The one containerd configuration, shared with the cri tier (hack/containerd.toml); the runc root
  # is containerd's default.
  sed -e "s|@ROOT@|$CLUSTER_DIR/containerd/root|" -e "s|@STATE@|$RUN_DIR/containerd/state|" \
    -e "s|@SOCKET@|$CONTAINERD_SOCK|g" -e "s|@RUNC_ROOT@|/run/containerd/runc|" \
    -e "s|@CNI_CONF_DIR@|$CLUSTER_DIR/cni/net.d|" -e "s|@REGISTRY_HOSTS@|$CLUSTER_DIR/containerd/certs.d|" \
    "$here/containerd.toml" >"$CLUSTER_DIR/containerd/config.toml"
  # The registry speaks plain HTTP on the loopback.
  mkdir -p "$CLUSTER_DIR/containerd/certs.d/$REGISTRY"
  cat >"$CLUSTER_DIR/containerd/certs.d/$REGISTRY/hosts.toml" <<EOF
server = "http://$REGISTRY"
[host."http://$REGISTRY"]
  capabilities = ["pull", "resolve", "push"]
EOF
  cat >"$CLUSTER_DIR/cni/net.d/10-tailor.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "tailor",
  "plugins": [{
    "type": "bridge", "bridge": "tailor0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$POD_GATEWAY"}]],
      "routes": [{"dst": "$TESTBED_RANGE"}],
      "dataDir": "$CLUSTER_DIR/cni/ipam"
    }
  }]
}
EOF
}

# ctr answers as soon as containerd serves, but its CRI plugin finishes starting a moment later and
# until then answers "server is not initialized yet", on which a starting kubelet exits. containerd
# logs "Start streaming server" right before it marks the CRI server initialized.
# (grep without -q: under pipefail an early exit would fail the pipeline with tail's SIGPIPE.)
cri_started_since() { tail -n +"$(($1 + 1))" "$LOGS/containerd.log" | grep 'Start streaming server' >/dev/null; }

up_containerd() {
  local before=
  [ ! -f "$CLUSTER_DIR/containerd/config.toml" ] || before=$(cat "$CLUSTER_DIR/containerd/config.toml")
  write_containerd_config
  if running containerd && ctr_ version >/dev/null 2>&1; then
    [ "$before" != "$(cat "$CLUSTER_DIR/containerd/config.toml")" ] || return 0
    # A running containerd reads its configuration only at start; pods keep running in their shims.
    log "containerd's configuration changed: restarting it"
    stop containerd
  fi
  local log_lines=0
  [ ! -f "$LOGS/containerd.log" ] || log_lines=$(wc -l <"$LOGS/containerd.log")
  start containerd containerd --config "$CLUSTER_DIR/containerd/config.toml"
  wait_for containerd 30 ctr_ version
  wait_for "containerd's CRI plugin" 30 cri_started_since "$log_lines"
  log "containerd up at $CONTAINERD_SOCK"
}

up_registry() {
  local ok=(curl -sf -o /dev/null -u "$REGISTRY_USER:$REGISTRY_PASSWORD" "http://$REGISTRY/v2/")
  if running registry && "${ok[@]}"; then return 0; fi
  port_free_or_ours "${REGISTRY##*:}" registry
  mkdir -p "$CLUSTER_DIR/registry" "$CACHE/registry"
  htpasswd -Bbn "$REGISTRY_USER" "$REGISTRY_PASSWORD" >"$CLUSTER_DIR/registry/htpasswd" 2>/dev/null
  cat >"$CLUSTER_DIR/registry/config.yml" <<EOF
version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: $CACHE/registry}
  delete: {enabled: true}
http: {addr: $REGISTRY}
auth:
  htpasswd: {realm: tailor-testbed, path: $CLUSTER_DIR/registry/htpasswd}
EOF
  start registry docker-registry serve "$CLUSTER_DIR/registry/config.yml"
  wait_for registry 30 "${ok[@]}"
  log "registry up at $REGISTRY"
}

# Images only the registry serves (never imported into the node's containerd): two of busybox and
# a 256 MiB layer of random bytes each, so a pull takes seconds. Pushed once; the registry keeps them.
push_registry_images() {
  local images=$1 tag ref
  for tag in v1 v2; do
    ref=$REGISTRY/tailor/bulky:$tag
    curl -sf -o /dev/null -u "$REGISTRY_USER:$REGISTRY_PASSWORD" -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
      "http://$REGISTRY/v2/tailor/bulky/manifests/$tag" && continue
    if [ ! -f "$images/bulky-$tag.tar" ]; then
      head -c 256M /dev/urandom >"$images/bulky-$tag.bin"
      "$images/ocibuild" -ref "$ref" -out "$images/bulky-$tag.tar" -cmd /bin/sh -file /bin/busybox=/bin/busybox \
        -link /bin/sh=busybox -link /bin/sleep=busybox -file "/bulk=$images/bulky-$tag.bin"
      rm -f "$images/bulky-$tag.bin"
    fi
    # A namespace of its own, so the node's (k8s.io) never holds these images until a pod pulls them.
    ctr --address "$CONTAINERD_SOCK" --namespace tailor-push images import "$images/bulky-$tag.tar" >/dev/null
    ctr --address "$CONTAINERD_SOCK" --namespace tailor-push images push --plain-http \
      --user "$REGISTRY_USER:$REGISTRY_PASSWORD" "$ref" >/dev/null
    ctr --address "$CONTAINERD_SOCK" --namespace tailor-push images rm "$ref" >/dev/null
    log "pushed $ref"
  done
}

ensure_images() {
  local images=$CACHE/images/v2 links=() applet
  mkdir -p "$images"
  if [ ! -f "$images/busybox-v2.tar" ]; then
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
  fi
  local ref tar
  for tar in pause busybox-v1 busybox-v2; do
    case $tar in pause) ref=tailor.local/pause:1 ;; *) ref=tailor.local/busybox:${tar#busybox-} ;; esac
    ctr_ images ls -q | grep -qx "$ref" && continue
    ctr_ images import "$images/$tar.tar" >/dev/null
    # Pinned images are never garbage-collected by the kubelet.
    ctr_ images label "$ref" io.cri-containerd.pinned=pinned >/dev/null
  done
  push_registry_images "$images"
}

write_kubelet_config() {
  mkdir -p "$CLUSTER_DIR/kubelet"
  cat >"$CLUSTER_DIR/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $PKI/kubelet-serving.crt
tlsPrivateKeyFile: $PKI/kubelet-serving.key
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
podCIDR: $POD_CIDR
maxPods: 110
serializeImagePulls: false
imageGCHighThresholdPercent: 95
imageGCLowThresholdPercent: 90
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, nodefs.inodesFree: 1%, imagefs.available: 1%}
featureGates: {$(echo "$FEATURE_GATES" | tr ',' '\n' | sed -n 's/^\(.*\)=\(.*\)$/\1: \2/p' | paste -sd, - | sed 's/,/, /g')}
EOF
}

node_ready() { # since (epoch seconds): a Ready condition left over from an earlier run does not count
  local since=$1 cond
  cond=$(kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}' 2>/dev/null) || return 1
  [ "${cond%% *}" = True ] && [ "$(date -d "${cond#* }" +%s)" -ge "$since" ]
}

up_kubelet() {
  if running kubelet && curl -sf http://127.0.0.1:10248/healthz >/dev/null 2>&1; then return 0; fi
  port_free_or_ours 10250 kubelet
  write_kubelet_config
  # The kubelet's client certificate and key in one file where a kubelet with certificate rotation
  # keeps it (/var/lib/kubelet/pki/kubelet-client-current.pem): the node agent reads image pull
  # secrets with it, as the node (decision 53); make dev's DaemonSet mounts this directory.
  mkdir -p "$RUN_DIR/kubelet/pki" && chmod 700 "$RUN_DIR/kubelet/pki"
  (umask 077 && cat "$PKI/kubelet-client.crt" "$PKI/kubelet-client.key" >"$RUN_DIR/kubelet/pki/kubelet-client-current.pem")
  local started=$(($(date +%s) - 1))
  start kubelet "$BIN/kubelet" --config "$CLUSTER_DIR/kubelet/config.yaml" \
    --kubeconfig "$CLUSTER_DIR/kubelet.kubeconfig" --root-dir "$CLUSTER_DIR/kubelet/root" \
    --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v=1
  wait_for "kubelet node $NODE_NAME Ready" 120 node_ready "$started"
  log "kubelet up; node $NODE_NAME Ready"
}

# ---------------------------------------------------------------- commands
# State that belongs to one release: etcd's data (a newer etcd's data dir is not readable by an
# older one, and the API server's storage versions differ) and the kubelet's checkpoints.
ensure_release() {
  local recorded=
  [ -f "$CLUSTER_DIR/version" ] && recorded=$(cat "$CLUSTER_DIR/version")
  [ "$recorded" = "$KUBE_VERSION" ] && return 0
  if [ -n "$recorded" ] || [ -d "$CLUSTER_DIR/etcd" ]; then
    log "the cluster's state is v${recorded:-unknown}, wanted v$KUBE_VERSION: stopping it and starting afresh"
    cmd_down
    rm -rf "$CLUSTER_DIR/etcd" "$CLUSTER_DIR/kubelet/root" "$CLUSTER_DIR/feature-gates"
  fi
  echo "$KUBE_VERSION" >"$CLUSTER_DIR/version"
}

cmd_up() {
  local mode=${1:-control-plane}
  case $mode in control-plane|full) ;; *) die "unknown MODE '$mode': use MODE=control-plane or MODE=full" ;; esac
  require_root
  mkdir -p "$CLUSTER_DIR" "$LOGS" "$PIDS"
  ensure_packages "$mode"
  ensure_binaries "$mode"
  ensure_network
  ensure_pki
  ensure_release
  # A different feature-gate profile (e.g. the agent's: InPlacePodVerticalScaling=false) restarts
  # the components that read it; pods keep running and the kubelet adopts them again.
  local running_gates=$FEATURE_GATES
  [ -f "$CLUSTER_DIR/feature-gates" ] && running_gates=$(cat "$CLUSTER_DIR/feature-gates")
  if running kube-apiserver && [ "$running_gates" != "$FEATURE_GATES" ]; then
    log "feature gates change to $FEATURE_GATES: restarting the components that read them"
    stop kubelet; stop kube-scheduler; stop kube-controller-manager; stop kube-apiserver
  fi
  echo "$FEATURE_GATES" >"$CLUSTER_DIR/feature-gates"
  up_etcd
  up_apiserver
  if [ "$mode" = full ]; then
    ensure_cgroup_hierarchies
    up_controller_manager
    up_scheduler
    up_containerd
    up_registry
    ensure_images
    up_kubelet
  fi
  echo "$mode" >"$CLUSTER_DIR/mode"
  log "ready ($mode, v$KUBE_VERSION): export KUBECONFIG=$CLUSTER_DIR/kubeconfig"
}

remove_pod_sandboxes() {
  # The kubelet is gone; remove what it left in containerd so no container process survives.
  local id
  for id in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -a -s SIGKILL "$id" >/dev/null 2>&1 || true; done
  sleep 1
  for id in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete -f "$id" >/dev/null 2>&1 || true; done
  for id in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers delete "$id" >/dev/null 2>&1 || true; done
}

cmd_down() {
  require_root
  # Processes started on top of the cluster (make dev's controller) go first.
  local extra
  for extra in "$PIDS"/tailor-*.pid; do [ -e "$extra" ] && stop "$(basename "$extra" .pid)"; done
  stop kubelet
  if running containerd; then remove_pod_sandboxes; fi
  stop containerd
  stop registry
  pkill -TERM -f "containerd-shim-runc-v2 .*-address $CONTAINERD_SOCK" 2>/dev/null || true
  stop kube-scheduler
  stop kube-controller-manager
  stop kube-apiserver
  stop etcd
  # Mounts the kubelet and containerd made for pods (tokens, shm, rootfs) and pod network namespaces.
  awk -v a="$CLUSTER_DIR/" -v b="$RUN_DIR/" '$2 ~ "^"a || $2 ~ "^"b {print $2}' /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  for ns in $(ip netns list 2>/dev/null | awk '/^cni-/ {print $1}'); do ip netns delete "$ns" 2>/dev/null || true; done
  ip link show tailor0 >/dev/null 2>&1 && ip link delete tailor0 || true
  rm -rf "$CLUSTER_DIR/cni/ipam"
  rm -f "$CLUSTER_DIR/mode"
  log "down"
}

cmd_status() {
  local c state
  [ ! -f "$CLUSTER_DIR/version" ] || echo "release                  v$(cat "$CLUSTER_DIR/version")"
  for c in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet; do
    if running "$c"; then state="running (pid $(pid_of "$c"))"; else state="stopped"; fi
    printf '%-24s %s\n' "$c" "$state"
  done
  if running kube-apiserver && apiserver_ready >/dev/null 2>&1; then
    kubectl version 2>/dev/null | sed -n 's/^Server Version: /server version: /p'
    kubectl get nodes --no-headers 2>/dev/null | sed 's/^/node: /' || true
  fi
}

# One cluster command at a time: concurrent test runs would race to start the same components.
mkdir -p "$CLUSTER_DIR"
exec 8>"$CLUSTER_DIR/.lock"
flock 8

case ${1:-} in
  up) cmd_up "${2:-${MODE:-control-plane}}" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *) echo "usage: $0 up [control-plane|full] | down | status" >&2; exit 2 ;;
esac
