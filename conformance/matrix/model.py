"""The support matrix as data: what every output (HTML, Markdown, JSON) is made from.

Plain dataclasses of strings, numbers, lists and dicts, so ``dataclasses.asdict`` of a
``Matrix`` is ``matrix.json`` itself (its schema is ``matrix.schema.json``). Machine
status (outcome codes, states) is kept apart from human text (messages, reasons),
so a consumer never has to parse a note to learn a status.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Waiver:
    reason: str
    link: str | None  # an http(s) URL, or None when the record's link is not one
    expires: str | None = None  # "2026-12-31" or "with kit 0.2.0"
    expired: bool = False  # past its expiry: the cell counts as failed


@dataclasses.dataclass(frozen=True)
class TestRun:
    """One test of a contract in the record a column shows: the drill-down."""

    nodeid: str
    outcome: str
    duration: float
    #: The message's first line that states what failed, not a line of context
    #: ("call 1 of 7 (3 requests, ...):" introduces it): see ``drilldown.assertion``.
    assertion: str
    message: str  # the whole message, cut to ``drilldown.MESSAGE_LIMIT`` characters
    reproducer: str | None  # the command or decorator that reruns a generated case


@dataclasses.dataclass(frozen=True)
class Cell:
    outcome: str
    message: str  # the telling test's assertion line (``TestRun.assertion``)
    duration: float | None  # seconds, summed over the contract's tests
    waiver: Waiver | None = None
    regressed_since: str | None = None  # date of the previous record, where it passed
    flaky: bool = False
    tests: list[TestRun] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Contract:
    id: str
    suite: str
    rule: str
    required: bool  # in this kit's mustpass list


@dataclasses.dataclass(frozen=True)
class Figure:
    name: str
    label: str
    value: float
    unit: str
    world_size: int | None = None


@dataclasses.dataclass(frozen=True)
class Performance:
    device: str
    measured_at: str
    figures: list[Figure]


@dataclasses.dataclass(frozen=True)
class SuiteCount:
    """A column's contracts of one suite, by how they ended."""

    suite: str
    passed: int
    failing: int  # failed, error, crashed, timed out, or an expired waiver
    other: int  # not supported, waived, not run
    total: int


@dataclasses.dataclass(frozen=True)
class Column:
    """One platform line (plugin + device), shown by its newest record."""

    id: str  # a slug, unique per platform line: anchors and file names
    plugin: str
    distribution: str
    plugin_version: str
    #: "bridged from vllm 0.32.0, judged by the vllm mustpass profile" for a plugin
    #: written for another engine's interface and run through a bridge; else None.
    bridged: str | None
    device: str
    device_type: str  # the torch device type the plugin computes on
    #: "host_cpu" (computes on the host's CPU: an emulation unless the device is a
    #: CPU), "bridged" (another engine's plugin, through a bridge) or "device".
    device_kind: str
    device_note: str  # the kind in words, as every column says it
    kit_version: str
    contract_version: str
    date: str
    host: str
    verdict: str  # the verdict word: CONFORMANT, NOT CONFORMANT, INCOMPLETE, ...
    verdict_line: str
    record: str  # the site-relative path of the record copy
    ci_build: str | None
    ci_job: str | None  # the CI job's own page (its log), where the record names the job
    #: Who vouches for the record: "vendor" (signed with a key of its folder's
    #: keyring), "ci" (signed with the CI's key, with a build link) or
    #: "self_reported" (unsigned); ``trust_label`` says it in words.
    trust: str
    trust_label: str
    #: "kit VERSION is not released" when shown under --allow-unreleased; else None.
    unreleased: str | None
    partial: str | None  # "partial (N of M contracts)" for an incomplete record
    stale: str | None  # "last verified DATE on kit VERSION" when the stale rule says so
    counts: dict[str, int]  # cells per outcome, over the grid's rows
    suites: list[SuiteCount]
    cells: dict[str, Cell]
    performance: Performance | None


@dataclasses.dataclass(frozen=True)
class CapabilityCell:
    state: str  # verified | failing | unverified | not_declared
    detail: str


@dataclasses.dataclass(frozen=True)
class CapabilityRow:
    kind: str
    value: str
    label: str
    cells: dict[str, CapabilityCell]  # by column id


@dataclasses.dataclass(frozen=True)
class Run:
    id: str  # the record's digest, shortened: names the run in a diff
    date: str
    plugin_version: str
    #: The engine it ran on: "vllm 0.32.1" through a bridge, else "conformance KIT"
    #: (``conformance.tiers.evidence.engine_of``, as the tiers name it).
    engine: str
    kit_version: str
    contract_version: str
    verdict: str
    trust: str  # who vouches for the record, in words: "signed by acme", "self-reported"
    counts: dict[str, int]  # test outcomes, as the record's summary
    record: str
    ci_build: str | None  # an http(s) link, or None
    compared: bool  # of the newest record's contract version, so diffed in history


@dataclasses.dataclass(frozen=True)
class Transition:
    contract: str
    before: str
    after: str
    date: str
    record: str
    message: str  # the assertion line of the record it changed in ("" when it passed)


@dataclasses.dataclass(frozen=True)
class History:
    column: str  # the platform line's column id
    plugin: str
    device: str
    runs: list[Run]  # newest first
    transitions: list[Transition]  # newest first
    flaky: list[str]


@dataclasses.dataclass(frozen=True)
class Rejection:
    path: str
    reason: str


@dataclasses.dataclass(frozen=True)
class OverviewCell:
    text: str
    sort: str | float  # what the column sorts by: text in natural order, or a number
    detail: str = ""  # a second, smaller line
    css: str = ""  # classes for the second channel (colour, border): never the only one


@dataclasses.dataclass(frozen=True)
class OverviewHeading:
    key: str
    heading: str
    explanation: str


@dataclasses.dataclass(frozen=True)
class OverviewRow:
    column: str  # the platform line's column id
    cells: dict[str, OverviewCell]  # by OverviewHeading.key
    failing_suites: list[str]


@dataclasses.dataclass(frozen=True)
class Generated:
    by: str
    records: int
    at: str
    note: str


@dataclasses.dataclass(frozen=True)
class Matrix:
    generated: Generated
    kit_version: str
    contract_version: str
    stale_days: int
    stale_rule: str
    #: What --allow-unreleased let in, or None when the matrix was built from
    #: released kits' records only.
    unreleased_note: str | None
    window: int  # comparable records that history, regressions and flakes look at
    contracts: list[Contract]  # the grid's rows, grouped by suite, mustpass order first
    overview_columns: list[OverviewHeading]
    overview: list[OverviewRow]  # one per column, in the columns' order
    columns: list[Column]
    capabilities: list[CapabilityRow]
    histories: list[History]
    rejected: list[Rejection]
