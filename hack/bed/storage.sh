# shellcheck shell=bash # sourced, never run
# The test bed's storage, as clusters have it: a default StorageClass "local-path" whose claims
# bind per node when their pod is scheduled (WaitForFirstConsumer) and get a directory on that
# node, made and removed by local-path-provisioner (hack/build-storage.sh; what kind ships) through
# a helper pod on the node. The provisioner runs on the host as a bed process with the admin
# kubeconfig. Sourced by hack/cluster.sh.
# Owns: the provisioner process, the local-path-storage namespace and its objects, the StorageClass,
# each node's volumes under $CLUSTER_DIR/nodes/<node>/volumes.
# Must not: bind or delete a claim itself (the provisioner and the controller-manager do).

STORAGE_NAMESPACE=local-path-storage
PROVISIONER_BIN=$CACHE/local-path-provisioner/v$LOCAL_PATH_PROVISIONER_VERSION/bin/local-path-provisioner

storage_manifests() { # nodes...
  local node paths=() json
  for node in "$@"; do paths+=("{\"node\": \"$node\", \"paths\": [\"$(node_dir "$node")/volumes\"]}"); done
  json=$(IFS=,; echo "${paths[*]}")
  cat <<EOT
apiVersion: v1
kind: Namespace
metadata: {name: $STORAGE_NAMESPACE}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: local-path-provisioner-service-account, namespace: $STORAGE_NAMESPACE}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-path
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
---
apiVersion: v1
kind: ConfigMap
metadata: {name: local-path-config, namespace: $STORAGE_NAMESPACE}
data:
  config.json: |-
    {"nodePathMap": [$json]}
  setup: |-
    #!/bin/sh
    set -eu
    mkdir -m 0777 -p "\$VOL_DIR"
  teardown: |-
    #!/bin/sh
    set -eu
    rm -rf "\$VOL_DIR"
  helperPod.yaml: |-
    apiVersion: v1
    kind: Pod
    metadata: {name: helper-pod}
    spec:
      priorityClassName: system-node-critical
      tolerations: [{key: node.kubernetes.io/disk-pressure, operator: Exists, effect: NoSchedule}]
      containers:
      - {name: helper-pod, image: tailor.local/busybox:v1, imagePullPolicy: Never}
EOT
}

up_storage() { # nodes...
  local node
  for node in "$@"; do mkdir -p "$(node_dir "$node")/volumes"; done
  storage_manifests "$@" | kubectl apply -f - >/dev/null
  # A changed node list is read at the provisioner's next start.
  local digest
  digest=$(storage_manifests "$@" | sha256sum | cut -c1-12)
  if running local-path-provisioner && [ "$(cat "$CLUSTER_DIR/storage.digest" 2>/dev/null)" = "$digest" ]; then return 0; fi
  stop local-path-provisioner
  kubectl -n "$STORAGE_NAMESPACE" get configmap local-path-config -o jsonpath='{.data.config\.json}' >"$CLUSTER_DIR/storage-config.json"
  start local-path-provisioner "$PROVISIONER_BIN" --debug start --kubeconfig "$CLUSTER_DIR/kubeconfig" \
    --namespace "$STORAGE_NAMESPACE" --config "$CLUSTER_DIR/storage-config.json" \
    --service-account-name local-path-provisioner-service-account --helper-image tailor.local/busybox:v1
  echo "$digest" >"$CLUSTER_DIR/storage.digest"
  wait_for local-path-provisioner 30 grep -q 'Starting provisioner controller\|Started provisioner controller' "$LOGS/local-path-provisioner.log"
  log "storage: default StorageClass local-path (local-path-provisioner v$LOCAL_PATH_PROVISIONER_VERSION)"
}
