"""Kit runs against vLLM plugins, for the ``requires_vllm`` tests: ``pytest
--platform=vllm:NAME`` in a child, waited on while it makes progress, and the record
it wrote; the out-of-tree plugin package ``vllm_plugins/`` installed as pip would
leave it (a ``.dist-info`` registering its ``vllm.platform_plugins`` entry points)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import patience

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

PLUGIN_PACKAGE = Path(__file__).parent / "vllm_plugins"


def install_plugin_package(site: Path) -> dict[str, str]:
    """What ``pip install tests/bridges/vllm_plugins`` leaves behind, in ``site`` (the
    package's folder goes on the path beside it); the environment of a child that
    sees it installed."""
    project = tomllib.loads((PLUGIN_PACKAGE / "pyproject.toml").read_text())["project"]
    entry_points = project["entry-points"]["vllm.platform_plugins"]
    dist_info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (dist_info / "entry_points.txt").write_text(
        "[vllm.platform_plugins]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items()))
    path = [str(site), str(PLUGIN_PACKAGE), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


def run_bridged(folder: Path, platform: str, *args: str,
                env: dict[str, str] | None = None) -> tuple[dict | None, subprocess.CompletedProcess]:
    """``pytest --platform=vllm:PLATFORM ARGS`` in ``folder``: its record (None when
    it wrote none) and the run."""
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / "record.json"
    run = patience.run_watched(
        [sys.executable, "-m", "pytest", f"--platform=vllm:{platform}", "-p", "no:cacheprovider",
         f"--conformance-record={record}", *args],
        folder, watched=[record], cwd=folder, env=env)
    return (json.loads(record.read_text()) if record.exists() else None), run


def by_contract(record: dict) -> dict[str, list[dict]]:
    tests: dict[str, list[dict]] = {}
    for test in record["tests"]:
        tests.setdefault(test["contract"], []).append(test)
    return tests
