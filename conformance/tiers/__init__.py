"""Support tiers computed from evidence, the release gate, and the contract's drift.

- ``policy``: the tier policy file (``policy.toml`` is the kit's) and its loader;
- ``evidence``: the facts of a checked record that the rules read;
- ``rules``: what each kind of policy rule checks; ``compute``: ``compute_tiers``;
- ``release_gate``: may a kit version be released, or which platforms block it;
- ``report``: their words and JSON;
- ``interface`` and ``drift``: snapshots of the plugin contract's interface, and what
  changed between two of them.

Nothing here reads record files or imports torch: callers hand over records they
have checked (``conformance/tiers_cli.py`` reads them as the support matrix does),
so the matrix and the CI, above this package, can show and use tiers.
"""

from conformance.tiers.compute import TierResult, compute_tiers
from conformance.tiers.evidence import Evidence, PlatformKey, evidence_of, judge_by_release
from conformance.tiers.policy import Policy, PolicyError, load_policy
from conformance.tiers.release_gate import GateResult, release_check
from conformance.tiers.rules import RuleCheck

__all__ = ["Evidence", "GateResult", "PlatformKey", "Policy", "PolicyError", "RuleCheck", "TierResult",
           "compute_tiers", "evidence_of", "judge_by_release", "load_policy", "release_check"]
