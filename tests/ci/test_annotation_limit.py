"""Annotations stay under Buildkite's 1 MiB, cut at a line with a note, never mid-character."""

from __future__ import annotations

from ci_helpers import agent_env, conformance

from conformance.ci.buildkite.agent import ANNOTATION_LIMIT_BYTES, TRUNCATED_NOTE, fit_annotation


def test_a_body_that_fits_is_unchanged():
    assert fit_annotation("| a |\n") == "| a |\n"


def test_a_long_body_is_cut_at_a_line_and_says_so():
    body = "".join(f"| row {i} | ✓ |\n" for i in range(100_000))  # about 1.7 MB
    fitted = fit_annotation(body)
    assert len(fitted.encode("utf-8")) <= ANNOTATION_LIMIT_BYTES
    kept = fitted[: -len(TRUNCATED_NOTE)]
    assert fitted.endswith(TRUNCATED_NOTE) and body.startswith(kept) and kept.endswith("\n")


def test_the_annotate_command_gets_a_large_matrix_past_the_agent(tmp_path):
    # The stand-in agent refuses bodies over 1 MiB, as Buildkite does.
    (tmp_path / "matrix.md").write_text("| contract | cpu |\n" + "| x | ✓ passed |\n" * 90_000)
    store = tmp_path / "store"
    result = conformance("pipeline", "annotate", "matrix.md", "--context", "support-matrix",
                         cwd=tmp_path, env=agent_env(store))
    assert result.returncode == 0, result.stderr
    body = (store / "annotations" / "support-matrix.md").read_text()
    assert body.startswith("| contract | cpu |\n") and body.endswith(TRUNCATED_NOTE)
    assert (store / "annotations" / "support-matrix.style").read_text() == "info"
