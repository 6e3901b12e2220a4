"""Which soft-failing CI devices have earned promotion, by the tier policy.

A fleet's soft-failing device names, in ``promote_when``, a tier or a rule of the
policy. Its platform (the device's plugin, on whichever devices and distributions its
records name) is due for promotion when it holds that tier, or when that rule holds;
otherwise the rules still failing are what it needs. The fleet file stays the one
place a device is made required: this says when to make the edit, from records.
"""

from __future__ import annotations

import dataclasses

from conformance.tiers.compute import TierResult
from conformance.tiers.policy import Policy


@dataclasses.dataclass(frozen=True)
class Promotion:
    device: str  # the fleet's device name
    reference: str  # its promote_when
    platform: str  # the platform line judged, or the plugin name when none was found
    due: bool
    because: str


def promotions(devices: list[tuple[str, str, str]], results: dict, policy: Policy) -> list[Promotion]:
    """For each soft-failing ``(device name, plugin name, promote_when)``, whether
    each platform line of that plugin is due for promotion."""
    found = []
    for device, plugin, reference in devices:
        lines = [result for key, result in results.items() if key.plugin == plugin]
        if not lines:
            found.append(Promotion(device, reference, plugin, False,
                                   f"no judged record of plugin {plugin!r} among the records"))
        found += [_judge(device, reference, result, policy) for result in lines]
    return found


def _judge(device: str, reference: str, result: TierResult, policy: Policy) -> Promotion:
    if reference in policy.tier_names():
        due = policy.rank(result.tier) >= policy.rank(reference)
        needed = [c.rule for c in result.checks if not c.holds
                  and policy.rank(c.tier) <= policy.rank(reference)]
        because = (f"holds {result.tier}" if due else
                   f"is {result.tier or 'in no tier'}; {reference} needs {', '.join(needed)}")
    else:
        (check,) = [c for c in result.checks if c.rule == reference]
        due, because = check.holds, f"{reference} {'holds' if check.holds else 'fails'}: {check.because}"
    return Promotion(device, reference, str(result.key), due, because)
