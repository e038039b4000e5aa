# shellcheck shell=bash # sourced, never run
# Part of hack/lib/, the shell library of hack/. Sourced by the hack/build-*.sh scripts that build a pinned Go module from its own source.
# Defines functions only; must not build or start anything.

# Finds Go (also in /usr/local/go/bin) or exits with what to install.
require_go() { # minimum version, for the message
  [ -x /usr/local/go/bin/go ] && PATH=$PATH:/usr/local/go/bin
  command -v go >/dev/null || { echo "error: no Go toolchain on PATH: install Go >= $1 and retry" >&2; exit 1; }
}

# Copies the source of module@version into `dest`, writable, once (a `.complete` marker says so).
# `go install mod@version` refuses a module whose go.mod has replace directives, so the module is
# built in place: its own go.mod and go.sum decide the dependency graph exactly as the release does.
module_source() { # module, version (with v), dest
  local mod=$1 version=$2 dest=$3 json dir
  [ -f "$dest/.complete" ] && return 0
  echo "downloading $mod@$version"
  json=$(go mod download -json "$mod@$version")
  dir=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  if [ -z "$dir" ] || [ ! -f "$dir/go.mod" ]; then
    echo "error: go mod download gave no source for $mod@$version:" >&2; printf '%s\n' "$json" >&2; exit 1
  fi
  rm -rf "$dest"
  # The module cache is read-only; the build needs a writable copy (go may touch go.sum).
  cp -r "$dir" "$dest"
  chmod -R u+w "$dest"
  touch "$dest/.complete"
}

# Builds the main package at the root of a module's source (module_source) into `target`, at nice 19
# and -p 1: the machine has two cores, and other builds and tests run beside this one.
build_root_package() { # src, target
  local src=$1 target=$2 start=$SECONDS
  (cd "$src" && CGO_ENABLED=0 nice -n 19 go build -p 1 -trimpath -ldflags "-s -w" -o "$target.tmp.$$" .)
  mv "$target.tmp.$$" "$target"
  echo "built $(basename "$target") in $((SECONDS - start))s"
}
