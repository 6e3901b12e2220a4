"""Discovery: finding plugins by entry point, and every way that can go wrong."""

from __future__ import annotations

import multiprocessing

import pytest

from conformance.reference_engine import platforms
from conformance.reference_engine.platforms import (
    PLATFORM_ENV_VAR,
    PlatformPluginError,
    get_current_platform,
    load_platform,
    set_current_platform,
)
from plugins import catalogue


@pytest.fixture
def installed(monkeypatch, plugin_site):
    """The test plugins visible to this process, and the platform selection
    restored afterwards."""
    monkeypatch.syspath_prepend(str(catalogue.PLUGIN_SOURCES))
    monkeypatch.syspath_prepend(str(plugin_site))
    monkeypatch.delenv(PLATFORM_ENV_VAR, raising=False)
    monkeypatch.setattr(platforms, "_selected", None)
    return plugin_site


def _platform_of_spawned_process() -> str:
    return get_current_platform().__qualname__


def test_third_party_plugin_resolves(installed):
    """A plugin registered by another distribution resolves to its Platform class."""
    assert load_platform("good_cpu").__qualname__ == "GoodPlatform"


def test_unknown_name_lists_installed_plugins(installed):
    """An unknown name is one line listing every installed plugin with its
    distribution and version."""
    with pytest.raises(PlatformPluginError) as error:
        load_platform("nosuch")
    message = str(error.value)
    assert "\n" not in message and "'nosuch'" in message
    assert "cpu [conformance " in message and "good_cpu [kit_test_plugins 1.0]" in message


@pytest.mark.parametrize("name", sorted(catalogue.UNLOADABLE))
def test_unloadable_plugins_get_one_line_errors(installed, name):
    """A plugin that raises, names no Platform subclass, names nothing importable or
    reports its device unusable gets a one-line error naming it and its distribution."""
    _, words = catalogue.UNLOADABLE[name]
    with pytest.raises(PlatformPluginError) as error:
        load_platform(name)
    message = str(error.value)
    assert "\n" not in message
    assert f"{name} [kit_test_plugins 1.0]" in message and words in message


def test_name_claimed_by_two_distributions_is_refused(installed, tmp_path, monkeypatch):
    """Two distributions registering the same name is an error naming both, and
    does not stop other plugins from loading."""
    catalogue.write_distribution(
        tmp_path, "other_vendor_plugin", "2.0", {"good_cpu": "other_vendor:Platform"}
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PlatformPluginError) as error:
        load_platform("good_cpu")
    assert "kit_test_plugins 1.0" in str(error.value)
    assert "other_vendor_plugin 2.0" in str(error.value)
    assert load_platform("cpu").__qualname__ == "CpuPlatform"


def test_current_platform_is_inherited_by_spawned_processes(installed):
    """The platform selected in a process is the current platform of the processes
    it spawns."""
    set_current_platform("good_cpu")
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        assert pool.apply(_platform_of_spawned_process) == "GoodPlatform"


@pytest.mark.parametrize("name", ["raising", "nosuch"])
def test_pytest_reports_plugin_errors_in_one_line(run_kit, name):
    """``pytest --platform=NAME`` for a plugin that cannot load exits non-zero with
    one ERROR line naming it (after the plugin's traceback, if it raised), never an
    INTERNALERROR."""
    run = run_kit(f"--platform={name}")
    assert run.returncode == 4, run.output
    assert "INTERNALERROR" not in run.output
    errors = [line for line in run.output.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1, run.output
    assert f"'{name}'" in errors[0] or f"{name} [" in errors[0], errors
    if name == "raising":
        assert 'raise RuntimeError("vendor runtime library' in run.output
    else:
        assert "installed: " in errors[0] and "cpu [conformance" in errors[0]
