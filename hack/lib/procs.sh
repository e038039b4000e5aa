# shellcheck shell=bash # sourced, never run
# Part of hack/lib/, the shell library of hack/: the bookkeeping of the processes a script starts,
# one pid file under $PIDS and one log under $PROC_LOGS (default $LOGS) per process, so that any
# script (and `hack/cluster.sh down`) finds and stops them by name. Needs hack/lib/paths.sh and
# hack/lib/log.sh. Defines functions only; must not touch a process it has no pid file for.

# A zombie counts as gone: a stopped process whose parent shell has exited may wait for a reaper
# that never comes (PID 1 of a container), and kill -0 still succeeds on it.
alive() { kill -0 "$1" 2>/dev/null && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]; }

pid_of() { # name: prints the pid of a live process started under that name
  local f=$PIDS/$1.pid pid
  [ -f "$f" ] && pid=$(cat "$f") && alive "$pid" || return 1
  echo "$pid"
}
running() { pid_of "$1" >/dev/null; }

start() { # name, command...
  local name=$1 logs=${PROC_LOGS:-$LOGS}; shift
  mkdir -p "$logs" "$PIDS"
  # 3>&- … 9>&-: the process must not inherit (and hold for its lifetime) a caller's lock:
  # flock(1) around `cluster.sh up` hands its lock down as fd 3, cluster.sh holds its own as fd 8.
  setsid "$@" >>"$logs/$name.log" 2>&1 </dev/null 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
  echo $! >"$PIDS/$name.pid"
}

stop() { # name: TERM, wait up to 20 s, then KILL
  local name=$1 pid
  pid=$(pid_of "$name") || { rm -f "$PIDS/$name.pid"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.2; done
  if alive "$pid"; then log "$name did not stop on TERM; killing"; kill -KILL "$pid" 2>/dev/null || true; sleep 0.5; fi
  rm -f "$PIDS/$name.pid"
  log "stopped $name"
}

wait_for() { # description, seconds, command...
  local what=$1 seconds=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "$what not ready after ${seconds}s; see ${PROC_LOGS:-$LOGS}/"
    sleep 0.5
  done
}
