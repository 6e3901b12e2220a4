"""Filtered sampling, shared by the Worker and Engine suites: the requests that use
every sampling parameter, the rule a sampled token obeys whatever the dtype, and how
close a sampled pick must be to the reference's.

The filters are hot (temperature 2 to 5), so a sampler that ignores ``top_k`` or
``top_p`` draws outside the kept set almost every time; each request is seeded, so
the reference's draws can be compared token for token in float32.
"""

from __future__ import annotations

from conformance.contract.sampling_params import SamplingParams
from conformance.suites.closeness import TOP_N, Logprobs, Tolerance, position_problem

#: A temperature this near zero leaves a chance to the most likely token alone, short
#: of near-ties (vLLM samples greedily below 1e-5; this is its smallest sampled one).
NEAR_ZERO_TEMPERATURE = 1e-5
#: A token this many temperatures below the top logprob is drawn with odds below
#: e**-30 to the top token's, whatever the filters (they only remove tokens).
NO_CHANCE = 30.0

FILTERED = (
    SamplingParams(temperature=3.0, top_k=3, seed=2001, logprobs=TOP_N),
    SamplingParams(temperature=2.0, top_p=0.3, seed=2002, logprobs=TOP_N),
    SamplingParams(temperature=4.0, top_k=5, top_p=0.5, seed=2003, logprobs=TOP_N),
    # The narrowest filter of each kind, at the hottest temperature: only the top token
    # may be drawn. A sampler that leaves top_k=1 to a greedy path, or takes a tiny
    # top_p for "off", draws from the whole vocabulary.
    SamplingParams(temperature=5.0, top_k=1, seed=2004, logprobs=TOP_N),
    SamplingParams(temperature=5.0, top_p=1e-4, seed=2005, logprobs=TOP_N),
    # Each parameter's boundary value. top_k=-1 and a top_k beyond any vocabulary
    # filter nothing: a sampler that takes either for a count keeps no token or
    # raises. logprobs=0 asks for the sampled token's alone: a falsy 0 read as "none"
    # drops it. A temperature near zero draws the top token: logits divided by it in a
    # half dtype overflow.
    SamplingParams(temperature=5.0, top_k=-1, seed=2006, logprobs=0),
    SamplingParams(temperature=5.0, top_k=1 << 20, top_p=1.0, seed=2007, logprobs=TOP_N),
    SamplingParams(temperature=NEAR_ZERO_TEMPERATURE, seed=2008, logprobs=TOP_N),
)


def pick_problems(tokens: list[int], rows: list[Logprobs], params: SamplingParams) -> list[str]:
    """Why a request's sampled ``tokens``, judged by its own reported logprobs (a row
    per token), break ``params``: a row is not what ``logprobs`` asks for, or a pick
    could not have been drawn."""
    rows = [*rows, *[{}] * (len(tokens) - len(rows))]
    return [f"position {i}: {problem}" for i, (token, row) in enumerate(zip(tokens, rows))
            if (problem := logprobs_problem(token, row, params.logprobs) or impossible_pick(token, row, params))]


def logprobs_problem(token: int, row: Logprobs, n: int | None) -> str | None:
    """Why ``row`` is not what ``logprobs=n`` asks for where ``token`` was sampled, or
    None: the sampled token's logprob and the n most likely tokens', no others, so n
    entries where the sampled token is among the n most likely, else n + 1."""
    if n is None:
        return None
    if token not in row:
        return f"no logprob reported for the sampled token {token} (logprobs={n}, reported {sorted(row)})"
    others = [t for t in row if t != token]
    if len(others) == n - 1 or (len(others) == n and all(row[t] >= row[token] for t in others)):
        return None
    return (f"{len(row)} logprobs reported for the sampled token {token} with logprobs={n}, "
            f"expected its own and the {n} most likely tokens': {row}")


def impossible_pick(token: int, logprobs: Logprobs, params: SamplingParams) -> str | None:
    """Why ``token`` could not have been drawn under ``params``, or None.

    Logprobs are of the raw distribution, whose order temperature keeps, so a token
    outside the top k by logprob was outside the filter too. A token tied with the
    k-th (common in the half dtypes, whose logits take few values) is inside: which
    of tied tokens a filter keeps is the sampler's choice. A token ``NO_CHANCE``
    temperatures below the top logprob had no chance at all: at a temperature near
    zero, that is every token but the top one and its near-ties."""
    if token not in logprobs or params.greedy:
        return None
    if params.top_k > 0:
        kept = sorted(logprobs, key=logprobs.get, reverse=True)[: params.top_k]
        if logprobs[token] < logprobs[kept[-1]]:
            return (f"sampled {token} outside its top {params.top_k} {kept} (top_k={params.top_k}, "
                    f"top_p={params.top_p}, temperature={params.temperature})")
    top = max(logprobs.values())
    if logprobs[token] < top - NO_CHANCE * params.temperature:
        return (f"sampled {token} at logprob {logprobs[token]:.5g}, {top - logprobs[token]:.3g} below the "
                f"top's {top:.5g}: at temperature {params.temperature} its odds were below e**-{NO_CHANCE:g}")
    return None


def sampled_position_problem(ref_token: int, ref_lps: Logprobs, token: int, lps: Logprobs,
                             tol: Tolerance) -> str | None:
    """``closeness.position_problem`` for a sampled pick. In float32 the same rule. In
    the half dtypes a pick may differ from the reference's at any rank: a random draw
    from a nearly flat distribution lands near a tie, which rounding flips, so the
    top-N rule of greedy picks does not apply; the logprobs of tokens both runs
    report must still be close, and ``outside_top_k`` judges the pick itself."""
    return position_problem(ref_token, ref_lps, token if tol.exact_tokens else ref_token, lps, tol)
