# shellcheck shell=bash disable=SC2034,SC2317 # sourced: its variables are read by the scripts that source it, and it returns when sourced, exits when run
# The one place the test bed's pinned versions live. Sourced by hack/*.sh; read by
# test/support/cluster/kube-version.js for Jest and the tests (keep the KUBE_ lines in this shape).
#
# The Kubernetes release the test bed runs. The environment overrides it for one command
# (`KUBE_VERSION=1.34.4 make dev`); a version that is not listed below is refused.
KUBE_VERSION=${KUBE_VERSION:-1.37.2}
# The matrix `make test` runs: every tier on the default above, then the cri and e2e tiers on each
# of the others (hack/test.sh; decision 60). 1.34.4 is the oldest, and the newest whose kubelet can still
# turn InPlacePodVerticalScaling off (locked on from 1.35): the node agent's profile runs on it.
KUBE_VERSIONS="1.37.2 1.34.4"
# kwok (simulated nodes for the scale benchmark), built from its Go module by hack/build-kwok.sh.
KWOK_VERSION=0.8.0
# OpenKruise's kruise-manager (the peer in the scale bench), built from its Go module by
# hack/build-kruise.sh. v1.9.1: the release issue 35's first figures were taken with (the module proxy
# serves it since 2026-11-25; decision 31).
KRUISE_VERSION=1.9.1
# OpenKruise Rollout, the canary driver the e2e tier runs against Tailor's workloads unmodified
# (issue 44), built from its Go module by hack/build-kruise-rollout.sh.
KRUISE_ROLLOUT_VERSION=0.6.2
# Helm (the chart's lint, template and the bed's install) and kubeconform (rendered manifests
# against each release's OpenAPI), built from their Go modules by hack/build-chart-tools.sh. Helm v4.3.1
# is the newest release the module proxy serves here.
HELM_VERSION=4.3.1
KUBECONFORM_VERSION=0.8.0
# containerd, the bed's container runtime (every node's), built from its Go module by
# hack/build-containerd.sh; runc stays Debian's. Decision 61.
CONTAINERD_VERSION=2.4.2
# The bed's dynamic volume provisioner (node-local volumes, WaitForFirstConsumer), as kind ships it,
# built from its Go module by hack/build-storage.sh.
LOCAL_PATH_PROVISIONER_VERSION=0.0.30
# The CSI sidecars beside the bed's expandable storage (hack/csi-hostdir, decision 98), built from
# their Go modules by hack/build-csi.sh.
CSI_PROVISIONER_VERSION=6.4.0
CSI_RESIZER_VERSION=2.3.0

case " $KUBE_VERSIONS " in
  *" $KUBE_VERSION "*) ;;
  *) echo "error: KUBE_VERSION=$KUBE_VERSION is not one of the test bed's versions ($KUBE_VERSIONS, in hack/versions.sh)" >&2; return 1 2>/dev/null || exit 1 ;;
esac
# Minor release, for version-dependent choices (feature gates, kubelet config).
KUBE_MINOR=$(echo "$KUBE_VERSION" | cut -d. -f2)
# The control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) and kubectl are
# always the default release (listed first); KUBE_VERSION is the nodes' kubelet. Another listed
# release is a node-version skew, as a cluster upgraded control plane first runs it: only its
# kubelet is built (decision 62). Kubernetes supports a kubelet up to 3 minors older than the API
# server, never newer.
KUBE_CONTROL_PLANE_VERSION=${KUBE_VERSIONS%% *}
KUBE_CONTROL_PLANE_MINOR=$(echo "$KUBE_CONTROL_PLANE_VERSION" | cut -d. -f2)
if [ "$KUBE_MINOR" -gt "$KUBE_CONTROL_PLANE_MINOR" ] || [ $((KUBE_CONTROL_PLANE_MINOR - KUBE_MINOR)) -gt 3 ]; then
  echo "error: a v$KUBE_VERSION kubelet is outside the skew Kubernetes supports with a v$KUBE_CONTROL_PLANE_VERSION control plane (up to 3 minors older)" >&2
  return 1 2>/dev/null || exit 1
fi
export KUBE_VERSION KUBE_CONTROL_PLANE_VERSION
