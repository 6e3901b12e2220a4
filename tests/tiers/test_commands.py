"""The commands on the worked example's signed records: ``conformance tiers``,
``release-check`` and ``drift``, their exit statuses and one-line refusals."""

from __future__ import annotations

import json

import pytest
from worked_example import AS_OF, write_example

from conformance.cli import main
from conformance.matrix.kits import installed_kit


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    return write_example(tmp_path_factory.mktemp("records"))


def run(capsys, *argv) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_tiers_of_three_histories(records, capsys):
    """Rule: the CI-built nightly platform is official until its candidate run fails,
    the vendor-signed one is supported, the self-reported one experimental; each rule
    is explained, and the next tier's missing rules are named."""
    status, out, _ = run(capsys, "tiers", str(records), "--as-of", AS_OF, "--allow-unreleased", "--json")
    assert status == 0
    tiers = {r["key"]["plugin"]: r for r in json.loads(out)}
    assert {plugin: r["tier"] for plugin, r in tiers.items()} == {
        "acme_npu": "experimental", "tpu_lab": "supported", "newchip": "experimental"}
    assert [c["rule"] for c in tiers["tpu_lab"]["missing"]] == [
        "official.nightly_streak", "official.fresh", "official.waivers", "official.suites"]
    streak = next(c for c in tiers["acme_npu"]["checks"] if c["rule"] == "supported.green_streak")
    assert "broken by" in streak["because"] and streak["records"][0].endswith("nightly-23.record.json")


def test_release_check_blocked_by_the_official_platform(records, capsys):
    """Rule: release-check exits 1 naming the official platform whose candidate record
    fails; the others are listed, not blocking."""
    status, out, _ = run(capsys, "release-check", "--kit", installed_kit().version, str(records), "--as-of", AS_OF)
    assert status == 1
    head, *entries = out.splitlines()
    assert "is BLOCKED by 1 platform(s) at official or above (policy 1): acme_npu on Acme NPU 2" in head
    assert [line.split("]", 1)[0].strip() for line in entries] == ["[BLOCKS", "[not blocking", "[not blocking"]


@pytest.mark.parametrize(("argv", "message"), [
    (["release-check", "--kit", "9.9"], "--kit '9.9' is not the installed kit"),
    (["tiers", "--as-of", "yesterday"], "'yesterday' is not an RFC 3339 time"),
    (["tiers", "--policy", "missing.toml"], "missing.toml: cannot read it"),
    (["tiers", "--fleet", "missing.toml"], "cannot read fleet file missing.toml"),
])
def test_bad_input_is_one_line(records, capsys, argv, message):
    """Rule: bad input exits 2 with one line naming the culprit, no traceback."""
    status, out, err = run(capsys, *argv, str(records))
    assert status == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_drift_between_the_kept_releases(capsys):
    """Rule: ``conformance drift`` prints the change and the plugin's to-do list."""
    status, out, _ = run(capsys, "drift", "--from", "0.1.0", "--to", "0.1.1")
    assert status == 0
    assert out.splitlines()[:2] == [
        "contract drift from 0.1.0 (kit 0.1.0, contract 0.1) to 0.1.1 (kit 0.1.1, contract 0.1): 1 changes",
        "  changed function platform.Platform.manual_seed_all"]
    assert "  - re-read the rules of platform.Platform.manual_seed_all and rerun the suites: 1 new or reworded" in out


def test_compatibility_lists_plugin_versions_by_kit(records, capsys):
    """Rule: ``tiers --compatibility`` gives each plugin version's verdict per engine and kit."""
    status, out, _ = run(capsys, "tiers", str(records), "--as-of", AS_OF, "--allow-unreleased",
                         "--compatibility", "--json")
    assert status == 0
    acme = next(p for p in json.loads(out) if p["key"]["plugin"] == "acme_npu")["combinations"]
    assert [(c["plugin_version"], c["kit_version"], c["verdict"], c["runs"]) for c in acme] == [
        ("2.4.0", installed_kit().version, "NOT CONFORMANT", 1), ("2.4.0", "0.1.0", "CONFORMANT", 10)]


def test_release_check_as_json_names_the_blockers(records, capsys):
    """Rule: ``--json`` carries every entry, its standing and whether it blocks."""
    status, out, _ = run(capsys, "release-check", "--kit", installed_kit().version, str(records),
                         "--as-of", AS_OF, "--json")
    gate = json.loads(out)
    assert status == 1 and gate["blocked"] == ["acme_npu on Acme NPU 2 [acme-npu]"]
    assert {(e["key"]["plugin"], e["standing"], e["held_to"]) for e in gate["entries"]} == {
        ("acme_npu", "official", True), ("tpu_lab", "supported", False), ("newchip", "experimental", False)}


def test_tiers_says_which_soft_failing_devices_are_due(records, capsys, tmp_path):
    """Rule: ``tiers --fleet`` prints, per soft-failing device, whether its platform
    reached its promote_when, from the same records."""
    fleet = tmp_path / "fleet.toml"
    fleet.write_text('[[device]]\nname = "acme"\nplatform = "acme_npu"\nqueue = "npu"\n'
                     'soft_fail = true\npromote_when = "official"\n')
    status, out, _ = run(capsys, "tiers", str(records), "--as-of", AS_OF, "--allow-unreleased",
                         "--fleet", str(fleet))
    assert status == 0
    assert out.splitlines() == ["acme (soft-fail until official): acme_npu on Acme NPU 2 [acme-npu]: "
                                "is experimental; official needs supported.green_streak, "
                                "official.nightly_streak; not yet"]


@pytest.mark.parametrize(("promote_when", "status"), [("experimental", 1), ("official", 0)])
def test_check_fails_while_a_device_due_for_promotion_still_soft_fails(records, capsys, tmp_path,
                                                                       promote_when, status):
    """Rule: ``tiers --fleet --check`` exits 1 naming each soft-failing device whose
    platform reached its promote_when (a scheduled step fails until the fleet makes it
    required), 0 while none has."""
    fleet = tmp_path / "fleet.toml"
    fleet.write_text('[[device]]\nname = "acme"\nplatform = "acme_npu"\nqueue = "npu"\n'
                     f'soft_fail = true\npromote_when = "{promote_when}"\n')
    found, out, err = run(capsys, "tiers", str(records), "--as-of", AS_OF, "--allow-unreleased",
                          "--fleet", str(fleet), "--check")
    assert found == status, out + err
    if status:
        assert "due: make it required" in out
        assert err == (f"conformance tiers: due for promotion but still soft-failing: acme "
                       f"(set soft_fail = false in {fleet})\n")
    else:
        assert err == "" and "not yet" in out


def test_check_without_a_fleet_is_refused(records, capsys):
    status, _, err = run(capsys, "tiers", str(records), "--check")
    assert status == 2 and err == ("conformance tiers: --check needs --fleet FILE (it checks the "
                                   "fleet's soft-failing devices)\n")
