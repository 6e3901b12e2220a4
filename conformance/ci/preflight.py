"""The pre-flight of a device job: is this agent fit to judge a plugin?

Run by the agent's ``pre-command`` hook before the job's command. It asks the
platform how many devices it sees (``Platform.device_count``) and compares that with
the fleet's ``device_count``, and runs the fleet entry's vendor health command
(``nvidia-smi``, ``npu-smi info``: whatever also prints the driver and firmware
versions). Either failing makes the agent unhealthy: the hook ends the job with a
status that is retried on another agent, so a missing GPU never reads as a plugin's
failure. A plugin that does not load, or whose ``device_count`` raises, is the
plugin's problem, not the agent's: the pre-flight records it and lets the run judge.

What it found is written as JSON to the file the hook then names in
``CONFORMANCE_PREFLIGHT_FILE``; the run reads it into the record's
``provenance.device.preflight`` before it writes the record, so the record (and any
signature over it) says on what hardware state it ran.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

#: Enough of a health command's output to name driver and firmware versions.
OUTPUT_LIMIT = 4000


@dataclasses.dataclass
class Preflight:
    expected_devices: int
    found_devices: int | None = None
    platform_problem: str | None = None
    health_command: str | None = None
    health_exit_status: int | None = None
    health_output: str = ""
    problems: list[str] = dataclasses.field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return not self.problems


#: Run in a child process: loading a plugin imports torch and the plugin's own code,
#: which the CI core never imports itself, and a plugin that crashes on load must
#: not take the pre-flight down with it.
_COUNT_DEVICES = """
import json, sys
from conformance.contract.discovery import PlatformPluginError, load_platform
try:
    platform = load_platform(sys.argv[1])
except PlatformPluginError as exc:
    print(json.dumps({"problem": str(exc).splitlines()[0]}))
    sys.exit()
try:
    print(json.dumps({"count": int(platform.device_count())}))
except Exception as exc:  # the plugin's own error: the run will report it
    print(json.dumps({"problem": f"device_count() raised {type(exc).__name__}: {exc}"}))
"""


def _count_devices(platform: str, found: Preflight, timeout: float) -> None:
    try:
        child = subprocess.run([sys.executable, "-c", _COUNT_DEVICES, platform],
                               capture_output=True, text=True, timeout=timeout,
                               stdin=subprocess.DEVNULL)
        answer = json.loads(child.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        found.problems.append(f"counting the platform's devices took over {timeout:g} s")
        return
    except (ValueError, IndexError):
        last = (child.stderr.strip().splitlines() or ["no output"])[-1]
        found.platform_problem = f"loading the platform failed: {last[:200]}"
        return
    if "problem" in answer:
        found.platform_problem = answer["problem"]
        return
    found.found_devices = answer["count"]
    if found.found_devices < found.expected_devices:
        found.problems.append(f"the platform sees {found.found_devices} devices, the fleet "
                              f"expects {found.expected_devices}")


def _run_health_command(command: str, timeout: float, found: Preflight) -> None:
    found.health_command = command
    try:
        result = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                                timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        found.problems.append(f"the health command ran over {timeout:g} s")
        return
    found.health_exit_status = result.returncode
    found.health_output = (result.stdout + result.stderr)[:OUTPUT_LIMIT]
    if result.returncode != 0:
        last = (result.stdout + result.stderr).strip().splitlines()[-1:] or ["no output"]
        found.problems.append(f"the health command exited {result.returncode}: {last[0][:200]}")


def preflight(platform: str, expected_devices: int, health_command: str | None,
              health_timeout: float) -> Preflight:
    found = Preflight(expected_devices)
    _count_devices(platform, found, health_timeout)
    if health_command:
        _run_health_command(health_command, health_timeout, found)
    return found


def write(found: Preflight, path: Path) -> None:
    data = {**dataclasses.asdict(found), "healthy": found.healthy}
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
