"""The Buildkite pipeline for a fleet, built from buildkite-sdk's model classes.

One command step per active device class (``parallelism`` jobs of it for a sharded
run) runs ``conformance run`` on an agent of its queue and reports the record; one
collector step, on a CPU agent, merges each device's records, builds the support
matrix and decides whether the build passes; an optional step uploads the JUnit XML
to Test Engine. Every command is written as the job's bash will run it (``scripts``)
and then escaped with ``for_upload``, so ``buildkite-agent pipeline upload`` leaves
it alone.
"""

from __future__ import annotations

from buildkite_sdk import (
    AutomaticRetry,
    CommandStep,
    CommandStepRetry,
    DependsOnListObject,
    Pipeline,
)

from conformance.ci.buildkite.scripts import (
    UNHEALTHY_EXIT,
    collector_commands,
    device_commands,
    release_gate_commands,
    test_engine_commands,
)
from conformance.ci.fleet import Device, Fleet
from conformance.ci.layout import (
    COLLECTED_DIR,
    COLLECTOR_KEY,
    RELEASE_GATE_KEY,
    RESULTS_DIR,
    SITE_DIR,
    TEST_ENGINE_KEY,
    step_key,
)

COLLECTOR_TIMEOUT_MINUTES = 30
TEST_ENGINE_TIMEOUT_MINUTES = 15
RELEASE_GATE_TIMEOUT_MINUTES = 15
#: The branches whose builds wait on the release gate (Buildkite's conditional syntax).
RELEASE_BRANCHES = "build.branch =~ /^release\\//"
#: Retries of a job whose agent was lost (-1: it stopped talking to Buildkite, or
#: was told to stop: agent_stop) or failed its pre-flight (UNHEALTHY_EXIT). These
#: are statuses no plugin can give the step: 255, which a plugin's exit(-1) gives,
#: is not one of them, so a deterministic crash runs once, not three times.
LOST_AGENT_RETRIES = 2


def for_upload(text: str) -> str:
    """``text`` as it must be written in a pipeline so that ``buildkite-agent pipeline
    upload``, which replaces ``$NAME`` by the uploader's environment, leaves it as it is:
    every ``$`` doubled. Expansion then happens, if at all, in the job's own shell."""
    return text.replace("$", "$$")


def _lost_agent_retry() -> CommandStepRetry:
    return CommandStepRetry(automatic=[
        AutomaticRetry(exit_status=-1, limit=LOST_AGENT_RETRIES),
        AutomaticRetry(signal_reason="agent_stop", limit=LOST_AGENT_RETRIES),
        AutomaticRetry(exit_status=UNHEALTHY_EXIT, limit=LOST_AGENT_RETRIES),
    ])


def device_env(device: Device) -> dict[str, str]:
    """What the agent hooks read from the job (allow-listed on the agent): the
    pre-flight's expectations, and shared nodes the fleet adds to the agent's list."""
    env = {"CONFORMANCE_PLATFORM": device.platform,
           "CONFORMANCE_EXPECTED_DEVICES": str(device.device_count)}
    if device.health_command:
        env["CONFORMANCE_HEALTH_COMMAND"] = device.health_command
    if device.shared_nodes:
        env["CONFORMANCE_FLEET_SHARED_NODES"] = " ".join(device.shared_nodes)
    return {name: for_upload(value) for name, value in env.items()}


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
    shards = " (shard %N)" if device.parallelism > 1 else ""
    return CommandStep(
        key=step_key(device.name),
        label=f"conformance: {device.name} on {device.platform}{shards}{soft}",
        agents=agents,
        env=device_env(device),
        commands=[for_upload(line) for line in device_commands(device)],
        artifact_paths=[f"{RESULTS_DIR}/{device.name}/*"],
        timeout_in_minutes=device.timeout_in_minutes,
        retry=_lost_agent_retry(),
        soft_fail=device.soft_fail or None,
        parallelism=device.parallelism if device.parallelism > 1 else None,
        priority=device.priority,
        step_if=device.condition,
        notify=[{kind: target} for kind, target in device.notify] or None,
        **lock,
    )


def _after_devices_step(fleet: Fleet, key: str, label: str, commands: list[str],
                        timeout_in_minutes: int, **fields) -> CommandStep:
    """A step on the collector's queue that runs once every device step has ended,
    failed ones included (a failed device must still have its record collected)."""
    return CommandStep(
        key=key,
        label=label,
        depends_on=[DependsOnListObject(step=step_key(d.name), allow_failure=True)
                    for d in fleet.active()],
        agents={"queue": fleet.collector_queue} if fleet.collector_queue else None,
        commands=[for_upload(line) for line in commands],
        timeout_in_minutes=timeout_in_minutes,
        retry=_lost_agent_retry(),
        **fields,
    )


def collector_step(fleet: Fleet) -> CommandStep:
    return _after_devices_step(fleet, COLLECTOR_KEY, "conformance: support matrix and gate",
                               collector_commands(fleet), COLLECTOR_TIMEOUT_MINUTES,
                               artifact_paths=[f"{SITE_DIR}/**/*", f"{COLLECTED_DIR}/*/*"])


def test_engine_step(fleet: Fleet) -> CommandStep:
    # Test Engine is a view of the results, not a verdict: its outage must not fail a
    # build whose gate passed.
    return _after_devices_step(fleet, TEST_ENGINE_KEY, "conformance: JUnit XML to Test Engine",
                               test_engine_commands(fleet), TEST_ENGINE_TIMEOUT_MINUTES, soft_fail=True)


def release_gate_step(fleet: Fleet) -> CommandStep:
    """On release branches, after the collector (whatever its gate said): may the
    kit this build installed be released (``conformance release-check``)?"""
    return CommandStep(
        key=RELEASE_GATE_KEY,
        label="conformance: release gate",
        depends_on=[DependsOnListObject(step=COLLECTOR_KEY, allow_failure=True)],
        agents={"queue": fleet.collector_queue} if fleet.collector_queue else None,
        commands=[for_upload(line) for line in release_gate_commands(fleet)],
        timeout_in_minutes=RELEASE_GATE_TIMEOUT_MINUTES,
        retry=_lost_agent_retry(),
        step_if=RELEASE_BRANCHES,
    )


def build_pipeline(fleet: Fleet) -> Pipeline:
    """The pipeline for the fleet's active devices; retired ones get no step."""
    steps = [*map(device_step, fleet.active()), collector_step(fleet)]
    if fleet.test_engine_secret:
        steps.append(test_engine_step(fleet))
    if fleet.release_records:
        steps.append(release_gate_step(fleet))
    return Pipeline(steps=steps,
                    notify=[{kind: target} for kind, target in fleet.notify] or None)
