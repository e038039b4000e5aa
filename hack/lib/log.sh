# shellcheck shell=bash # sourced, never run
# Part of hack/lib/, the shell library of hack/: a script's messages, each prefixed with its name
# ($LOG_PREFIX: "cluster", "kwok"). Defines functions only.
log() { echo "${LOG_PREFIX:-hack}: $*"; }
die() { echo "${LOG_PREFIX:-hack}: error: $*" >&2; exit 1; }
