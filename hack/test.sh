#!/usr/bin/env bash
# Runs the test tiers in order and records, under .tailor/test-results/, what each step did:
# <step>.rc (its exit code) and <step>.seconds for every step that ran, <step>.json (Jest's
# results) for Jest tiers, and `planned` (the steps this run meant to run), so
# hack/test-summary.mjs can count a tier that never produced results (its cluster failed to start,
# Jest crashed, the run stopped before it) as failed instead of leaving it out.
#   hack/test.sh all | lint | typecheck | unit | argocd | chart | integration | cri | e2e | fault
# (argocd: config/argocd's Argo CD health check and actions in Argo CD's Lua engine, test/argocd/run.sh;
# Go, no cluster, its counts written as a Jest tier's. chart: charts/tailor offline, helm lint,
# kubeconform and values -> manifests, NOTES.txt, the packaged files and values.yaml's keys against
# values.schema.json's, a Jest tier whose global setup builds helm; decision 24.)
# The Kubernetes release is hack/versions.sh's (decision 60):
#   - `all` with no KUBE_VERSION in the environment is the matrix: every tier on the default
#     release, then the e2e tier on each other listed release (and there, on a release
#     whose kubelet can turn InPlacePodVerticalScaling off when the default cannot, the fault
#     tier's gate-off scenarios, which the default release cannot run);
#   - anything else runs on KUBE_VERSION (the environment's, else the default) alone.
# A step on a release other than the default is named <tier>@<release> (e2e@1.34.4.json); the
# `kubernetes` step builds (or finds cached) a release's binaries before its first cluster tier: the
# default release's control plane, kubelet and kubectl; another release's kubelet only, which runs
# under the default release's control plane (a node-version skew; decision 62).
# Cluster tiers start the test-bed cluster they need through their Jest global setup
# (test/support/cluster/cluster-setup.js) and stop it again if they started it; a cluster on another
# release is replaced (hack/cluster.sh), so the releases never share etcd data or kubelet state.
# They run the built CLI (dist/) as real processes, so the build runs once before the first of
# them, and a failed build stops the run: no cluster tier ever tests a stale dist/.
# The bed runs three nodes on the default release (NODES, hack/cluster.sh) and one on the others,
# whose steps prove the node agent's own resize path, a per-node matter (decision 61).
# Ends with the plain line "N passed, N failed[, N skipped]" and exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
results=.tailor/test-results
mkdir -p "$results"
chosen=${KUBE_VERSION:-}
# shellcheck disable=SC2016 # expanded by the inner shell
default=$(env -u KUBE_VERSION bash -c '. hack/versions.sh && echo "$KUBE_VERSION"') || exit 1
. hack/versions.sh || exit 1 # KUBE_VERSIONS; refuses an unlisted KUBE_VERSION
gate_off_runs() { [ "$(echo "$1" | cut -d. -f2)" -lt 35 ]; } # as test/support/cluster/kube-version.js
nodes_for() { if [ "$1" = "$default" ]; then echo "${NODES:-3}"; else echo 1; fi; }
# The bed's containerd and ctr, and the cri tier's private containerd with its runc shim.
export PATH=${TAILOR_CACHE:-$HOME/.cache/tailor}/containerd/v$CONTAINERD_VERSION/bin:$PATH

step_name() { # tier, release: lint, typecheck, unit, argocd, chart and build do not depend on the release
  case $1 in lint | typecheck | unit | argocd | chart | build) echo "$1" ;; *) if [ "$2" = "$default" ]; then echo "$1"; else echo "$1@$2"; fi ;; esac
}
release_of() { case $1 in *@*) echo "${1#*@}" ;; *) echo "$default" ;; esac; }
tier_of() { echo "${1%@*}"; }

planned=()
gate_off_only=() # fault steps that run only the gate-off scenarios
plan_tiers() { # release, tiers...
  local release=$1 tier built=false; shift
  for tier in "$@"; do
    case $tier in
      lint | typecheck | unit | argocd | chart) ;;
      *)
        if [[ ! " ${planned[*]-} " == *" build "* ]]; then planned+=(build); fi
        # hack/cluster.sh would build a missing release too, inside a tier's global setup; as its
        # own step the build is timed, and a failed one skips that release's tiers.
        $built || { planned+=("$(step_name kubernetes "$release")"); built=true; } ;;
    esac
    planned+=("$(step_name "$tier" "$release")")
  done
}
if [ "${1:-all}" = all ]; then
  rm -f "$results"/*.json "$results"/*.rc "$results"/*.seconds
  if [ -n "$chosen" ]; then
    plan_tiers "$chosen" lint typecheck unit argocd integration cri e2e chart fault
  else
    plan_tiers "$default" lint typecheck unit argocd integration cri e2e chart fault
    for release in $KUBE_VERSIONS; do
      [ "$release" = "$default" ] && continue
      extra=()
      if gate_off_runs "$release" && ! gate_off_runs "$default"; then
        extra=(fault)
        gate_off_only+=("$(step_name fault "$release")")
      fi
      # No cri tier here: it runs its own containerd (the same on every release) and no kubelet
      # (decision 62), so on another release it would only repeat the default release's.
      plan_tiers "$release" e2e "${extra[@]}"
    done
  fi
else
  plan_tiers "$KUBE_VERSION" "$@"
fi
printf '%s\n' "${planned[@]}" >"$results/planned"
printf '%s\n' "${gate_off_only[@]}" >"$results/gate-off-only"
echo "$default" >"$results/default-release"
for step in "${planned[@]}"; do rm -f "$results/$step.json" "$results/$step.rc" "$results/$step.seconds"; done

# One Jest tier on one release; its results go to `out` (Jest's --json). --forceExit: a handle a
# failed test left open must not hold the run until CI's limit (decision 82); Jest still names it.
jest_tier() { # step, release, out, jest options...
  local step=$1 release=$2 out=$3 tier only=0; shift 3
  tier=$(tier_of "$step")
  [[ " ${gate_off_only[*]-} " == *" $step "* ]] && only=1
  # The e2e tier on the default release runs every file, so the audit log since the step began
  # holds the whole tier's requests: test/e2e/rbac-audit.test.ts may then check that every granted
  # verb was used (and reads nothing of earlier tiers or runs).
  local complete=0
  [ "$step" = e2e ] && complete=1
  KUBE_VERSION=$release NODES=$(nodes_for "$release") TAILOR_GATE_OFF_ONLY=$only \
    TAILOR_RBAC_AUDIT_COMPLETE=$complete TAILOR_RBAC_AUDIT_SINCE=${step_began:-} \
    NODE_OPTIONS=--experimental-vm-modules \
    npx jest --selectProjects "$tier" --json --outputFile "$out" --forceExit "$@"
}

# E2E_WORKERS (default 3; 1 runs every file alone) > 1: the e2e files that share nothing
# node-level run side by side, then the others
# alone (jest.config.js aloneE2e; decision 62); the two passes' results are merged into one.
e2e_in_two_passes() { # step, release
  local step=$1 release=$2 shared alone
  mkdir -p "$results/parts"
  TAILOR_E2E_GROUP=shared jest_tier "$step" "$release" "$results/parts/$step.shared.json" --maxWorkers="$E2E_WORKERS"
  shared=$?
  TAILOR_E2E_GROUP=alone jest_tier "$step" "$release" "$results/parts/$step.alone.json" --runInBand
  alone=$?
  node hack/merge-jest-results.mjs "$results/$step.json" "$results/parts/$step.shared.json" "$results/parts/$step.alone.json" || return 1
  [ "$shared" = 0 ] && [ "$alone" = 0 ]
}

# On a cold cache, the parts the tiers need are built in the background from the start, at the
# lowest CPU priority, in the order the steps need them: the default release (kubernetes,
# integration), containerd and the storage provisioner (the first full bed), Kruise Rollout and the
# CSI parts (one e2e file each waits on them, not the bed), the chart tools (the e2e tier's helm and
# dev files, run last in it, and the chart tier, run after it), the other releases' kubelets. They
# take the cores lint and typecheck leave idle, and the time the cluster tiers spend waiting on the
# API server; the step that needs a part waits for it on the build's lock (each build script holds
# one). Warm, each build finds its part cached at once.
# The chart tier runs after the e2e tier: its tools' build (5 min cold) would otherwise sit on the
# way to the first cluster tier, which waits on the release's (10 min). Decision 90.
prebuild_pid=
prebuild_parts() {
  local others=() step
  for step in "${planned[@]}"; do
    case $step in kubernetes@*) others+=("${step#kubernetes@}") ;; esac
  done
  {
    KUBE_VERSION=$default nice -n 19 bash hack/build-k8s.sh
    nice -n 19 bash hack/build-containerd.sh
    nice -n 19 bash hack/build-storage.sh
    nice -n 19 bash hack/build-kruise-rollout.sh
    nice -n 19 bash hack/build-csi.sh
    nice -n 19 bash hack/build-chart-tools.sh
    for release in "${others[@]}"; do KUBE_VERSION=$release nice -n 19 bash hack/build-k8s.sh; done
  } >"$results/prebuild.log" 2>&1 &
  prebuild_pid=$!
}

E2E_WORKERS=${E2E_WORKERS:-3} # decision 62's second and fifth amendments
rc=0
[[ " ${planned[*]} " == *" kubernetes "* ]] && prebuild_parts
unbuilt=() # releases whose binaries failed to build: their tiers are not run
for step in "${planned[@]}"; do
  release=$(release_of "$step")
  tier=$(tier_of "$step")
  if [[ " ${unbuilt[*]-} " == *" $release "* ]]; then
    echo "=== $step: not run (Kubernetes v$release did not build)" >&2
    continue
  fi
  case $tier in lint | typecheck | unit | argocd | chart | build) echo "=== $step" ;; *) echo "=== $step (Kubernetes v$release)" ;; esac
  started=$SECONDS
  step_began=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
  case $tier in
    lint) make --no-print-directory lint; code=$? ;;
    typecheck) npx tsc --noEmit -p tsconfig.json; code=$? ;;
    build) npx tsc -p tsconfig.build.json; code=$? ;;
    kubernetes)
      # Another release's kubelet runs under the default release's control plane: both are this step's.
      { [ "$release" = "$default" ] || KUBE_VERSION=$default bash hack/build-k8s.sh; } &&
        KUBE_VERSION=$release bash hack/build-k8s.sh
      code=$? ;;
    argocd) bash test/argocd/run.sh "$results/$step.json"; code=$? ;;
    e2e)
      if [ "$E2E_WORKERS" -gt 1 ]; then e2e_in_two_passes "$step" "$release"; else jest_tier "$step" "$release" "$results/$step.json" --runInBand; fi
      code=$? ;;
    unit) jest_tier "$step" "$release" "$results/$step.json"; code=$? ;;
    *) jest_tier "$step" "$release" "$results/$step.json" --runInBand; code=$? ;; # cluster tiers share one node
  esac
  echo "$code" >"$results/$step.rc"
  echo $((SECONDS - started)) >"$results/$step.seconds"
  [ "$code" = 0 ] || rc=1
  if [ "$tier" = kubernetes ] && [ "$code" != 0 ]; then unbuilt+=("$release"); fi
  if [ "$step" = build ] && [ "$code" != 0 ]; then
    echo "=== build failed: the cluster tiers are not run (they would test a stale dist/)" >&2
    break
  fi
done
# A failed background build fails nothing by itself: the step that needs the part builds it again
# in the foreground and says why it failed. Never leave it running past the run.
[ -z "$prebuild_pid" ] || wait "$prebuild_pid" || true
node hack/test-summary.mjs "$results" || rc=1
exit $rc
