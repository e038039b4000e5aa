#!/usr/bin/env bash
# ShellCheck over every shell script the repository tracks (make lint). Installs the Debian
# package when it is missing, as the test bed installs its own. Settings: .shellcheckrc (sourced
# files are followed from the script's own folder).
# Must not: change a script.
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1
if ! command -v shellcheck >/dev/null; then
  command -v apt-get >/dev/null || { echo "error: shellcheck is missing and there is no apt-get: install shellcheck" >&2; exit 1; }
  echo "installing shellcheck"
  mkdir -p .tailor
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends shellcheck; } \
    >.tailor/apt-shellcheck.log 2>&1 || { echo "error: apt-get install shellcheck failed; see .tailor/apt-shellcheck.log" >&2; exit 1; }
fi
mapfile -t scripts < <(git ls-files '*.sh' .ci/run)
shellcheck "${scripts[@]}"
echo "shellcheck: ${#scripts[@]} scripts clean"
