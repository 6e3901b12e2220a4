"""How close a plugin's tokens and logprobs must be to the reference's, per dtype.

One table for the Worker and Engine suites, reviewed as a whole. In float32 a
correct plugin picks exactly the reference's greedy tokens; in the half dtypes the
rounding of a different (correct) kernel may flip a near-tie, so a pick may differ
only where both picks are among the other run's top-N most likely tokens (vLLM's
``check_logprobs_close``). Logprobs of a token both runs report may differ by the
dtype's absolute bound; the broken plugins in ``tests/`` are far beyond it.
"""

from __future__ import annotations

import dataclasses

import torch

#: Logprobs each comparison asks for: the top-N of the closeness rule.
TOP_N = 5


@dataclasses.dataclass(frozen=True)
class Tolerance:
    #: Greedy picks must be identical (else the top-N closeness rule applies).
    exact_tokens: bool
    #: Largest |logprob difference| for a token both runs report at one position.
    logprob_atol: float


TOLERANCES = {
    torch.float32: Tolerance(exact_tokens=True, logprob_atol=1e-2),
    torch.bfloat16: Tolerance(exact_tokens=False, logprob_atol=0.3),
    torch.float16: Tolerance(exact_tokens=False, logprob_atol=0.1),
}

#: Tensor parallelism reorders the reductions, so even float32 may flip a near-tie.
TENSOR_PARALLEL = Tolerance(exact_tokens=False, logprob_atol=1e-2)

#: ``{token_id: logprob}`` at one position (the sampled token and the top N).
Logprobs = dict[int, float]


def position_problem(ref_token: int, ref_lps: Logprobs, token: int, lps: Logprobs,
                     tol: Tolerance) -> str | None:
    """Why one position's pick and logprobs are not close enough, or None."""
    if token != ref_token:
        if tol.exact_tokens:
            return f"picked token {token}, the reference {ref_token} ({_pick_logprobs(ref_token, ref_lps, token, lps)})"
        if token not in ref_lps or ref_token not in lps:
            return (f"picked token {token}, the reference {ref_token}, and the picks are not "
                    f"both in the other run's top {TOP_N}: reference top {sorted(ref_lps)}, "
                    f"plugin top {sorted(lps)} ({_pick_logprobs(ref_token, ref_lps, token, lps)})")
    for t in sorted(ref_lps.keys() & lps.keys()):
        if not abs(lps[t] - ref_lps[t]) <= tol.logprob_atol:  # NaN is a problem too
            return (f"logprob of token {t} is {lps[t]:.5g}, the reference's {ref_lps[t]:.5g} "
                    f"(tolerance {tol.logprob_atol})")
    return None


def _pick_logprobs(ref_token: int, ref_lps: Logprobs, token: int, lps: Logprobs) -> str:
    """Both picks' logprobs in both runs: a near-tie that rounding flipped reads apart
    from a wrong distribution."""
    def value(logprobs: Logprobs, t: int) -> str:
        return f"{logprobs[t]:.5g}" if t in logprobs else "not reported"

    return (f"logprobs, plugin vs reference: token {token} {value(lps, token)} vs {value(ref_lps, token)}, "
            f"token {ref_token} {value(lps, ref_token)} vs {value(ref_lps, ref_token)}")


def sequence_problem(ref_tokens: list[int], ref_lps: list[Logprobs], tokens: list[int],
                     lps: list[Logprobs], tol: Tolerance, rule=position_problem) -> str | None:
    """Why a generated sequence is not close enough to the reference's, or None.

    Positions are compared in order; at the first position where the picks differ
    (allowed only by the closeness rule) the comparison stops, since what follows
    continues different texts.
    """
    for i, (ref_token, token) in enumerate(zip(ref_tokens, tokens)):
        problem = rule(ref_token, ref_lps[i], token, lps[i], tol)
        if problem:
            return f"position {i}: {problem} (reference {ref_tokens}, plugin {tokens})"
        if token != ref_token:
            return None
    if len(tokens) != len(ref_tokens):
        return f"{len(tokens)} tokens, the reference {len(ref_tokens)}: {tokens} vs {ref_tokens}"
    return None


def tolerance_for(dtype: torch.dtype, kv_cache_dtype: str = "auto") -> Tolerance:
    """The model dtype's tolerance, or the KV-cache dtype's where that is coarser:
    every later token reads keys and values as the cache rounded them."""
    cache = dtype if kv_cache_dtype == "auto" else getattr(torch, kv_cache_dtype)
    return max(TOLERANCES[dtype], TOLERANCES[cache], key=lambda t: (not t.exact_tokens, t.logprob_atol))
