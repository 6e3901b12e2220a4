"""Out-of-tree vLLM plugins with one vendor bug each (``vllm_plugins/``, a package that
imports vLLM and never the kit), run as a vendor runs them, ``pytest
--platform=vllm:NAME``: each bug is caught on its contract and blamed on the plugin,
and the faithful one is found exactly as vLLM's own ``cpu``.

Needs vLLM (``pip install 'conformance[vllm]'``); deselected by default, run with
``python -m pytest -m requires_vllm tests/bridges`` (docs/vllm.md).
"""

from __future__ import annotations

import pytest
from bridged_runs import by_contract, install_plugin_package, run_bridged

pytestmark = pytest.mark.requires_vllm

PLATFORMS = "broken_vllm_plugins.platforms"
#: The words of a BridgeLimitation: never said of what the plugin chose.
KITS_LIMIT = "the kit's limit, not the plugin's failure"


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory) -> dict[str, str]:
    return install_plugin_package(tmp_path_factory.mktemp("site"))


def _messages(record: dict) -> str:
    return "\n".join(test["message"] for test in record["tests"])


def test_a_subclassed_backend_keeping_the_stock_name_is_the_one_tested(tmp_path, plugin_env):
    """A CPU_ATTN subclass with a wrong scale, whose get_name() is still CPU_ATTN: the
    bridge imports the class the plugin names, as vLLM's selector does, so the
    vendor's scale is what the Attention suite judges, and the record and the header
    name that class."""
    record, run = run_bridged(tmp_path, "stock_named_backend", "--suite", "attention",
                              "-k", "attention.forward.decode", env=plugin_env)
    assert record is not None, run.stderr[-3000:]
    backend = "broken_vllm_plugins.attention.WrongScaleBackend"
    assert record["provenance"]["plugin"]["bridge"]["attention_backend"] == backend
    assert f"bridged attention backend: {backend}" in run.stdout
    (covering,) = [t for t in record["tests"] if t["nodeid"].endswith("test_decode_on_covering_batches")]
    assert covering["outcome"] == "failed"
    assert "values outside the torch." in covering["message"] and "tolerance" in covering["message"]


def test_a_backend_name_that_does_not_import_is_named_in_one_line(tmp_path, plugin_env):
    record, run = run_bridged(tmp_path, "unimportable_backend", "--suite", "attention", env=plugin_env)
    assert record is None and run.returncode == 4, run.stdout[-2000:] + run.stderr[-2000:]
    last = run.stderr.strip().splitlines()[-1]
    assert f"vLLM platform plugin {PLATFORMS}.UnimportableBackendPlatform" in last
    assert "get_attn_backend_cls names 'broken_vllm_plugins.attention.NoSuchBackend'" in last


def test_a_hook_changing_a_block_size_is_the_plugins_change(tmp_path, plugin_env):
    """Blocks of 64 asked, 128 made by the plugin's hook: the record lists the change,
    the Engine suite's block_sizes contract fails checking what vLLM's engine ran
    with, and the Attention suite's batches of 64 fail, each naming the hook's change,
    never as the kit's limit."""
    record, run = run_bridged(
        tmp_path, "block_size_hook", "--suite", "platform,attention,engine", "-k",
        "platform.config.check_and_update or attention.forward.decode or engine.generate.block_sizes",
        env=plugin_env)
    assert record is not None, run.stderr[-3000:]
    change = "cache_config.block_size 64 -> 128"
    blamed = f"'{PLATFORMS}.BlockSizeHookPlatform' changed the kit's request in check_and_update_config: {change}"
    assert f"float32, blocks of 64, KV-cache dtype 'auto': {change}" in \
        record["provenance"]["plugin"]["bridge"]["config_changes"]
    assert "the plugin's check_and_update_config changes the kit's request: float32, blocks of 64" in run.stdout
    tests = by_contract(record)
    (engine,) = tests["engine.generate.block_sizes"]
    assert engine["outcome"] == "failed" and blamed in engine["message"], engine
    assert "vLLM never runs an engine in float32 with blocks of 64" in engine["message"]
    covering = [t for t in tests["attention.forward.decode"] if t["nodeid"].endswith("covering_batches")]
    assert covering[0]["outcome"] == "failed" and blamed in covering[0]["message"]
    assert KITS_LIMIT not in _messages(record)


def test_a_hook_changing_the_dtype_is_the_plugins_change(tmp_path, plugin_env):
    """float32 asked, bfloat16 made by the plugin's hook: reported as the plugin's
    change, and the float32 engine and attention tests fail saying so, not by a
    logprob that drifted."""
    record, run = run_bridged(
        tmp_path, "dtype_hook", "--suite", "platform,attention,engine", "-k",
        "platform.config.check_and_update or attention.forward.decode or engine.generate.fp32_greedy",
        env=plugin_env)
    assert record is not None, run.stderr[-3000:]
    change = "model_config.dtype torch.float32 -> torch.bfloat16"
    blamed = f"'{PLATFORMS}.DtypeHookPlatform' changed the kit's request in check_and_update_config: {change}"
    changes = record["provenance"]["plugin"]["bridge"]["config_changes"]
    assert f"float32, blocks of 32, KV-cache dtype 'auto': {change}" in changes
    assert not [c for c in changes if not c.startswith("float32")]  # bfloat16 and float16 kept
    tests = by_contract(record)
    (greedy,) = tests["engine.generate.fp32_greedy"]
    assert greedy["outcome"] == "failed" and blamed in greedy["message"], greedy
    covering = [t for t in tests["attention.forward.decode"] if t["nodeid"].endswith("covering_batches")]
    assert covering[0]["outcome"] == "failed" and blamed in covering[0]["message"]
    assert KITS_LIMIT not in _messages(record)


def test_a_communicator_wrong_along_dim_1_is_caught(tmp_path, plugin_env):
    """all_gather concatenating along dim 0 and reshaping: wrong for dims >= 1, caught
    by the kit's exact checks; all_reduce of the same communicator passes."""
    record, run = run_bridged(tmp_path, "all_gather_dims", "--suite", "communicator", "-k",
                              "world2 and (all_gather or all_reduce)", env=plugin_env)
    assert record is not None, run.stderr[-3000:]
    tests = by_contract(record)
    gathers = tests["communicator.all_gather.dims"]
    assert any(t["outcome"] == "failed" and "dim=1" in t["message"] for t in gathers), gathers
    # vLLM's own CPU communicator fails strided-view tests: a finding of its own
    # (docs/vllm.md, test_vllm_cpu.py::test_communicator_findings).
    reduces = [t for t in tests["communicator.all_reduce.sum"] if "strided_views" not in t["nodeid"]]
    assert {t["outcome"] for t in reduces} == {"passed"}, [
        (t["nodeid"], t["outcome"], t.get("message")) for t in reduces if t["outcome"] != "passed"]


def test_the_faithful_plugin_is_found_exactly_as_vllm_cpu(tmp_path, plugin_env):
    """vLLM's CpuPlatform renamed: every Platform-suite outcome and message as
    vllm:cpu's, but for the plugin's own names (the first line of each: a message's
    detail may show random draws, such as those manual_seed_all failed to repeat)."""
    selection = ("--suite", "platform")
    faithful, faithful_run = run_bridged(tmp_path / "faithful", "faithful", *selection, env=plugin_env)
    cpu, cpu_run = run_bridged(tmp_path / "cpu", "cpu", *selection)
    assert faithful is not None, faithful_run.stdout[-3000:] + faithful_run.stderr[-3000:]
    assert cpu is not None, cpu_run.stdout[-3000:] + cpu_run.stderr[-3000:]

    def outcomes(record: dict, names: tuple[str, ...]) -> dict[str, tuple[str, str]]:
        def plain(message: str) -> str:
            message = message.splitlines()[0] if message else ""
            for name in names:
                message = message.replace(name, "<plugin>")
            return message
        return {t["nodeid"]: (t["outcome"], plain(t["message"])) for t in record["tests"]}

    assert outcomes(faithful, (f"{PLATFORMS}.FaithfulPlatform", "vllm:faithful")) == \
        outcomes(cpu, ("vllm.platforms.cpu.CpuPlatform", "vllm:cpu"))
