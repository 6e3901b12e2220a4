"""Platform suite, discovery: how the kit (and an engine) finds the plugin."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import pytest

from conformance.contract.discovery import call_plugin_function

# Run in a fresh interpreter: only there is "nothing initialised yet" observable.
_IMPORT_PROBE = """
import json, pkgutil, sys, torch
from conformance.contract.discovery import call_plugin_function, find_plugin

def uninitialised_runtimes():
    names = [n for n in dir(torch) if not n.startswith("_")]
    runtimes = [(n, getattr(getattr(torch, n, None), "is_initialized", None)) for n in names]
    return {n for n, probe in runtimes if callable(probe) and probe() is False}

lazy = uninitialised_runtimes()
pkgutil.resolve_name(call_plugin_function(find_plugin(sys.argv[1])))
print(json.dumps(sorted(lazy - uninitialised_runtimes())))
"""


@pytest.mark.contract("platform.discovery.entry_point")
def test_entry_point_names_the_platform_class(plugin_entry, platform):
    """Calls the plugin's entry point, checks it returns a str, and checks that
    ``pkgutil.resolve_name`` of it is the platform class under test."""
    qualname = call_plugin_function(plugin_entry)
    assert isinstance(qualname, str), f"entry point returned {qualname!r}, not a str"
    assert pkgutil.resolve_name(qualname) is platform


@pytest.mark.contract("platform.discovery.idempotent")
def test_entry_point_is_idempotent(plugin_entry):
    """Calls the plugin's entry point three times in this process and compares the three
    answers."""
    answers = [call_plugin_function(plugin_entry) for _ in range(3)]
    assert len(set(answers)) == 1, f"entry point answered differently: {answers}"


@pytest.mark.contract("platform.discovery.no_device_init")
def test_discovery_initialises_no_device(platform_name, platform):
    """A fresh interpreter lists torch's runtimes whose ``is_initialized()`` is False,
    finds and calls the entry point, resolves the class and lists them again; fails on
    any runtime that left the list, or a failing subprocess."""
    probe = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE, platform_name],
        capture_output=True, text=True, timeout=120,
    )
    assert probe.returncode == 0, f"discovery failed in a fresh process:\n{probe.stderr}"
    initialised = json.loads(probe.stdout.strip().splitlines()[-1])
    assert not initialised, (
        f"discovering {platform.__qualname__} initialised torch.{', torch.'.join(initialised)}"
    )
