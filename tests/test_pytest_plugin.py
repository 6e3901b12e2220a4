"""The pytest plugin: its absence without --platform, options, the header, selection
by contract id, fixtures for a plugin's own tests. (Whole runs from an empty folder,
under xdist, are in ``test_cli`` and ``test_plugin_catalogue``.)"""

from __future__ import annotations

import re
import textwrap

from conformance._version import __version__
from conformance.contract.version import CONTRACT_VERSION
from conformance.pytest_plugin.collection import available_suites

OWN_TEST = '''
import pytest, torch

@pytest.mark.contract("vendor.kernels.add")
def test_add_on_device(platform, device, capabilities):
    """The vendor's own test, written with the kit's fixtures."""
    assert platform.device_type == device.type
    x = torch.ones(4, device=device, dtype=capabilities.dtypes[0])
    assert (x + x).sum().item() == 8
'''


def test_without_platform_the_plugin_is_inert(run_kit, tmp_path):
    """Without ``--platform`` pytest collects only the project's tests, prints no kit
    header and offers none of the kit's fixtures."""
    (tmp_path / "test_unrelated.py").write_text(
        "def test_plain():\n    assert 1 + 1 == 2\n\n"
        "def test_wants_kit_fixture(platform):\n    pass\n"
    )
    run = run_kit("-q", "-rA")
    assert run.returncode == 1, run.output
    assert "1 passed, 1 error" in run.output and "fixture 'platform' not found" in run.output
    assert "conformance kit" not in run.output


def test_record_option_needs_platform(run_kit):
    """``--conformance-record`` without ``--platform`` is a usage error."""
    run = run_kit("--conformance-record=x.json")
    assert run.returncode == 4 and "--conformance-record needs --platform" in run.output


def test_unknown_suite_is_a_usage_error(run_kit):
    """``--suite`` with an unknown name is a one-line error listing the suites."""
    run = run_kit("--platform=cpu", "--suite=platform,nosuch")
    assert run.returncode == 4 and "unknown suite 'nosuch'" in run.output
    assert f"available: {', '.join(available_suites())})" in run.output


def test_header_names_plugin_device_and_versions(run_kit):
    """The header names the plugin and its version, the device, the kit and the
    contract version."""
    run = run_kit("--platform=good_cpu", "--collect-only")
    assert f"conformance kit {__version__}, contract {CONTRACT_VERSION}" in run.output
    assert "platform plugin: good_cpu [kit_test_plugins 1.0]" in run.output
    assert re.search(r"device: .+ \(cpu x1\)", run.output), run.output


def test_contract_id_selects_with_k(run_kit):
    """``-k CONTRACT_ID`` selects the tests of that contract."""
    run = run_kit("--platform=cpu", "-k", "platform.runtime.memory",
                  "--conformance-record=run.record.json")
    assert run.returncode == 0, run.output
    assert {t["contract"] for t in run.record["tests"]} == {"platform.runtime.memory"}


def test_plugin_tests_use_the_kit_fixtures(run_kit, tmp_path):
    """A plugin's own test folder, run with ``--platform``, can use the kit's
    fixtures and contract marker, and the kit's suites are then not collected."""
    (tmp_path / "vendor_tests").mkdir()
    (tmp_path / "vendor_tests" / "test_vendor.py").write_text(textwrap.dedent(OWN_TEST))
    run = run_kit("--platform=good_cpu", "vendor_tests", "--conformance-record=run.record.json")
    assert run.returncode == 0, run.output
    tests = run.record["tests"]
    assert [(t["contract"], t["outcome"]) for t in tests] == [("vendor.kernels.add", "passed")]
