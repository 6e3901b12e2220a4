# Functions the conformance agent hooks share; sourced, never run on its own. They
# work with and without `set -euo pipefail` (a process may end while it is read).
#
# Every process of a job carries CONFORMANCE_JOB_MARKER="<agent name>:<job id>",
# exported by the `environment` hook and inherited by whatever the job starts -
# including processes that leave the job's process group with setsid or a double
# fork, which the agent's own cleanup misses. Scanning /proc for the marker finds them.

# How long a SIGKILLed process gets to exit before the hooks call it stuck.
CONFORMANCE_KILL_SETTLE_SECONDS=5

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

# Prints "pid marker" for every live process carrying a job marker, except this
# hook, its ancestors and its helpers.
conformance_marked_processes() {
    local ancestors environ pid marker
    ancestors=" $(conformance_ancestors | tr '\n' ' ') "
    for environ in /proc/[0-9]*/environ; do
        pid=${environ#/proc/}
        pid=${pid%/environ}
        [[ $ancestors == *" $pid "* ]] && continue
        marker=$(grep -az -m1 '^CONFORMANCE_JOB_MARKER=' "$environ" 2>/dev/null | tr -d '\0' || true)
        marker=${marker#CONFORMANCE_JOB_MARKER=}
        [[ -n $marker ]] || continue
        conformance_alive "$pid" || continue
        conformance_from_hook "$pid" && continue
        printf '%s %s\n' "$pid" "$marker"
    done
}

# Prints the pids of live processes holding one of the files in
# CONFORMANCE_DEVICE_NODES (space-separated, e.g. "/dev/nvidia0 /dev/nvidia1"),
# except this hook's ancestors.
conformance_device_holders() {
    local ancestors node fd pid
    [[ -n ${CONFORMANCE_DEVICE_NODES:-} ]] || return 0
    ancestors=" $(conformance_ancestors | tr '\n' ' ') "
    for fd in /proc/[0-9]*/fd/*; do
        pid=${fd#/proc/}
        pid=${pid%%/*}
        [[ $ancestors == *" $pid "* ]] && continue
        for node in $CONFORMANCE_DEVICE_NODES; do
            if [[ $(readlink "$fd" 2>/dev/null) == "$node" ]]; then
                printf '%s\n' "$pid"
            fi
        done
    done | sort -un
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

# Sends TERM to the given pids, waits up to CONFORMANCE_KILL_GRACE_SECONDS
# (default 10) for them to end, then KILLs the rest and waits for those too: a
# killed process still runs until the kernel schedules its exit, which on a busy
# host is not at once, and one in uninterruptible sleep (a device driver call)
# does not exit at all. Prints what it did.
conformance_kill() {
    local grace=${CONFORMANCE_KILL_GRACE_SECONDS:-10} left
    [[ $# -gt 0 ]] || return 0
    echo "conformance hook: stopping leftover processes: $*"
    kill -TERM "$@" 2>/dev/null || true
    mapfile -t left < <(conformance_still_alive "$grace" "$@")
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
