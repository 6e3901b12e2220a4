"""Platforms whose worker breaks one rule of the Worker contract: each worker is the
generic ``Worker`` with exactly one bug, returned by its platform's ``get_worker_cls``."""

from __future__ import annotations

import dataclasses
import functools

import torch
from kit_test_plugins import TestPlatform, platform_naming

from conformance.reference_engine.sampler import Sampler
from conformance.reference_engine.worker.worker import Worker


def _with_params(request, **changes):
    return dataclasses.replace(request, params=dataclasses.replace(request.params, **changes))


class OverstatedMemoryWorker(Worker):
    """Reports twice the device's total memory as free for the KV cache."""

    def determine_available_memory(self) -> int:
        return 2 * self.platform.get_device_total_memory(self.device.index or 0)


class UnstableMemoryWorker(Worker):
    """Profiles again on every call while the earlier profiles' buffers still count as
    used, so each answer is smaller than the last."""

    _calls = 0

    def determine_available_memory(self) -> int:
        self._calls += 1
        return super().determine_available_memory() // self._calls


class SeedIgnoringWorker(Worker):
    """Drops every request's sampling seed: seeded requests draw from the worker's
    shared generator, so their samples depend on what was drawn before."""

    def execute_model(self, scheduler_output):
        unseeded = [_with_params(r, seed=None) for r in scheduler_output.requests]
        return super().execute_model(dataclasses.replace(scheduler_output, requests=unseeded))


class EntropySeededWorker(Worker):
    """Seeds its sampler's generator from the operating system's entropy instead of
    the engine's seed (per-process randomness, as a sampler ported from a serving
    stack may want): seeded requests repeat, unseeded ones differ from run to run."""

    def load_model(self) -> None:
        super().load_model()
        self.model_runner.sampler.generator.seed()


class FilterIgnoringWorker(Worker):
    """Ignores top_k and top_p (a sampler fast path that only looks at temperature)."""

    def execute_model(self, scheduler_output):
        unfiltered = [_with_params(r, top_k=0, top_p=1.0) for r in scheduler_output.requests]
        return super().execute_model(dataclasses.replace(scheduler_output, requests=unfiltered))


class TopKOneUnfilteredWorker(Worker):
    """Takes ``top_k=1`` for a greedy request and leaves it to the greedy path, which a
    request with a temperature never takes: its filter keeps the whole vocabulary."""

    def execute_model(self, scheduler_output):
        requests = [_with_params(r, top_k=0) if r.params.top_k == 1 else r for r in scheduler_output.requests]
        return super().execute_model(dataclasses.replace(scheduler_output, requests=requests))


class TopKAsCountSampler(Sampler):
    """Keeps each row's top k with ``torch.topk`` wherever ``top_k`` is not 0: -1, or a
    ``top_k`` beyond the vocabulary, is out of ``topk``'s range and raises."""

    def _filter(self, logits, requests):
        for row, request in zip(logits, requests):
            if request.params.top_k != 0:
                kth = row.topk(request.params.top_k).values[-1]
                row.masked_fill_(row < kth, float("-inf"))
        return super()._filter(logits, [_with_params(r, top_k=0) for r in requests])


class TopKAsCountWorker(Worker):
    """Samples with ``TopKAsCountSampler``: only 0 disables ``top_k`` for it."""

    def load_model(self) -> None:
        super().load_model()
        self.model_runner.sampler = TopKAsCountSampler(self.device, self.config.seed)


class LogprobsZeroDroppedWorker(Worker):
    """Reports logprobs only for requests whose ``logprobs`` is truthy, so
    ``logprobs=0`` (the sampled token's alone) is read as "none"."""

    def execute_model(self, scheduler_output):
        output = super().execute_model(scheduler_output)
        if output.logprobs is not None:
            wanted = {r.request_id: r.params.logprobs for r in scheduler_output.requests}
            output.logprobs = [row if wanted[rid] else {} for rid, row in zip(output.req_ids, output.logprobs)]
        return output


class HalfTemperatureSampler(Sampler):
    """Divides the logits by the temperature in the model's dtype, then samples in
    float32: near zero, the quotient overflows float16 and the draw reads NaN."""

    def __init__(self, device, seed: int, dtype) -> None:
        super().__init__(device, seed)
        self.dtype = dtype

    def _sample(self, logits, requests):
        scaled = torch.stack([row.to(self.dtype) / (r.params.temperature or 1.0)
                              for row, r in zip(logits, requests)]).float()
        return super()._sample(scaled, [_with_params(r, temperature=1.0) for r in requests])


class HalfTemperatureWorker(Worker):
    """Samples with ``HalfTemperatureSampler``."""

    def load_model(self) -> None:
        super().load_model()
        self.model_runner.sampler = HalfTemperatureSampler(self.device, self.config.seed, self.config.dtype)


class StaleTokensWorker(Worker):
    """Returns, for a request it sampled in the previous step, that step's token and
    logprobs (an output buffer read before the new step's results land in it)."""

    _previous: dict = {}

    def execute_model(self, scheduler_output):
        output = super().execute_model(scheduler_output)
        rows = output.logprobs or [None] * len(output.req_ids)
        current = {r: (t, row) for r, t, row in zip(output.req_ids, output.sampled_token_ids, rows)}
        stale = [self._previous.get(r, now) for r, now in current.items()]
        output.sampled_token_ids = [t for t, _ in stale]
        if output.logprobs is not None:
            output.logprobs = [row for _, row in stale]
        self._previous = current
        return output


class FirstTokenLogitsWorker(Worker):
    """Samples each request from the logits of its first new token instead of its
    last (an off-by-a-chunk index): right for a decode, wrong after any prefill."""

    def load_model(self) -> None:
        super().load_model()
        prepare = self.model_runner.prepare_inputs

        def first_token_rows(scheduler_output):
            input_ids, positions, metadata, _ = prepare(scheduler_output)
            rows = [i for i, r in enumerate(scheduler_output.requests) if r.sample]
            return input_ids, positions, metadata, metadata.query_start_loc[:-1].long()[rows]

        self.model_runner.prepare_inputs = first_token_rows


class LeakingWorker(Worker):
    """Keeps the KV cache alive after ``shutdown``: a reference in a registry of its
    own that nothing clears."""

    def shutdown(self) -> None:
        if self.model_runner is not None:
            self._kept_caches = [layer.kv_cache for layer in self.model_runner.model.attention_layers()]
        super().shutdown()


class DriftedSignatureWorker(Worker):
    """Written against another contract version: its health check wants an argument
    the executor never passes."""

    def check_health(self, timeout_s: float) -> None:
        super().check_health()


_platform = functools.partial(platform_naming, "get_worker_cls", module=__name__)


OverstatedMemoryWorkerPlatform = _platform(OverstatedMemoryWorker)
UnstableMemoryWorkerPlatform = _platform(UnstableMemoryWorker)
SeedIgnoringWorkerPlatform = _platform(SeedIgnoringWorker)
EntropySeededWorkerPlatform = _platform(EntropySeededWorker)
FilterIgnoringWorkerPlatform = _platform(FilterIgnoringWorker)
TopKOneUnfilteredWorkerPlatform = _platform(TopKOneUnfilteredWorker)
TopKAsCountWorkerPlatform = _platform(TopKAsCountWorker)
LogprobsZeroDroppedWorkerPlatform = _platform(LogprobsZeroDroppedWorker)
StaleTokensWorkerPlatform = _platform(StaleTokensWorker)
FirstTokenLogitsWorkerPlatform = _platform(FirstTokenLogitsWorker)
DriftedSignatureWorkerPlatform = _platform(DriftedSignatureWorker)
LeakingWorkerPlatform = _platform(LeakingWorker)


class HalfTemperatureWorkerPlatform(_platform(HalfTemperatureWorker)):
    """float16 only, so the suites sample in it."""

    capabilities = dataclasses.replace(TestPlatform.capabilities, dtypes=(torch.float16,))
