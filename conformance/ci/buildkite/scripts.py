"""The bash scripts of the pipeline's steps, as the job's bash runs them.

Every value from a fleet file is a checked name (used as it is) or free text quoted
with ``shell_word``; the generator escapes the finished lines for upload.
"""

from __future__ import annotations

from conformance.ci.fleet import Device, Fleet
from conformance.ci.layout import COLLECTED_DIR, MATRIX_CONTEXT, RELEASE_CONTEXT, RESULTS_DIR, SITE_DIR
from conformance.ci.names import shell_word

#: The exit status of a job whose agent failed its pre-flight (or could not clean
#: its devices): retried automatically, on whichever agent takes it next, and never
#: read as the plugin's failure. 75 is EX_TEMPFAIL, "try again later". A run that
#: exits with it itself is reported as exit status 1, so no plugin can ask for a retry.
UNHEALTHY_EXIT = 75
#: The status bash gives a script that a signal ended: 128 + the signal's number.
SIGNALLED = {"INT": 130, "TERM": 143}
TEST_ENGINE_URL = "https://analytics-api.buildkite.com/v1/uploads"


def _job_file(device: Device, suffix: str) -> str:
    # Named after the job, so retries and shards never overwrite each other's files
    # when the collector downloads them all into one tree. The name is a checked
    # pattern, so it needs no quoting; the job id is expanded by the job's shell.
    return f'"{RESULTS_DIR}/{device.name}/${{BUILDKITE_JOB_ID}}.{suffix}"'


def device_commands(device: Device) -> list[str]:
    """The device step's script. The report runs from a trap as well as at the end,
    so a step that is cancelled or times out (the agent signals the job's process
    group, ``conformance run`` keeps its record) still annotates and stores its
    verdict before it exits."""
    record = _job_file(device, "record.json")
    run = ["conformance", "run", "--platform", device.platform, "--record", record,
           "--junitxml", _job_file(device, "junit.xml")]
    if device.parallelism > 1:
        run += ["--shard", '"$((BUILDKITE_PARALLEL_JOB + 1))/${BUILDKITE_PARALLEL_JOB_COUNT}"']
    if device.suites:
        run += ["--suite", ",".join(device.suites)]
    if device.expectations:
        run += ["--expectations", shell_word(device.expectations)]
    report = (f"conformance pipeline report {record} --device {device.name} "
              '--exit-status "$status" '
              "|| echo 'conformance: the report failed (above); the record is an artifact' >&2")
    traps = [f"trap 'status={code}; trap - INT TERM; conformance_report; exit {code}' {name}"
             for name, code in SIGNALLED.items()]
    return [
        "set -euo pipefail",
        # The run's exit status is kept, not acted on at once, so that the record is
        # reported whatever happened; it is still the step's exit status.
        "status=0",
        f"conformance_report() {{ {report}; }}",
        *traps,
        " ".join(run) + " || status=$?",
        "trap - INT TERM",
        f'if [[ $status == {UNHEALTHY_EXIT} ]]; then echo "conformance: the run exited '
        f"with {UNHEALTHY_EXIT}, the status kept for an unhealthy agent; reported as 1\" >&2; "
        "status=1; fi",
        "conformance_report",
        'exit "$status"',
    ]


def collector_commands(fleet: Fleet) -> list[str]:
    """The collector step's script: the latest attempt of every shard of every device,
    merged into one record per device, then the matrix and the gate."""
    devices = fleet.active()
    gate = ["conformance", "pipeline", "gate", RESULTS_DIR]
    collect = ["conformance", "pipeline", "collect", RESULTS_DIR, "--into", COLLECTED_DIR]
    for device in devices:
        collect += ["--device", device.name]
        if device.soft_fail:
            gate += ["--soft-fail", device.name, shell_word(device.promote_when)]
        elif device.condition:
            gate += ["--conditional", device.name]
        else:
            gate += ["--required", device.name]
        if device.parallelism > 1:
            gate += ["--sharded", device.name]
    return [
        "set -euo pipefail",
        f"mkdir -p {RESULTS_DIR} {COLLECTED_DIR}",
        # No record at all is the gate's to report, naming each device.
        f"buildkite-agent artifact download '{RESULTS_DIR}/*/*.record.json' . "
        "|| echo 'conformance: no device record to download' >&2",
        " ".join(collect),
        # The page lists any record it rejects; the gate decides the build.
        f"conformance matrix build {COLLECTED_DIR} -o {SITE_DIR} "
        "|| echo 'conformance: the matrix left records out (listed on its page)' >&2",
        f"conformance pipeline annotate {SITE_DIR}/matrix.md --context {MATRIX_CONTEXT} "
        "--style info",
        " ".join(gate),
    ]


def release_gate_commands(fleet: Fleet) -> list[str]:
    """The release gate's script: every platform at the blocking tier of the tier
    policy must be CONFORMANT on the kit this build installed, judged on the records'
    history in the checkout and this build's collected records (docs/tiers.md)."""
    return [
        "set -euo pipefail",
        f"mkdir -p {COLLECTED_DIR}",
        f"buildkite-agent artifact download '{COLLECTED_DIR}/*/*' . "
        "|| echo 'conformance: no collected record to download' >&2",
        # The candidate is the installed kit: `conformance --version` says which.
        'kit=$(conformance --version) && kit=${kit#conformance }',
        "status=0",
        f'conformance release-check --kit "$kit" {shell_word(fleet.release_records)} {COLLECTED_DIR} '
        "--markdown release-check.md || status=$?",
        f'conformance pipeline annotate release-check.md --context {RELEASE_CONTEXT} '
        '--style "$([[ $status == 0 ]] && echo success || echo error)"',
        'exit "$status"',
    ]


def test_engine_commands(fleet: Fleet) -> list[str]:
    """Upload every device's JUnit XML to Test Engine. The suite token comes from
    the agent's Buildkite secret and reaches curl on stdin, never in its arguments
    (which every user of the machine can read in /proc) or in the pipeline."""
    fields = " ".join(f'-F "run_env[{field}]=${{{variable}:-}}"' for field, variable in (
        ("key", "BUILDKITE_BUILD_ID"), ("number", "BUILDKITE_BUILD_NUMBER"),
        ("job_id", "BUILDKITE_JOB_ID"), ("branch", "BUILDKITE_BRANCH"),
        ("commit_sha", "BUILDKITE_COMMIT"), ("url", "BUILDKITE_BUILD_URL")))
    return [
        "set -euo pipefail",
        f"buildkite-agent artifact download '{RESULTS_DIR}/*/*.junit.xml' .",
        f"token=$(buildkite-agent secret get {fleet.test_engine_secret})",
        f"for file in {RESULTS_DIR}/*/*.junit.xml; do "
        "printf 'header = \"Authorization: Token token=\\\\\"%s\\\\\"\"\\n' \"$token\" "
        '| curl --silent --show-error --fail-with-body --config - -X POST '
        f'-F "data=@$file" -F format=junit -F "run_env[CI]=buildkite" {fields} '
        f"{TEST_ENGINE_URL}; done",
    ]
