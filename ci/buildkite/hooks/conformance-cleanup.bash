# shellcheck shell=bash
# Functions the conformance agent hooks share; sourced, never run on its own. They
# work with and without `set -euo pipefail` (a process may end while it is read).
#
# A box runs several agents, each with its own jobs. A hook acts only on processes
# its own agent's jobs started, and it knows them by CONFORMANCE_JOB_MARKER=
# "<agent name>:<job id>", exported by the `environment` hook and inherited by
# whatever the job starts - including processes that leave the job's process group
# with setsid or a double fork, which the agent's own cleanup misses. Holding one of
# the agent's device nodes never makes a process the agent's: an unmarked holder
# (another agent's job, a user's shell) is named and the job refused, never killed.

# How long a SIGKILLed process gets to exit before the hooks call it stuck.
CONFORMANCE_KILL_SETTLE_SECONDS=5
# Seconds between SIGTERM and SIGKILL; a hook sets it from
# CONFORMANCE_KILL_GRACE_SECONDS, checked by conformance_seconds.
conformance_grace=10

conformance_marker() {
    printf '%s:%s' "${BUILDKITE_AGENT_NAME:-agent}" "${BUILDKITE_JOB_ID:-}"
}

# The pids of this shell and its ancestors: the hook, its wrapper and the agent's
# bootstrap, which must never be killed by the hook they run.
conformance_ancestors() {
    local pid=$$
    while [[ -n $pid && $pid -gt 1 ]]; do
        printf '%s\n' "$pid"
        pid=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null || true)
    done
}

# True while pid runs (a zombie has finished and only waits to be reaped).
conformance_alive() {
    local state
    state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null || true)
    [[ -n $state && $state != Z ]]
}

# True if pid is this hook's own child or grandchild (the helpers of its scans).
conformance_from_hook() {
    local pid=$1
    while [[ -n $pid && $pid -gt 1 ]]; do
        [[ $pid == "$$" ]] && return 0
        pid=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null || true)
    done
    return 1
}

# The job marker in the environment of pid (empty when it has none).
conformance_marker_of() {
    local marker
    marker=$(grep -az -m1 '^CONFORMANCE_JOB_MARKER=' "/proc/$1/environ" 2>/dev/null \
             | tr -d '\0' || true)
    printf '%s' "${marker#CONFORMANCE_JOB_MARKER=}"
}

# Prints "pid marker" for every live process carrying a job marker, except this
# hook, its ancestors and its helpers.
conformance_marked_processes() {
    local ancestors environ pid marker
    ancestors=" $(conformance_ancestors | tr '\n' ' ') "
    for environ in /proc/[0-9]*/environ; do
        pid=${environ#/proc/}
        pid=${pid%/environ}
        [[ $ancestors == *" $pid "* ]] && continue
        marker=$(conformance_marker_of "$pid")
        [[ -n $marker ]] || continue
        conformance_alive "$pid" || continue
        conformance_from_hook "$pid" && continue
        printf '%s %s\n' "$pid" "$marker"
    done
}

# Prints the pids of this agent's processes of jobs other than the current one. The
# agent's name is all of a marker before its last ':' (a job id holds none), compared
# whole: agent "npu0" never claims the jobs of agents "npu0-x" or "npu0:x".
conformance_earlier_jobs() {
    local current agent pid marker
    current=$(conformance_marker)
    agent=${BUILDKITE_AGENT_NAME:-agent}
    conformance_marked_processes | while read -r pid marker; do
        if [[ ${marker%:*} == "$agent" && $marker != "$current" ]]; then
            printf '%s\n' "$pid"
        fi
    done
}

# Prints "pid node" for live processes holding one of the nodes given as arguments,
# except this hook's ancestors.
conformance_device_holders() {
    local ancestors node fd pid target
    [[ $# -gt 0 ]] || return 0
    ancestors=" $(conformance_ancestors | tr '\n' ' ') "
    for fd in /proc/[0-9]*/fd/*; do
        pid=${fd#/proc/}
        pid=${pid%%/*}
        [[ $ancestors == *" $pid "* ]] && continue
        target=$(readlink "$fd" 2>/dev/null) || continue
        for node in "$@"; do
            [[ $target == "$node" ]] && printf '%s %s\n' "$pid" "$node"
        done
    done | sort -u
}

# Prints those of the given pids (after the first argument) still running after up
# to $1 seconds.
conformance_still_alive() {
    local seconds=$1 waited=0 pid left
    shift
    while :; do
        left=()
        for pid in "$@"; do conformance_alive "$pid" && left+=("$pid"); done
        (( ${#left[@]} == 0 || waited >= seconds * 10 )) && break
        sleep 0.1
        waited=$((waited + 1))
    done
    [[ ${#left[@]} -eq 0 ]] || printf '%s\n' "${left[@]}"
}

# Sends TERM to the given pids, waits up to $conformance_grace seconds for them to
# end, then KILLs the rest and waits for those too: a killed process still runs
# until the kernel schedules its exit, which on a busy host is not at once, and one
# in uninterruptible sleep (a device driver call) does not exit at all. Prints what
# it did.
conformance_kill() {
    local left
    [[ $# -gt 0 ]] || return 0
    echo "conformance hook: stopping leftover processes: $*"
    kill -TERM "$@" 2>/dev/null || true
    mapfile -t left < <(conformance_still_alive "$conformance_grace" "$@")
    [[ ${#left[@]} -gt 0 ]] || return 0
    echo "conformance hook: killing processes that ignored SIGTERM: ${left[*]}"
    kill -KILL "${left[@]}" 2>/dev/null || true
    mapfile -t left < <(conformance_still_alive "$CONFORMANCE_KILL_SETTLE_SECONDS" "${left[@]}")
    [[ ${#left[@]} -gt 0 ]] || return 0
    echo "conformance hook: still running ${CONFORMANCE_KILL_SETTLE_SECONDS} s after SIGKILL" \
         "(stuck in the kernel, e.g. in a device driver call): ${left[*]}"
}

# Runs CONFORMANCE_DEVICE_IDLE_CHECK, if the agent sets one: a command that exits 0
# when the agent's devices hold no memory (e.g. one asking nvidia-smi for
# memory.used). It sees what /proc cannot: a container in another PID namespace.
conformance_devices_idle() {
    [[ -n ${CONFORMANCE_DEVICE_IDLE_CHECK:-} ]] || return 0
    bash -c "$CONFORMANCE_DEVICE_IDLE_CHECK"
}
