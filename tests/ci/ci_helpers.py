"""What the tests of the Buildkite harness share: fleets, the CLI, Buildkite's
upload-time interpolation, and records made to order."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import patience

#: The stand-in `buildkite-agent` lives here, to be put first on PATH.
STAND_IN_BIN = Path(__file__).parent / "stand_in"
REPO = Path(__file__).parents[2]
EXAMPLE_FLEET = REPO / "ci" / "buildkite" / "fleet.toml"


def write_fleet(folder: Path, text: str, name: str = "fleet.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def conformance(*args: str, cwd: Path | None = None, env: dict | None = None,
                stdin: str | None = None) -> subprocess.CompletedProcess:
    """The `conformance` command, in a child process as a user runs it."""
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd,
                          env=env, input=stdin, capture_output=True, text=True, timeout=patience.scaled(1800))


def pipeline_json(*args: str) -> dict:
    result = conformance("pipeline", "--format", "json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


_INTERPOLATED = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def upload_interpolation(text: str, environ: dict[str, str]) -> str:
    """What `buildkite-agent pipeline upload` makes of ``text``: ``$$`` becomes ``$``,
    ``$NAME`` and ``${NAME}`` become the uploader's value (empty when unset)."""
    def replace(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        return environ.get(match.group(1) or match.group(2), "")
    return _INTERPOLATED.sub(replace, text)


def step(pipeline: dict, key: str) -> dict:
    return next(s for s in pipeline["steps"] if s.get("key") == key)


def agent_env(store: Path, **extra: str) -> dict[str, str]:
    """A job's environment with the stand-in agent first on PATH, storing in ``store``."""
    return {**os.environ, "PATH": f"{STAND_IN_BIN}{os.pathsep}{os.environ['PATH']}",
            "STAND_IN_AGENT_STORE": str(store), **extra}
