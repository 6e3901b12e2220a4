"""Discovery: finding plugins by entry point, and every way that can go wrong."""

from __future__ import annotations

import pytest
from plugins import catalogue

from conformance.contract.discovery import PlatformPluginError, load_platform


@pytest.fixture
def installed(monkeypatch, plugin_site):
    """The test plugins visible to this process."""
    monkeypatch.syspath_prepend(str(catalogue.PLUGIN_SOURCES))
    monkeypatch.syspath_prepend(str(plugin_site))
    return plugin_site


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
