"""The data the diff page reads: each platform's runs, as ``platforms/ID.runs.js``.

A static site cannot hold a page per pair of runs, so the diff page loads the two
platforms' run files (script elements, which also work from ``file://``, where a
fetch does not) and compares them in the browser. Each run's outcomes are one code
character per contract of the file's list, so a platform of 20 runs of 300
contracts is about 8 KB. The file is JSON assigned to a global, with ``ensure_ascii`` and ``<``, ``>`` and ``&``
escaped as well, so a record's text holds nothing markup-like even here.
"""

from __future__ import annotations

import json

from conformance.matrix import presentation
from conformance.matrix.model import History
from conformance.results.outcomes import OUTCOMES

#: One character per outcome a record's roll-up holds; "-" for a contract the run has no test of.
_CODES = {str(outcome): chr(ord("a") + i) for i, outcome in enumerate(OUTCOMES)}
ABSENT = "-"


def runs_script(history: History, outcomes: dict[str, dict[str, str]]) -> str:
    """``outcomes``: run id -> contract -> outcome, for every run of ``history``."""
    contracts = sorted({c for run in outcomes.values() for c in run})
    legend = {code: [outcome, presentation.GLYPHS.get(outcome, "·"), outcome.replace("_", " ")]
              for outcome, code in _CODES.items()}
    legend[ABSENT] = ["absent", "·", "no test in this run"]
    runs = [{"id": run.id, "date": run.date, "plugin_version": run.plugin_version,
             "kit_version": run.kit_version, "verdict": run.verdict,
             "outcomes": "".join(_CODES[outcomes[run.id][c]] if c in outcomes[run.id] else ABSENT
                                 for c in contracts)}
            for run in history.runs]
    data = {"platform": f"{history.plugin} on {history.device}", "contracts": contracts,
            "legend": legend, "runs": runs}
    return ("window.conformanceRuns = window.conformanceRuns || {};\n"
            f"window.conformanceRuns[{_literal(history.column)}] = {_literal(data)};\n")


def _literal(value: object) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
