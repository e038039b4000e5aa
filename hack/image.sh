#!/usr/bin/env bash
# `make image`: Tailor's container image without a container engine. Packs the machine's Node
# runtime (with the shared libraries it links), the compiled dist/ and production node_modules
# into an OCI archive with hack/images/ocibuild. It runs as a non-root user and writes nothing to
# its filesystem, so a read-only root works. Imports it into the test bed's containerd as
# tailor.local/tailor:dev into every node of the test bed. Must not: start or change the cluster.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/versions.sh"
stage=$repo/.tailor/image
ref=${IMAGE:-tailor.local/tailor:dev}
mkdir -p "$stage"

(cd "$repo" && npx tsc -p tsconfig.build.json)
# Production dependencies, reinstalled only when the lockfile changed.
if ! cmp -s "$repo/package-lock.json" "$stage/app/package-lock.json" 2>/dev/null; then
  rm -rf "$stage/app" && mkdir -p "$stage/app"
  cp "$repo/package.json" "$repo/package-lock.json" "$stage/app/"
  (cd "$stage/app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null)
fi
rm -rf "$stage/app/dist" && cp -r "$repo/dist" "$stage/app/dist"
# The CRI client loads its proto from src/cri/ relative to dist/.
mkdir -p "$stage/app/src/cri" && cp "$repo/src/cri/runtime.proto" "$stage/app/src/cri/"

ocibuild=${TAILOR_CACHE:-$HOME/.cache/tailor}/images/ocibuild
(cd "$here/images" && go build -o "$ocibuild" ./ocibuild)
node=$(readlink -f "$(command -v node)")
libs=()
for lib in $(ldd "$node" | awk '/=> \// {print $3} /^[[:space:]]*\/lib/ {print $1}'); do libs+=(-file "$lib=$(readlink -f "$lib")"); done
"$ocibuild" -ref "$ref" -out "$stage/tailor.tar" -user 65532:65532 -workdir /app \
  -entrypoint "/usr/bin/node /app/dist/cli/main.js" -env NODE_ENV=production \
  -file "/usr/bin/node=$node" "${libs[@]}" -file "/app=$stage/app" -text /etc/passwd="tailor:x:65532:65532::/app:/sbin/nologin"

ctr=${TAILOR_CACHE:-$HOME/.cache/tailor}/containerd/v$CONTAINERD_VERSION/bin/ctr
imported=0
for sock in /run/tailor/nodes/*/containerd/containerd.sock; do
  [ -S "$sock" ] || continue
  "$ctr" --address "$sock" --namespace k8s.io images import "$stage/tailor.tar" >/dev/null 2> >(sed '/cgroup v1 is deprecated/d' >&2)
  "$ctr" --address "$sock" --namespace k8s.io images label "$ref" io.cri-containerd.pinned=pinned >/dev/null 2> >(sed '/cgroup v1 is deprecated/d' >&2)
  imported=$((imported + 1))
done
if [ "$imported" -gt 0 ]; then
  echo "image $ref imported into the test bed's $imported node(s)"
else
  echo "image written to $stage/tailor.tar (no test-bed node running to import it into)"
fi
