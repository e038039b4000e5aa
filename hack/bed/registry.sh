# shellcheck shell=bash # sourced, never run
# The test bed's image registry: Debian's docker-registry with htpasswd auth on $REGISTRY (the API
# server's address, which every node reaches), serving images no node holds until a pod pulls them
# (the pre-pull e2e). Its content is cached with the images. Sourced by hack/cluster.sh.
# Owns: the registry process, its config and htpasswd, the images it serves.
# Must not: import anything into a node's runtime (a pull is what the tests measure).

up_registry() {
  local ok=(curl -sf -o /dev/null -u "$REGISTRY_USER:$REGISTRY_PASSWORD" "http://$REGISTRY/v2/")
  if running registry && "${ok[@]}"; then return 0; fi
  port_free_or_ours "${REGISTRY##*:}" registry
  mkdir -p "$CLUSTER_DIR/registry" "$CACHE/registry"
  htpasswd -Bbn "$REGISTRY_USER" "$REGISTRY_PASSWORD" >"$CLUSTER_DIR/registry/htpasswd" 2>/dev/null
  cat >"$CLUSTER_DIR/registry/config.yml" <<EOT
version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: $CACHE/registry}
  delete: {enabled: true}
http: {addr: $REGISTRY}
auth:
  htpasswd: {realm: tailor-testbed, path: $CLUSTER_DIR/registry/htpasswd}
EOT
  start registry docker-registry serve "$CLUSTER_DIR/registry/config.yml"
  wait_for registry 30 "${ok[@]}"
  log "registry up at $REGISTRY"
}

# Two tags of busybox with a 256 MiB layer of random bytes each, so a pull takes seconds. Pushed
# once through `node`'s containerd, in a namespace of its own (never the node's k8s.io).
push_registry_images() { # node
  local node=$1 images=$CACHE/images/v2 tag ref
  local push=("$CONTAINERD_BIN/ctr" --address "$(node_socket "$node")" --namespace tailor-push)
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
    "${push[@]}" images import "$images/bulky-$tag.tar" >/dev/null
    "${push[@]}" images push --plain-http --user "$REGISTRY_USER:$REGISTRY_PASSWORD" "$ref" >/dev/null
    "${push[@]}" images rm "$ref" >/dev/null
    log "pushed $ref"
  done
}
