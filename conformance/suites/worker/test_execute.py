"""Worker suite, execute_model: the plugin's worker samples what the reference's does,
step by step, for prefill, decode and mixed batches and for seeded sampling."""

from __future__ import annotations

import pytest

from conformance.suites import model_settings
from conformance.suites.closeness import tolerance_for
from conformance.suites.sampling import pick_problems, sampled_position_problem
from conformance.suites.worker import driving
from conformance.suites.worker.driving import step_problems


def _compare_steps(kind: str, reference_run, plugin_run, tolerance) -> None:
    indices = [i for i, step in enumerate(plugin_run.steps) if step.kind == kind]
    assert indices, f"the script has no {kind} step"
    problems = step_problems(reference_run, indices, [plugin_run.results[i] for i in indices], tolerance)
    assert not problems, "\n".join(problems)


@pytest.mark.contract("worker.execute.prefill")
def test_prefill_matches_reference(reference_run, plugin_run, tolerance):
    """The teacher-forced script's prefill step (19- and 7-token prompts), on the
    plugin's and the reference platform's workers, compared by ``step_problems``:
    sampled ids, then picks and logprobs by the dtype's rule."""
    _compare_steps("prefill", reference_run, plugin_run, tolerance)


@pytest.mark.contract("worker.execute.decode")
def test_decode_matches_reference(reference_run, plugin_run, tolerance):
    """The script's three teacher-forced decode steps of two requests, on the plugin's
    and the reference worker, compared request by request by ``step_problems`` under the
    dtype's tolerance."""
    _compare_steps("decode", reference_run, plugin_run, tolerance)


@pytest.mark.contract("worker.execute.mixed")
def test_mixed_batch_matches_reference(reference_run, plugin_run, tolerance):
    """The script's two mixed steps (a 12- then 9-token chunk of a third request beside
    two decodes, the first chunk unsampled) compared with the reference worker's:
    sampled ids, then picks and logprobs by the dtype's rule."""
    _compare_steps("mixed", reference_run, plugin_run, tolerance)


def _declared_variants(platform, worker_config):
    """Every other declared block size in the suite's dtype, every other declared dtype
    in the suite's block size, and every declared KV-cache dtype besides ``"auto"`` in
    both: each declared value once, beside the script's, as ``(dtype, block size,
    KV-cache dtype)``."""
    caps, dtype, block_size = platform.capabilities, worker_config.dtype, worker_config.block_size
    return ([(dtype, size, "auto") for size in caps.block_sizes if size != block_size]
            + [(other, block_size, "auto") for other in caps.dtypes if other != dtype]
            + [(dtype, block_size, cache) for cache in caps.kv_cache_dtypes if cache != "auto"])


@pytest.mark.contract("worker.execute.decode")
def test_every_declared_block_size_and_dtype(platform, worker_config, steps):
    """Runs the script's prefill and first two decodes on both workers in each other
    declared block size (suite dtype) and dtype (suite block size) the reference also
    declares, and with the plugin's cache in each declared KV-cache dtype besides
    ``"auto"`` (the reference's in the model dtype); decodes compared by each dtype's
    tolerance (the cache dtype's where coarser)."""
    reference = model_settings.reference_platform()
    problems = []
    for dtype, block_size, cache in _declared_variants(platform, worker_config):
        if block_size not in reference.capabilities.block_sizes or dtype not in reference.capabilities.dtypes:
            continue
        script = driving.script(block_size)[:3]
        runs = [driving.run_in_process(driving.engine_config(p, dtype, worker_config.model, block_size=block_size,
                                                             kv_cache_dtype=kv_cache_dtype), script)
                for p, kv_cache_dtype in ((reference, "auto"), (platform, cache))]
        decodes = [i for i, step in enumerate(script) if step.kind == "decode"]
        problems += [f"{model_settings.dtype_name(dtype)}, block size {block_size}, KV-cache dtype {cache!r}: "
                     f"{problem}"
                     for problem in step_problems(runs[0], decodes, [runs[1].results[i] for i in decodes],
                                                  tolerance_for(dtype, cache))]
    assert not problems, "\n".join(problems[:5])


@pytest.mark.contract("worker.execute.sampling_params")
def test_filtered_sampling_matches_reference(reference_run, plugin_run, tolerance):
    """On the script's filtered step (the requests of ``sampling.FILTERED``: seeded
    ``top_k`` 3, ``top_p`` 0.3, both, the narrowest of each, and each parameter's
    boundary value) checks each pick and its logprobs with ``pick_problems`` against
    its own logprobs, then compares with the reference worker by
    ``sampled_position_problem``."""
    (index,) = [i for i, step in enumerate(plugin_run.steps) if step.kind == "filtered"]
    result, requests = plugin_run.results[index], plugin_run.steps[index].output.requests
    problems = [f"request {request.request_id!r}: {problem}"
                for request, token, logprobs in zip(requests, result.tokens, result.logprobs)
                for problem in pick_problems([token], [logprobs], request.params)]
    problems += step_problems(reference_run, [index], [result], tolerance, rule=sampled_position_problem)
    assert not problems, "\n".join(problems)


@pytest.mark.contract("worker.execute.seeded_sampling")
def test_seeded_sampling_reproducible(reference_run, plugin_run, tolerance):
    """The script runs its seeded step (three seeded requests, one unseeded) twice,
    unchanged; compares the seeded requests' picks across the two runs and, in float32,
    with the reference worker's."""
    first, again = [i for i, step in enumerate(plugin_run.steps) if step.kind == "seeded"]
    seeded = {r.request_id for r in plugin_run.steps[first].output.requests if r.params.seed is not None}

    def picks(result):
        return {rid: t for rid, t in zip(result.req_ids, result.tokens) if rid in seeded}

    assert picks(plugin_run.results[again]) == picks(plugin_run.results[first]), (
        "the same seeded step run twice sampled different tokens: "
        f"{picks(plugin_run.results[first])} then {picks(plugin_run.results[again])}")
    if tolerance.exact_tokens:
        assert picks(plugin_run.results[first]) == picks(reference_run.results[first]), (
            f"seeded picks {picks(plugin_run.results[first])}, "
            f"the reference worker's {picks(reference_run.results[first])}")


@pytest.mark.contract("worker.execute.seeded_sampling")
def test_unseeded_sampling_repeats_under_the_engine_seed(plugin_run, plugin_rerun, worker_config):
    """Runs the script on a second worker built from the same config, after the first
    has run it; compares the picks of the request without a seed in the seeded steps
    (two draws from the worker's generator, hot enough that chance agreement is
    negligible) across the two workers."""
    def unseeded_picks(run):
        picks = []
        for step, result in ((s, run.results[i]) for i, s in enumerate(run.steps) if s.kind == "seeded"):
            unseeded = {r.request_id for r in step.output.requests if r.sample and r.params.seed is None
                        and r.params.temperature > 0}
            picks += [(rid, token) for rid, token in zip(result.req_ids, result.tokens) if rid in unseeded]
        return picks

    first, second = unseeded_picks(plugin_run), unseeded_picks(plugin_rerun)
    assert first, "the script has no unseeded sampled request"
    assert first == second, (
        f"two workers built from one config (seed {worker_config.seed}) sampled "
        f"different tokens for a request without a seed: {first} then {second}; init_device must "
        "seed the worker's generator with config.seed")
