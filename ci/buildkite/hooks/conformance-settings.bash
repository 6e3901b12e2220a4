# shellcheck shell=bash
# The agent hooks' settings, read and checked; sourced, never run on its own.
#
# No configured value is ever expanded unquoted: lists are read into arrays with
# `read -r -a` (which splits on blanks and never globs), and every entry must be
# a plain path, so "/dev/nvidia*" or "/dev/null /dev/*" is refused, not expanded.
# Each function prints one line naming the variable and returns 1 on a bad value.

# Nodes every job on a box opens, whatever device it owns: never a sign that a
# process is this agent's, so never a device node here. Per vendor family; an
# entry ending in / covers the folder. Add more with CONFORMANCE_SHARED_NODES (the
# agent's environment) or the fleet's shared_nodes (CONFORMANCE_FLEET_SHARED_NODES).
CONFORMANCE_BUILTIN_SHARED_NODES=(
    # every machine
    /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty /dev/console
    /dev/ptmx /dev/pts/ /dev/shm/ /dev/fuse /dev/kvm /dev/net/tun
    # NVIDIA: the control node, unified memory, modesetting, capabilities, NVSwitch
    /dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools /dev/nvidia-modeset
    /dev/nvidia-caps/ /dev/nvidia-nvswitchctl /dev/nvidia-nvlink
    # AMD ROCm: the compute driver's one node (each GPU has its own /dev/dri/renderD*)
    /dev/kfd
    # Huawei Ascend: the manager, shared virtual memory and the host-device channel
    /dev/davinci_manager /dev/devmm_svm /dev/hisi_hdc
    # Intel Gaudi: the control nodes
    /dev/hl_controlD/
)

conformance_extra_shared=()
conformance_device_nodes=()

# A device node: an absolute path of plain characters (a device file, or a stand-in
# file in tests), no . or .. part.
conformance_plain_node() {
    [[ $1 =~ ^(/[A-Za-z0-9_.+-]+)+$ && ! $1 =~ /\.\.?(/|$) ]]
}

# Reads the whitespace-separated paths in variable $1 into array $2, refusing any
# entry that is not a plain node (a glob, a relative path, ..).
conformance_read_nodes() {
    local variable=$1 node
    local -n into=$2
    into=()
    # -d '': every line, not just the first; read returns 1 at the end of the text.
    read -r -d '' -a into <<< "${!variable:-}" || true
    for node in "${into[@]}"; do
        if ! conformance_plain_node "$node"; then
            echo "conformance hook: $variable: '$node' is not a plain device path" \
                 "(an absolute path, no patterns, no . or .. parts)" >&2
            return 1
        fi
    done
}

# True if node $1 is shared by every job on the box.
conformance_shared_node() {
    local node=$1 shared
    for shared in "${CONFORMANCE_BUILTIN_SHARED_NODES[@]}" "${conformance_extra_shared[@]}"; do
        if [[ $shared == */ ]]; then
            [[ $node == "$shared"* ]] && return 0
        elif [[ $node == "$shared" ]]; then
            return 0
        fi
    done
    return 1
}

# Sets the array conformance_device_nodes from CONFORMANCE_DEVICE_NODES, refusing a
# node that every job on the box holds: treating it as this agent's would make
# every job on the box look like a leftover of this one.
conformance_load_device_nodes() {
    local node fleet_shared
    conformance_read_nodes CONFORMANCE_SHARED_NODES conformance_extra_shared || return 1
    conformance_read_nodes CONFORMANCE_FLEET_SHARED_NODES fleet_shared || return 1
    conformance_extra_shared+=("${fleet_shared[@]}")
    conformance_read_nodes CONFORMANCE_DEVICE_NODES conformance_device_nodes || return 1
    for node in "${conformance_device_nodes[@]}"; do
        if conformance_shared_node "$node"; then
            echo "conformance hook: CONFORMANCE_DEVICE_NODES: '$node' is shared by every" \
                 "job on this box (see conformance-settings.bash), not this agent's device" >&2
            return 1
        fi
    done
}

# Prints the whole number of seconds in variable $1 (default $2), at most 9999.
conformance_seconds() {
    local variable=$1 value=${!1:-$2}
    if [[ ! $value =~ ^[0-9]{1,4}$ ]]; then
        echo "conformance hook: $variable='$value' must be a whole number of seconds" \
             "from 0 to 9999" >&2
        return 1
    fi
    printf '%s\n' "$((10#$value))"
}
