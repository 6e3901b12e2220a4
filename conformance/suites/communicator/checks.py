"""Checks that run on every rank, nccl-tests style: verifiable inputs, exact results.

Every rank fills its tensors with small integers that depend on the rank, the
element and a salt, so any rank can compute what every other rank holds, and every
sum over ranks is exactly representable in fp16, bf16 and fp32: a correct
collective gives the expected tensor bit for bit, whatever order it reduces in.
Each check returns a list of problems (empty when the rank saw nothing wrong).

Every tensor a collective returns goes through ``Problems.expect_tensor``, which
checks it (values exactly, shape, dtype, device) and keeps it; ``Problems.recheck``
compares each kept tensor again once the check's last call has returned. So every
collective is held to the properties its family shares (``conformance/suites/
families.py``) by the same code: a new collective's check cannot leave one out.
"""

from __future__ import annotations

import enum
import inspect
import itertools
import math
import time
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import torch

from conformance.contract.communicator import DeviceCommunicatorBase

_MAX_PROBLEMS = 5

#: Calls of one shape in a row: past the warm-up after which graph-capturing
#: communicators replay, and past a small ring of staging buffers.
REPEATED_CALLS = 12

#: Shapes whose last dim is neither the first nor the middle one, for the calls that
#: leave ``dim`` out: a default of any other dim gives another result.
DEFAULT_DIM_SHAPES = [(3, 4), (2, 3, 4)]


def rank_input(rank: int, shape: tuple[int, ...], dtype: torch.dtype, salt: int = 0) -> torch.Tensor:
    """What rank ``rank`` holds: integers in [-8, 8], on the host."""
    index = torch.arange(math.prod(shape), dtype=torch.int32)
    return ((index * 7 + rank * 13 + salt * 5) % 17 - 8).reshape(shape).to(dtype)


class Layout(enum.Enum):
    """How a check lays out the tensors it hands a collective."""

    CONTIGUOUS = "contiguous"
    #: Every other element along the last dim of a tensor twice as wide, whose other
    #: elements hold ``GAP``: a view with gaps, as an engine passes a column slice of
    #: its hidden states. It has no flat view, so a communicator that flattens with
    #: ``view(-1)`` or hands ``data_ptr()`` to its transport as if it were contiguous
    #: gets it wrong.
    STRIDED_VIEW = "strided view"


#: What the gaps of a ``Layout.STRIDED_VIEW`` hold: no rank's input holds it, so a
#: result that read a gap is wrong.
GAP = 99


def laid_out(tensor: torch.Tensor, device: torch.device, layout: Layout) -> torch.Tensor:
    """``tensor``'s values on ``device``, laid out as ``layout`` says."""
    if layout is Layout.CONTIGUOUS:
        return tensor.to(device)
    wide = torch.full((*tensor.shape[:-1], 2 * tensor.shape[-1]), GAP, dtype=tensor.dtype, device=device)
    return wide[..., ::2].copy_(tensor)


def sum_of_inputs(world_size: int, shape, dtype, salt: int = 0) -> torch.Tensor:
    total = sum(rank_input(r, shape, torch.int32, salt) for r in range(world_size))
    return total.to(dtype)


class Problems(list):
    """At most a few problems per rank: one broken collective fails every case; and the
    tensors returned so far, to check again after later calls."""

    def __init__(self) -> None:
        super().__init__()
        self._kept: list[tuple[torch.Tensor, torch.Tensor, str]] = []

    def expect(self, condition: bool, message: str) -> None:
        if not condition and len(self) < _MAX_PROBLEMS:
            self.append(message)

    def expect_tensor(self, got, expected: torch.Tensor, device: torch.device, what: str) -> None:
        if not isinstance(got, torch.Tensor):
            self.expect(False, f"{what}: returned {type(got).__name__}, not a tensor")
        elif got.shape != expected.shape or got.dtype != expected.dtype:
            self.expect(False, f"{what}: returned {tuple(got.shape)} {got.dtype}, "
                               f"expected {tuple(expected.shape)} {expected.dtype}")
        elif got.device.type != device.type:
            self.expect(False, f"{what}: result on {got.device}, expected {device.type}")
        else:
            self.expect(torch.equal(got.cpu(), expected), f"{what}: wrong values")
            self._kept.append((got, expected, what))

    def recheck(self) -> Problems:
        """Compare every tensor returned so far with what it held when it was returned:
        a collective that hands out an internal buffer overwrites it on a later call."""
        for got, expected, what in self._kept:
            if torch.equal(got.cpu(), expected):
                continue
            self.expect(False, f"{what}: result changed after later calls (an internal buffer "
                               "was returned and reused)")
        return self


class Arguments(enum.Enum):
    """How a check passes a collective's optional arguments (``dim``, ``dst``, ``src``)."""

    #: Every one of them, as ``all_gather(x, -1)``.
    GIVEN = "given"
    #: Left out wherever the contract's defaults mean the same call: ``all_gather(x)``
    #: for ``all_gather(x, -1)``, ``gather(x, dst)`` and ``gather(x)`` for ``gather(x,
    #: dst, -1)`` and ``gather(x, 0, -1)``.
    DEFAULTS_LEFT_OUT = "defaults left out"


class _Call(NamedTuple):
    passed: tuple  # the optional arguments passed, in order
    meant: tuple  # every optional argument, those left out at their defaults
    label: str


def _calls(collective: str, explicit: Iterable[tuple], arguments: Arguments) -> list[_Call]:
    """The calls of ``collective`` a check makes for each tuple of optional arguments in
    ``explicit``: given in full, or without each run of trailing arguments equal to the
    defaults the contract's signature states (a tuple with no such run is not called)."""
    parameters = inspect.signature(getattr(DeviceCommunicatorBase, collective)).parameters
    optional = {p.name: p.default for p in parameters.values() if p.default is not p.empty}
    defaults = tuple(optional.values())
    calls = []
    for meant in explicit:
        if arguments is Arguments.GIVEN:
            kept_counts = [len(meant)]
        else:
            kept_counts = [kept for kept in range(len(meant)) if meant[kept:] == defaults[kept:]]
        for kept in kept_counts:
            label = " ".join(f"{name}={value}" + (" (left out)" if index >= kept else "")
                             for index, (name, value) in enumerate(zip(optional, meant)))
            calls.append(_Call(meant[:kept], meant, label))
    return calls


def _dims(shape) -> list[int]:
    """Every dim of ``shape``, counted from the front and from the back."""
    return [*range(len(shape)), *range(-len(shape), 0)]


def all_reduce(comm: DeviceCommunicatorBase, dtypes, shapes, iterations: int,
               layout: Layout = Layout.CONTIGUOUS) -> list[str]:
    problems, device = Problems(), comm.device
    for dtype, shape, salt in itertools.product(dtypes, shapes, range(iterations)):
        expected = sum_of_inputs(comm.world_size, shape, dtype, salt)
        got = comm.all_reduce(laid_out(rank_input(comm.rank, shape, dtype, salt), device, layout))
        problems.expect_tensor(got, expected, device, f"all_reduce {dtype} {shape} {layout.value} #{salt}")
    return problems.recheck()


def all_gather(comm: DeviceCommunicatorBase, dtypes, shapes, iterations: int,
               arguments: Arguments = Arguments.GIVEN, layout: Layout = Layout.CONTIGUOUS) -> list[str]:
    problems, device = Problems(), comm.device
    for dtype, shape, salt in itertools.product(dtypes, shapes, range(iterations)):
        for passed, (dim,), label in _calls("all_gather", [(dim,) for dim in _dims(shape)], arguments):
            parts = [rank_input(r, shape, dtype, salt) for r in range(comm.world_size)]
            got = comm.all_gather(laid_out(rank_input(comm.rank, shape, dtype, salt), device, layout), *passed)
            problems.expect_tensor(got, torch.cat(parts, dim), device,
                                   f"all_gather {dtype} {shape} {label} {layout.value} #{salt}")
    return problems.recheck()


def reduce_scatter(comm: DeviceCommunicatorBase, dtypes, shapes, iterations: int,
                   arguments: Arguments = Arguments.GIVEN, layout: Layout = Layout.CONTIGUOUS) -> list[str]:
    problems, device = Problems(), comm.device
    for dtype, base, salt in itertools.product(dtypes, shapes, range(iterations)):
        for passed, (dim,), label in _calls("reduce_scatter", [(dim,) for dim in _dims(base)], arguments):
            shape = list(base)
            shape[dim] *= comm.world_size
            total = sum_of_inputs(comm.world_size, tuple(shape), dtype, salt)
            expected = total.chunk(comm.world_size, dim)[comm.rank].contiguous()
            got = comm.reduce_scatter(laid_out(rank_input(comm.rank, tuple(shape), dtype, salt), device, layout),
                                      *passed)
            problems.expect_tensor(got, expected, device,
                                   f"reduce_scatter {dtype} {tuple(shape)} {label} {layout.value} #{salt}")
    return problems.recheck()


def gather(comm: DeviceCommunicatorBase, dtypes, shapes, iterations: int,
           arguments: Arguments = Arguments.GIVEN, layout: Layout = Layout.CONTIGUOUS) -> list[str]:
    problems, device = Problems(), comm.device
    for dtype, shape, salt in itertools.product(dtypes, shapes, range(iterations)):
        explicit = itertools.product(range(comm.world_size), _dims(shape))
        for passed, (dst, dim), label in _calls("gather", explicit, arguments):
            got = comm.gather(laid_out(rank_input(comm.rank, shape, dtype, salt), device, layout), *passed)
            what = f"gather {dtype} {shape} {label} {layout.value} #{salt}"
            if comm.rank == dst:
                parts = [rank_input(r, shape, dtype, salt) for r in range(comm.world_size)]
                problems.expect_tensor(got, torch.cat(parts, dim), device, what)
            else:
                problems.expect(got is None, f"{what}: rank {comm.rank} is not dst but got "
                                             f"{type(got).__name__}, not None")
    return problems.recheck()


def broadcast(comm: DeviceCommunicatorBase, dtypes, sizes, iterations: int,
              arguments: Arguments = Arguments.GIVEN, layout: Layout = Layout.CONTIGUOUS) -> list[str]:
    problems, device = Problems(), comm.device
    for dtype, size, salt in itertools.product(dtypes, sizes, range(iterations)):
        explicit = [(src,) for src in range(comm.world_size)]
        for passed, (src,), label in _calls("broadcast", explicit, arguments):
            buffer = laid_out(rank_input(comm.rank, (size,), dtype, salt), device, layout)
            got = comm.broadcast(buffer, *passed)
            expected = rank_input(src, (size,), dtype, salt)
            what = f"broadcast {dtype} ({size},) {label} {layout.value} #{salt}"
            problems.expect_tensor(got, expected, device, what)
            problems.expect(torch.equal(buffer.cpu(), expected), f"{what}: not written in place")
    return problems.recheck()


def send_recv_pairs(comm: DeviceCommunicatorBase, dtypes, shape, iterations: int,
                    layout: Layout = Layout.CONTIGUOUS) -> list[str]:
    problems = Problems()
    # Every rank walks the same list of pairs, so sends and receives line up.
    for dtype, salt, (src, dst) in itertools.product(
        dtypes, range(iterations), itertools.permutations(range(comm.world_size), 2)
    ):
        payload = rank_input(src, shape, dtype, salt=dst + salt * comm.world_size)
        if comm.rank == src:
            comm.send(laid_out(payload, comm.device, layout), dst)
        elif comm.rank == dst:
            got = comm.recv(torch.Size(shape), dtype, src)
            problems.expect_tensor(got, payload, comm.device,
                                   f"recv {dtype} from {src} to {dst}, sent {layout.value} #{salt}")
    return problems.recheck()


def send_recv_ring(comm: DeviceCommunicatorBase, dtypes, shape) -> list[str]:
    problems, rank, size = Problems(), comm.rank, comm.world_size
    previous = (rank - 1) % size
    for dtype in dtypes:
        payload = rank_input(rank, shape, dtype).to(comm.device)
        # Even ranks send first and odd ranks receive first, so blocking sends
        # cannot deadlock the ring.
        if rank % 2 == 0:
            comm.send(payload)
            got = comm.recv(torch.Size(shape), dtype)
        else:
            got = comm.recv(torch.Size(shape), dtype)
            comm.send(payload)
        problems.expect_tensor(got, rank_input(previous, shape, dtype), comm.device,
                               f"recv {dtype} with default peers (expected rank {previous}'s)")
    return problems.recheck()


def barrier(comm: DeviceCommunicatorBase, folder: str, rounds: int, delay_s: float) -> list[str]:
    problems = Problems()
    for round_ in range(rounds):
        marker = Path(folder) / f"round-{round_}"
        if comm.rank == 0:
            time.sleep(delay_s)  # everyone else reaches the barrier long before this
            marker.touch()
        comm.barrier()
        problems.expect(marker.exists(), f"round {round_}: left the barrier before rank 0 "
                                         "entered it")
    return problems


def assert_no_problems(per_rank: list[list[str]]) -> None:
    """The verdict, in the test process: every rank's problems, rank by rank."""
    problems = [f"rank {rank}: {p}" for rank, found in enumerate(per_rank) for p in found]
    assert not problems, "\n".join(problems[:12])
