"""Filtered sampling, shared by the Worker and Engine suites: the requests that use
every sampling parameter, the rule a sampled token obeys whatever the dtype, and how
close a sampled pick must be to the reference's.

The parameters are hot (temperature 2 to 5), so a sampler that ignores ``top_k`` or
``top_p`` draws outside the kept set almost every time; each is seeded, so the
reference's draws can be compared token for token in float32.
"""

from __future__ import annotations

from conformance.contract.sampling_params import SamplingParams
from conformance.suites.closeness import TOP_N, Logprobs, Tolerance, position_problem

FILTERED = (
    SamplingParams(temperature=3.0, top_k=3, seed=2001, logprobs=TOP_N),
    SamplingParams(temperature=2.0, top_p=0.3, seed=2002, logprobs=TOP_N),
    SamplingParams(temperature=4.0, top_k=5, top_p=0.5, seed=2003, logprobs=TOP_N),
    # The narrowest filter of each kind, at the hottest temperature: only the top token
    # may be drawn. A sampler that leaves top_k=1 to a greedy path, or takes a tiny
    # top_p for "off", draws from the whole vocabulary.
    SamplingParams(temperature=5.0, top_k=1, seed=2004, logprobs=TOP_N),
    SamplingParams(temperature=5.0, top_p=1e-4, seed=2005, logprobs=TOP_N),
)


def outside_top_k(token: int, logprobs: Logprobs, params: SamplingParams) -> str | None:
    """Why ``token`` could not have been drawn under ``params``' ``top_k``, or None.

    Logprobs are of the raw distribution, whose order temperature keeps, so a token
    outside the top k by logprob was outside the filter too. A token tied with the
    k-th (common in the half dtypes, whose logits take few values) is inside: which
    of tied tokens a filter keeps is the sampler's choice."""
    if params.top_k <= 0:
        return None
    kept = sorted(logprobs, key=logprobs.get, reverse=True)[: params.top_k]
    if token in kept or (token in logprobs and logprobs[token] >= logprobs[kept[-1]]):
        return None
    return (f"sampled {token} outside its top {params.top_k} {kept} (top_k={params.top_k}, "
            f"top_p={params.top_p}, temperature={params.temperature})")


def sampled_position_problem(ref_token: int, ref_lps: Logprobs, token: int, lps: Logprobs,
                             tol: Tolerance) -> str | None:
    """``closeness.position_problem`` for a sampled pick. In float32 the same rule. In
    the half dtypes a pick may differ from the reference's at any rank: a random draw
    from a nearly flat distribution lands near a tie, which rounding flips, so the
    top-N rule of greedy picks does not apply; the logprobs of tokens both runs
    report must still be close, and ``outside_top_k`` judges the pick itself."""
    return position_problem(ref_token, ref_lps, token if tol.exact_tokens else ref_token, lps, tol)
