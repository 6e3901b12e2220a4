"""Pausing Python's cyclic garbage collector while a build runs.

A build of 10,000 records holds hundreds of thousands of objects that live until it
ends (records, the index's rows, every platform's cells), and each of the
collector's passes over the older generations walks them all: together they were
about a sixth of a one-record rebuild. Reference counting frees nearly everything
a build makes; the few cycles it leaves are collected later.

Turning the collector back on is not enough: everything made during the pause would
be its youngest generation, walked whole by the next allocation's collection (a
tenth of a one-record rebuild again). So the pause ends by moving every object to
the oldest generation (``gc.freeze`` then ``gc.unfreeze``, without walking them),
which is collected only once it has grown by a quarter.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """The collector off within, and on again after, unless it was off already."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        gc.enable()
