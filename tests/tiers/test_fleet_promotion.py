"""The fleet's promote_when names a tier or rule of the tier policy, never prose."""

from __future__ import annotations

import pytest

from conformance.ci.fleet import load_fleet
from conformance.ci.names import FleetError

FLEET = '''
[[device]]
name = "npu"
platform = "my_npu"
queue = "npu"
soft_fail = true
promote_when = {promote_when}
'''


@pytest.mark.parametrize("reference", ["official", "supported", "official.nightly_streak"])
def test_a_tier_or_rule_id_is_a_promotion(tmp_path, reference):
    """Rule: a soft-failing device is promoted by a tier or rule the policy defines."""
    path = tmp_path / "fleet.toml"
    path.write_text(FLEET.format(promote_when=f'"{reference}"'))
    (device,) = load_fleet(path).devices
    assert device.promote_when == reference


def test_prose_is_refused_naming_the_policys_names(tmp_path):
    """Rule: a promotion written as prose is one line naming the file, the device, the
    field, and the tiers and rules it may name."""
    path = tmp_path / "fleet.toml"
    path.write_text(FLEET.format(promote_when='"green on 10 consecutive nightly builds"'))
    with pytest.raises(FleetError) as refused:
        load_fleet(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: device 1 (npu): promote_when: 'green on 10 consecutive nightly builds' "
                              "is neither a tier nor a rule of the tier policy")
    assert "one of: experimental, supported, official, experimental.has_record" in message
    assert "\n" not in message
