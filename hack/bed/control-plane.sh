# shellcheck shell=bash # sourced, never run
# The test bed's control plane: its certificates and kubeconfigs, etcd, kube-apiserver,
# kube-controller-manager and kube-scheduler, each a process on the host listening on the host's
# loopback (the API server on $APISERVER_IP, which every node reaches). Sourced by hack/cluster.sh.
# Owns: $PKI, the kubeconfigs, etcd's data, these four processes.
# Must not: issue a node's certificates (hack/bed/node.sh) or start anything of a node.

# Feature gates for this profile (FEATURE_GATES: the kubelet's, KUBE_VERSION's); the agent's e2e
# profile sets InPlacePodVerticalScaling=false. From 1.35 that gate is GA and locked on: the default
# profile passes no gate there, a request to turn it off is refused, and =true is dropped (a locked
# gate is removed a few releases later, and then naming it stops the components from starting).
# Decision 60.
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
# The control plane's gates: the same profile, less InPlacePodVerticalScaling on a control plane of
# 1.35+ (locked on there). Whether pods resize is then the kubelet's gate alone: a 1.34 kubelet with
# it off reports no container resources, so Tailor sends its resizes to the node agent (decision 62).
CONTROL_PLANE_GATES=$FEATURE_GATES
if [ "$KUBE_CONTROL_PLANE_MINOR" -ge 35 ]; then
  CONTROL_PLANE_GATES=$(echo "$FEATURE_GATES" | tr ',' '\n' | grep -v '^InPlacePodVerticalScaling=' | paste -sd, -) || true
fi
# Each control-plane component's flag, empty when the profile names no gate.
gate_flags=(); [ -z "$CONTROL_PLANE_GATES" ] || gate_flags=(--feature-gates "$CONTROL_PLANE_GATES")

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
    server: https://$APISERVER_IP:$APISERVER_PORT
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
    "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$APISERVER_IP,IP:${SERVICE_CIDR%.0/16}.1"
  issue_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  issue_cert admin "/O=system:masters/CN=tailor-admin"
  issue_cert controller-manager "/CN=system:kube-controller-manager"
  issue_cert scheduler "/CN=system:kube-scheduler"
  # The first node's identity is issued with the control plane's: the integration tier acts as that
  # node (the Node authorizer's view) with no kubelet running (hack/bed/node.sh issues the rest).
  issue_cert kubelet-client-tailor-node "/O=system:nodes/CN=system:node:tailor-node"
  write_kubeconfig "$CLUSTER_DIR/kubeconfig" admin
  write_kubeconfig "$CLUSTER_DIR/controller-manager.kubeconfig" controller-manager
  write_kubeconfig "$CLUSTER_DIR/scheduler.kubeconfig" scheduler
}

apiserver_ready() { curl -sf --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "https://$APISERVER_IP:$APISERVER_PORT/readyz"; }
etcd_healthy() { curl -sf "http://127.0.0.1:$ETCD_PORT/health"; }

up_etcd() {
  if running etcd && etcd_healthy >/dev/null; then return 0; fi
  port_free_or_ours "$ETCD_PORT" etcd
  start etcd "$BIN/etcd" --name tailor --data-dir "$CLUSTER_DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "tailor=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
    --quota-backend-bytes $((2 * 1024 * 1024 * 1024)) --log-level warn
  wait_for etcd 30 etcd_healthy
  log "etcd up"
}

# Tailor's identities only, at Metadata level (who, which verb on what, the answer): the e2e
# tier's last file checks every request they sent against the chart's RBAC (decision 80). They are
# tailor-system's ServiceAccounts, whether the chart installed them or the cluster tiers' controllers
# run as them (test/support/cluster/controller-identity.ts).
# And the kubelets' pod lists and watches: the fault tier times when each kubelet's pod watch came
# back after an API server restart (test/fault/rollout-faults.test.ts, scenario c).
write_audit_policy() {
  cat >"$CLUSTER_DIR/audit-policy.yaml" <<'POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts:tailor-system"]
  - level: Metadata
    userGroups: ["system:nodes"]
    verbs: ["list", "watch"]
    resources: [{group: "", resources: ["pods"]}]
  - level: None
POLICY
}

up_apiserver() {
  # A running server that is not ready yet (etcd just came back) gets time; starting a second one
  # would only fail to bind and leave its pid in the pid file.
  if running kube-apiserver; then wait_for "running kube-apiserver ready" 60 apiserver_ready; return 0; fi
  port_free_or_ours "$APISERVER_PORT" kube-apiserver
  write_audit_policy
  start kube-apiserver "$BIN/kube-apiserver" \
    --advertise-address "$APISERVER_IP" --bind-address "$APISERVER_IP" --secure-port "$APISERVER_PORT" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --client-ca-file "$PKI/ca.crt" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$PKI/ca.crt" --kubelet-preferred-address-types InternalIP \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --authorization-mode Node,RBAC --allow-privileged=true \
    --enable-admission-plugins PodNodeSelector \
    --audit-policy-file "$CLUSTER_DIR/audit-policy.yaml" --audit-log-path "$LOGS/audit.log" \
    --audit-log-format json --audit-log-maxsize 200 --audit-log-maxbackup 5 \
    "${gate_flags[@]}" --profiling=false --v=1
  wait_for kube-apiserver 90 apiserver_ready
  log "kube-apiserver v$KUBE_CONTROL_PLANE_VERSION up at https://$APISERVER_IP:$APISERVER_PORT"
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
    --node-monitor-grace-period 20s \
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

