#!/usr/bin/env bash
# Writes src/workload/pure/kruise-rollout-fields.generated.ts: the PodTemplateSpec field tree of
# the Kubernetes API types Kruise Rollout's webhook decodes templates into (k8s.io/api v0.26.3 in
# v0.6.2's go.mod; hack/driver-fields/go.mod pins the same), so Tailor knows which template changes
# that driver cannot see (decision 97). Run it again when KRUISE_ROLLOUT_VERSION moves to a release
# built on other API types, after pinning them in hack/driver-fields/go.mod.
#   bash hack/gen-driver-fields.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/local/go/bin/go ] && PATH=$PATH:/usr/local/go/bin
export GOTOOLCHAIN=local
api=$(sed -n 's/^\tk8s.io\/api \(v[^ ]*\)$/\1/p' hack/driver-fields/go.mod)
out=src/workload/pure/kruise-rollout-fields.generated.ts
# Formatted as the lint step checks it.
generated=$(cd hack/driver-fields && go run . "k8s.io/api $api" KRUISE_ROLLOUT_V0_6_2 | npx prettier --stdin-filepath "$out")
if [ "${1:-}" = --check ]; then
  diff <(echo "$generated") "$out" >/dev/null || { echo "error: $out is stale: run bash hack/gen-driver-fields.sh" >&2; exit 1; }
  exit 0
fi
echo "$generated" > "$out"
echo "wrote $out (k8s.io/api $api)"
