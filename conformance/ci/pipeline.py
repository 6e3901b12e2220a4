"""The Buildkite pipeline for a fleet, built from buildkite-sdk's model classes.

One command step per active device class runs ``conformance run`` on an agent of its
queue and reports the record; one collector step, on a CPU agent, gathers the
records, builds the support matrix and decides whether the build passes. Every
command is written as the job's bash will run it and then escaped with
``for_upload``, so ``buildkite-agent pipeline upload`` leaves it alone.
"""

from __future__ import annotations

from buildkite_sdk import (
    AutomaticRetry,
    CommandStep,
    CommandStepRetry,
    DependsOnListObject,
    Pipeline,
)

from conformance.ci.fleet import Device, Fleet
from conformance.ci.layout import COLLECTOR_KEY, MATRIX_CONTEXT, RESULTS_DIR, SITE_DIR, step_key
from conformance.ci.names import for_upload, shell_word

COLLECTOR_TIMEOUT_MINUTES = 30
#: A lost agent (-1: it stopped talking to Buildkite; 255: it was stopped) or an agent
#: told to stop is no verdict on the plugin, so such a job runs again. Nothing else is
#: retried: a test that fails again on a second try is still a failure.
LOST_AGENT_RETRIES = 2


def _lost_agent_retry() -> CommandStepRetry:
    return CommandStepRetry(automatic=[
        AutomaticRetry(exit_status=-1, limit=LOST_AGENT_RETRIES),
        AutomaticRetry(exit_status=255, limit=LOST_AGENT_RETRIES),
        AutomaticRetry(signal_reason="agent_stop", limit=LOST_AGENT_RETRIES),
    ])


def _job_file(device: Device, suffix: str) -> str:
    # Named after the job, so retries and devices never overwrite each other's files
    # when the collector downloads them all into one tree. The name is a checked
    # pattern, so it needs no quoting; the job id is expanded by the job's shell.
    return f'"{RESULTS_DIR}/{device.name}/${{BUILDKITE_JOB_ID}}.{suffix}"'


def device_commands(device: Device) -> list[str]:
    """The device step's script, as bash runs it on the agent."""
    record = _job_file(device, "record.json")
    run = ["conformance", "run", "--platform", device.platform, "--record", record,
           "--junitxml", _job_file(device, "junit.xml")]
    if device.suites:
        run += ["--suite", ",".join(device.suites)]
    if device.expectations:
        run += ["--expectations", shell_word(device.expectations)]
    return [
        "set -euo pipefail",
        # The run's exit status is kept, not acted on at once, so that the record is
        # reported whatever happened; it is still the step's exit status.
        "status=0",
        " ".join(run) + " || status=$?",
        f'conformance pipeline report {record} --device {device.name} '
        '--exit-status "$status"',
        'exit "$status"',
    ]


def device_step(device: Device) -> CommandStep:
    agents = {"queue": device.queue, "device_count": str(device.device_count),
              **dict(device.tags)}
    lock = {}
    if device.shared_device:
        # Several agents reach this physical device: one job on it at a time,
        # across every pipeline of the organisation.
        lock = {"concurrency": 1,
                "concurrency_group": f"conformance/device/{device.shared_device}"}
    soft = " (soft-fail)" if device.soft_fail else ""
    return CommandStep(
        key=step_key(device.name),
        label=f"conformance: {device.name} on {device.platform}{soft}",
        agents=agents,
        commands=[for_upload(line) for line in device_commands(device)],
        artifact_paths=[f"{RESULTS_DIR}/{device.name}/*"],
        timeout_in_minutes=device.timeout_in_minutes,
        retry=_lost_agent_retry(),
        soft_fail=device.soft_fail or None,
        **lock,
    )


def collector_commands(fleet: Fleet) -> list[str]:
    """The collector step's script, as bash runs it on the agent."""
    gate = ["conformance", "pipeline", "gate", RESULTS_DIR]
    for device in fleet.active():
        if device.soft_fail:
            gate += ["--soft-fail", device.name, shell_word(device.promote_when)]
        else:
            gate += ["--required", device.name]
    return [
        "set -euo pipefail",
        f"mkdir -p {RESULTS_DIR}",
        # No record at all is the gate's to report, naming each device.
        f"buildkite-agent artifact download '{RESULTS_DIR}/*/*.record.json' . "
        "|| echo 'conformance: no device record to download' >&2",
        # The page lists any record it rejects; the gate decides the build.
        f"conformance matrix build {RESULTS_DIR} -o {SITE_DIR} "
        "|| echo 'conformance: the matrix left records out (listed on its page)' >&2",
        f"conformance pipeline annotate {SITE_DIR}/matrix.md --context {MATRIX_CONTEXT} "
        "--style info",
        " ".join(gate),
    ]


def collector_step(fleet: Fleet) -> CommandStep:
    return CommandStep(
        key=COLLECTOR_KEY,
        label="conformance: support matrix and gate",
        # allow_failure: a failed device must still have its record collected.
        depends_on=[DependsOnListObject(step=step_key(d.name), allow_failure=True)
                    for d in fleet.active()],
        agents={"queue": fleet.collector_queue} if fleet.collector_queue else None,
        commands=[for_upload(line) for line in collector_commands(fleet)],
        artifact_paths=[f"{SITE_DIR}/**/*"],
        timeout_in_minutes=COLLECTOR_TIMEOUT_MINUTES,
        retry=_lost_agent_retry(),
    )


def build_pipeline(fleet: Fleet) -> Pipeline:
    """The pipeline for the fleet's active devices; retired ones get no step."""
    return Pipeline(steps=[*map(device_step, fleet.active()), collector_step(fleet)])
