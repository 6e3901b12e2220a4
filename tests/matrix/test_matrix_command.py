"""``conformance matrix build`` and ``check`` as commands, in child processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import patience
from generated_records import make_record, write_record
from scenario import CONTRACTS

from conformance.matrix.kits import is_final_release


def conformance(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args],
                          capture_output=True, text=True, timeout=patience.scaled(1800))


def passing(**options) -> dict:
    return make_record({c: "passed" for c in CONTRACTS}, **options)


def test_build_writes_the_three_outputs(tmp_path):
    write_record(tmp_path / "records", "cpu/a.record.json", passing())
    done = conformance("matrix", "build", str(tmp_path / "records"), "-o", str(tmp_path / "site"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {tmp_path / 'site'}/index.html, matrix.md and matrix.json "
                                  "from 1 record (1 platform; 0 rejected)")
    assert json.loads((tmp_path / "site" / "matrix.json").read_text())["generated"]["records"] == 1


def test_build_replaces_only_its_own_site_or_an_empty_folder(tmp_path):
    write_record(tmp_path / "records", "cpu/a.record.json", passing())
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "notes.txt").write_text("keep me")
    done = conformance("matrix", "build", str(tmp_path / "records"), "-o", str(tmp_path / "precious"))
    assert done.returncode == 2
    assert done.stderr == (f"conformance matrix build: refusing to replace {tmp_path / 'precious'}: it is "
                           "neither empty nor a site that `conformance matrix build` wrote\n")
    assert (tmp_path / "precious" / "notes.txt").read_text() == "keep me"
    for _ in range(2):  # a site it wrote is replaced
        done = conformance("matrix", "build", str(tmp_path / "records"), "-o", str(tmp_path / "site"))
        assert done.returncode == 0, done.stderr


def test_building_the_matrix_leaves_torch_unimported(tmp_path):
    write_record(tmp_path / "records", "cpu/a.record.json", passing())
    script = textwrap.dedent(f"""
        import sys
        from conformance.cli import main
        status = main(["matrix", "build", {str(tmp_path / "records")!r}, "-o", {str(tmp_path / "site")!r}])
        assert status == 0, status
        assert "torch" not in sys.modules, "building the matrix imported torch"
        print("no torch")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=patience.scaled(1800))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == "no torch"


def test_check_accepts_complete_records_in_their_plugins_folder(tmp_path):
    write_record(tmp_path, "cpu/cpu.record.json", passing())
    write_record(tmp_path, "npu/npu.record.json", passing(plugin="npu", device="NPU"))
    done = conformance("matrix", "check", str(tmp_path))
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "2 submitted records verified; the site builds\n", "")


def test_check_names_each_misplaced_incomplete_or_bad_record(tmp_path):
    write_record(tmp_path, "cpu/cpu.record.json", passing())
    write_record(tmp_path, "cpu/npu.record.json", passing(plugin="npu", device="NPU"))
    write_record(tmp_path, "cpu/deeper/cpu.record.json", passing(started="2026-11-21T00:00:00+00:00"))
    write_record(tmp_path, "gpu/gpu.record.json", passing(plugin="gpu", complete=False))
    (tmp_path / "gpu" / "broken.json").write_text("[")
    done = conformance("matrix", "check", str(tmp_path))
    assert done.returncode == 1
    problems = sorted(done.stderr.splitlines())
    assert problems == sorted([
        f"conformance matrix check: {tmp_path}/cpu/npu.record.json: a record of plugin 'npu' "
        f"belongs in {tmp_path}/npu/, directly",
        f"conformance matrix check: {tmp_path}/cpu/deeper/cpu.record.json: a record of plugin 'cpu' "
        f"belongs in {tmp_path}/cpu/, directly",
        f"conformance matrix check: {tmp_path}/gpu/gpu.record.json: the run did not finish "
        "(incomplete record)",
        f"conformance matrix check: {tmp_path}/gpu/broken.json: not JSON (Expecting value at line 1 column 2)",
    ])
    assert done.stdout == "4 problems in 5 submitted records\n"


def test_only_final_release_versions_count_as_released():
    assert is_final_release("0.1.0") and is_final_release("2")
    assert not any(map(is_final_release, ["0.1.0.dev3", "0.1.0+local", "0.2.0rc1", "0.1.post1", ""]))
