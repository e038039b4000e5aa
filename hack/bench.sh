#!/usr/bin/env bash
# `make bench`: builds Tailor (dist/, for benchmarks that run the controller as its own process)
# and src/ + bench/ into .tailor/bench-dist (tsconfig.bench.json), then runs every
# bench/*.bench.ts with node in this order, each printing its figures against the docs/architecture.md §7 Performance targets /
# issue 16 goals ("met" / "MISSED"):
#   runtime            no cluster (a stand-in API server in a child process)
#   list-page          no cluster (an in-process stand-in client): the event loop held by a list page
#   rollout, resize-*, stateful  the full test bed (real kubelet): brought up here if it is not running
#   peer, scale, fleet the test bed's API server plus simulated nodes (hack/kwok/kwok.sh up ... down;
#                      50 nodes, so the fleet bench's 50,000 pods sit at 1,000 a node, as on real nodes);
#                      peer and fleet also run OpenKruise's kruise-manager, built first by hack/build-kruise.sh
#                      (its log in .tailor/bench/build-kruise.log; a failed build leaves the peer
#                      column "unavailable", it does not stop the bench)
# The kwok benches run last: resize-backends restarts the control plane to switch feature gates,
# which kwok must not see. BENCH=scale (or a space-separated list of names) runs only those.
# A benchmark that misses a goal still prints; one that crashes makes this script exit non-zero
# after the others have run.
# Owns: the kwok processes and nodes it starts (stopped and removed on exit, even on failure), and
# the test bed if it had to start it (stopped again on exit). Must not: stop a cluster someone else
# started. On a shared machine run it under the cluster lock: flock /tmp/tailor-cluster.lock make bench
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=.tailor/bench-dist
cluster_dir=.tailor/cluster
t_start=$SECONDS

npx tsc -p tsconfig.build.json || exit 1
rm -rf "$out"
npx tsc -p tsconfig.bench.json || exit 1

shopt -s nullglob
all=(bench/*.bench.ts)
[ ${#all[@]} -gt 0 ] || { echo "bench: no bench/*.bench.ts"; exit 1; }
name_of() { local b=${1#bench/}; echo "${b%.bench.ts}"; }
wanted() { [ -z "${BENCH:-}" ] || [[ " $BENCH " == *" $(name_of "$1") "* ]]; }
needs() { # bench file -> none | full | kwok
  case $(name_of "$1") in
    runtime | list-page) echo none ;;
    scale | peer | fleet) echo kwok ;;
    *) echo full ;;
  esac
}

# grep without -q: under pipefail, -q stops reading early and the writer's SIGPIPE fails the pipeline.
cluster_running() { [ -f "$cluster_dir/mode" ] && bash hack/cluster.sh status 2>/dev/null | grep '^kube-apiserver .*running' >/dev/null; }
started_cluster=0
kwok_up=0
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  if [ "$kwok_up" = 1 ]; then bash hack/kwok/kwok.sh down; fi
  if [ "$started_cluster" = 1 ] && bash hack/cluster.sh down >/dev/null; then echo "bench: stopped the test bed it started"; fi
}
trap cleanup EXIT

ensure_full() {
  # A cluster left on another release (resize-backends runs on the oldest) is started afresh.
  [ "$(cat "$cluster_dir/mode" 2>/dev/null)" = full ] && [ "$(cat "$cluster_dir/version" 2>/dev/null)" = "$(. hack/versions.sh && echo "$KUBE_VERSION")" ] &&
    cluster_running && return 0
  cluster_running || started_cluster=1
  echo "bench: bringing the test bed up (MODE=full)"
  bash hack/cluster.sh up full >/dev/null || { echo "bench: cluster-up failed"; return 1; }
}
ensure_kwok() {
  if ! cluster_running; then
    started_cluster=1
    echo "bench: bringing the test bed up (MODE=control-plane)"
    bash hack/cluster.sh up control-plane >/dev/null || { echo "bench: cluster-up failed"; return 1; }
  fi
  [ $kwok_up = 1 ] && return 0
  kwok_up=1
  bash hack/kwok/kwok.sh up "${BENCH_KWOK_NODES:-50}" || return 1
  # The API server taints every new node node.kubernetes.io/not-ready:NoSchedule, and only
  # kube-controller-manager (full mode) lifts it once the node is Ready: on a control-plane-only
  # test bed no pod would ever schedule onto the simulated nodes.
  "$(. hack/versions.sh && echo "${TAILOR_CACHE:-$HOME/.cache/tailor}/kubernetes/v$KUBE_CONTROL_PLANE_VERSION/bin/kubectl")" \
    --kubeconfig "$cluster_dir/kubeconfig" taint nodes -l type=kwok node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
}

# The peer bench's kruise-manager: cached after the first build (long: a Go module on 2 cores).
build_kruise() {
  mkdir -p .tailor/bench
  echo "bench: hack/build-kruise.sh (log: .tailor/bench/build-kruise.log)"
  bash hack/build-kruise.sh >.tailor/bench/build-kruise.log 2>&1 && return 0
  echo "bench: hack/build-kruise.sh failed; the peer column will be unavailable:"
  tail -n 5 .tailor/bench/build-kruise.log
}

# resize-backends turns the kubelet's resize gate off for the agent's half, which only a kubelet
# before 1.35 allows: it runs on the oldest release of the matrix (the cluster restarts on it).
oldest_release() { (. hack/versions.sh && echo "${KUBE_VERSIONS##* }"); }

run() { # bench file
  # shellcheck disable=SC2031 # versions.sh sets KUBE_VERSION only in the subshells above
  local ts=$1 js="$out/${1%.ts}.js" t0=$SECONDS release=${KUBE_VERSION:-}
  [ "$(name_of "$ts")" = resize-backends ] && release=$(oldest_release)
  echo "=== $ts${release:+ (Kubernetes $release)}"
  # --expose-gc: memory benchmarks collect garbage before reading RSS.
  KUBE_VERSION=$release node --expose-gc "$js" || { echo "bench: $ts failed (exit $?)"; rc=1; }
  echo "--- $ts: $((SECONDS - t0)) s"
}

rc=0
for need in none full kwok; do
  for ts in "${all[@]}"; do
    { [ "$(needs "$ts")" = "$need" ] && wanted "$ts"; } || continue
    # Before the cluster is needed: a first build is long and must not hold the test bed idle.
    case $(name_of "$ts") in peer | fleet) build_kruise ;; esac
    case $need in
      full) ensure_full || { echo "bench: $ts skipped: no full test bed"; rc=1; continue; } ;;
      kwok) ensure_kwok || { echo "bench: $ts skipped: no simulated nodes"; rc=1; continue; } ;;
    esac
    run "$ts"
  done
done
echo "bench: done in $((SECONDS - t_start)) s"
exit $rc
