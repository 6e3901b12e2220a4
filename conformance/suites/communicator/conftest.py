"""Fixtures of the Communicator suite: rank pools per world size, started once."""

from __future__ import annotations

import pytest

from conformance.suites.ranks import RankPool, ranks_on
from conformance.suites.support import not_supported

WORLD_SIZES = (1, 2, 4)


class RankPools:
    """One pool per world size, started on first use and closed with the session."""

    def __init__(self, platform, timeout: float) -> None:
        self.platform, self.timeout = platform, timeout
        self._pools: dict[int, RankPool] = {}

    def get(self, world_size: int) -> RankPool:
        if world_size not in self._pools:
            self._pools[world_size] = RankPool(self.platform, world_size, self.timeout)
        return self._pools[world_size]

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()


@pytest.fixture(scope="session")
def rank_pools(pytestconfig, platform):
    """Rank pools of the platform under test, with the ``--rank-timeout`` watchdog."""
    pools = RankPools(platform, pytestconfig.getoption("rank_timeout"))
    yield pools
    pools.close()


@pytest.fixture(params=WORLD_SIZES, ids=lambda size: f"world{size}")
def ranks(request, platform, rank_pools) -> RankPool:
    """A pool of ranks for each world size the platform declares and the machine
    has devices for; larger declared worlds are ``not_supported``."""
    reason = ranks_on(platform, request.param)
    if reason is not None:
        if request.param > platform.capabilities.max_world_size:
            not_supported(reason)
        pytest.skip(reason)
    return rank_pools.get(request.param)


@pytest.fixture
def dtypes(capabilities):
    """The dtypes the platform declares."""
    return capabilities.dtypes

