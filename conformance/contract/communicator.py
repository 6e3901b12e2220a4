"""The communicator contract: ``DeviceCommunicatorBase``.

A communicator performs the collectives of tensor parallelism among the ranks of one
group. ``torch.distributed`` must already be initialised with the platform's
``dist_backend`` when more than one rank is involved; a world of size 1 is valid and
needs no process group at all.
"""

from __future__ import annotations

import abc

import torch
import torch.distributed as dist


class DeviceCommunicatorBase(abc.ABC):
    """Collectives among ``world_size`` ranks, each holding tensors on ``device``.

    ``group`` is a ``torch.distributed`` process group (None = the default group).
    Ranks are ranks within the group.
    """

    def __init__(
        self, device: torch.device, group: dist.ProcessGroup | None = None
    ) -> None:
        self.device = device
        self.group = group
        initialised = dist.is_available() and dist.is_initialized()
        self.world_size = dist.get_world_size(group) if initialised else 1
        self.rank = dist.get_rank(group) if initialised else 0

    @abc.abstractmethod
    def all_reduce(self, tensor: torch.Tensor) -> torch.Tensor:
        """Element-wise sum over all ranks. Callers use the *returned* tensor; the
        input may or may not be modified.

        Rule ``communicator.all_reduce.sum``: ``all_reduce`` returns the element-wise
        sum over all ranks in the input's shape, exactly, on every rank, in the
        input's dtype and on its device, on every call of many in a row on one shape
        with new values each time; and a returned tensor keeps its value after later
        calls. Its input may be a non-contiguous view (a slice of a larger tensor, as
        an engine passes one), with the same result.
        """

    @abc.abstractmethod
    def all_gather(self, tensor: torch.Tensor, dim: int = -1) -> torch.Tensor:
        """Every rank's tensor concatenated along ``dim`` in rank order, on every rank.

        Rule ``communicator.all_gather.dims``: ``all_gather(x, dim)`` returns every
        rank's tensor concatenated along ``dim`` in rank order, exactly, on every rank,
        in the input's dtype and on its device, for every dim of 1- to 3-D tensors
        (counted from the front, or from the back when negative), on every call of many
        in a row on one shape with new values each time; and a returned tensor keeps
        its value after later calls. Without ``dim``, ``all_gather(x)`` gathers along
        the last dim, as ``all_gather(x, -1)`` does. Its input may be a non-contiguous
        view (a slice of a larger tensor, as an engine passes one), with the same
        result.
        """

    @abc.abstractmethod
    def reduce_scatter(self, tensor: torch.Tensor, dim: int = -1) -> torch.Tensor:
        """The sum over ranks, split into ``world_size`` equal chunks along ``dim``;
        rank ``i`` receives chunk ``i``. ``tensor.shape[dim]`` must divide evenly.

        Rule ``communicator.reduce_scatter.dims``: ``reduce_scatter(x, dim)`` gives rank
        ``i`` chunk ``i`` (along ``dim``) of the sum over ranks, exactly, in the input's
        dtype and on its device, for every dim of 1- to 3-D tensors (counted from the
        front, or from the back when negative), on every call of many in a row on one
        shape with new values each time; and a returned tensor keeps its value after
        later calls. Without ``dim``, ``reduce_scatter(x)`` scatters along the last dim,
        as ``reduce_scatter(x, -1)`` does. Its input may be a non-contiguous view (a
        slice of a larger tensor, as an engine passes one), with the same result.
        """

    @abc.abstractmethod
    def gather(
        self, tensor: torch.Tensor, dst: int = 0, dim: int = -1
    ) -> torch.Tensor | None:
        """Every rank's tensor concatenated along ``dim`` on rank ``dst`` only;
        every other rank gets None.

        Rule ``communicator.gather.dst_only``: ``gather(x, dst, dim)`` returns the
        concatenation in rank order, exactly, in the input's dtype and on its device,
        on rank ``dst`` and None on every other rank, for every ``dst`` and ``dim``
        (counted from the front, or from the back when negative), on every call of many
        in a row on one shape with new values each time; and a returned tensor keeps
        its value after later calls. Without ``dim``, ``gather(x, dst)`` concatenates
        along the last dim, as ``gather(x, dst, -1)`` does, and without ``dst`` as well,
        ``gather(x)`` collects on rank 0, as ``gather(x, 0, -1)`` does. Its input may
        be a non-contiguous view (a slice of a larger tensor, as an engine passes one),
        with the same result.
        """

    @abc.abstractmethod
    def broadcast(self, tensor: torch.Tensor, src: int = 0) -> torch.Tensor:
        """Rank ``src``'s tensor copied in place into ``tensor`` on every rank, and
        returned.

        Rule ``communicator.broadcast.from_src``: ``broadcast(x, src)`` writes rank
        ``src``'s tensor into ``x`` on every rank, exactly, and returns it, in the
        input's dtype and on its device, for every ``src``, on every call of many in a
        row on one shape with new values each time; and a returned tensor keeps its
        value after later calls. Without ``src``, ``broadcast(x)`` sends rank 0's
        tensor, as ``broadcast(x, 0)`` does. Its argument may be a non-contiguous view
        (a slice of a larger tensor, as an engine passes one), written in place all the
        same.
        """

    @abc.abstractmethod
    def send(self, tensor: torch.Tensor, dst: int | None = None) -> None:
        """Send ``tensor`` to rank ``dst`` (default: the next rank in the ring),
        blocking until it may be reused.

        Rule ``communicator.send_recv.pairs``: ``send(x, dst)`` on one rank and
        ``recv(size, dtype, src)`` on the other deliver the tensor exactly, in the
        input's dtype and on its device (the receiver's), between every ordered pair of
        ranks, on every call of many in a row on one shape with new values each time;
        and a returned tensor keeps its value after later calls. The tensor sent may be
        a non-contiguous view (a slice of a larger tensor, as an engine passes one),
        with the same result.

        Rule ``communicator.send_recv.default_peers``: without peers, ``send`` goes to
        the next rank and ``recv`` takes from the previous one (a ring).
        """

    @abc.abstractmethod
    def recv(
        self, size: torch.Size, dtype: torch.dtype, src: int | None = None
    ) -> torch.Tensor:
        """Receive a tensor of ``size`` and ``dtype`` from rank ``src`` (default: the
        previous rank in the ring), allocated on ``self.device``."""

    @abc.abstractmethod
    def barrier(self) -> None:
        """Return only once every rank has entered the barrier.

        Rule ``communicator.barrier.waits``: no rank leaves ``barrier()`` before every
        rank has entered it: work rank 0 finishes just before entering is visible to
        all ranks right after.
        """

    def destroy(self) -> None:
        """Release the communicator's own resources (not the process group)."""
