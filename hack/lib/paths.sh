# shellcheck shell=bash disable=SC2034 # sourced: its variables are read by the scripts that source it
# Part of hack/lib/, the shell library of hack/: where the bed and the benchmarks keep things. The
# cache of built binaries, and the cluster's state directory with its kubeconfig, logs and pid
# files. Needs $repo (the repository's root). Defines variables only.
: "${repo:?hack/lib/paths.sh needs repo set to the repository root}"
CACHE=${TAILOR_CACHE:-$HOME/.cache/tailor}
CLUSTER_DIR=${CLUSTER_DIR:-$repo/.tailor/cluster}
KUBECONFIG=$CLUSTER_DIR/kubeconfig
PKI=$CLUSTER_DIR/pki
LOGS=$CLUSTER_DIR/logs
PIDS=$CLUSTER_DIR/pids
