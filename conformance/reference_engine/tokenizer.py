"""Tokenizers: byte-level for the presets, ``tokenizer.json`` for Hugging Face folders."""

from __future__ import annotations

import os
from typing import Protocol


class Tokenizer(Protocol):
    eos_token_ids: frozenset[int]

    def encode(self, text: str) -> list[int]: ...
    def decode(self, token_ids: list[int]) -> str: ...


class ByteTokenizer:
    """UTF-8 bytes as tokens, after three specials (pad 0, BOS 1, EOS 2).

    Ids beyond the byte range have no text of their own (the presets' vocabularies
    are larger than 259); they decode as ``<|id|>`` so that nothing is hidden.
    """

    PAD, BOS, EOS = 0, 1, 2
    OFFSET = 3

    def __init__(self, vocab_size: int) -> None:
        if vocab_size < self.OFFSET + 256:
            raise ValueError(f"a byte tokenizer needs vocab_size >= 259, got {vocab_size}")
        self.eos_token_ids = frozenset({self.EOS})

    def encode(self, text: str) -> list[int]:
        return [self.BOS] + [b + self.OFFSET for b in text.encode("utf-8")]

    def decode(self, token_ids: list[int]) -> str:
        pieces: list[str] = []
        pending = bytearray()
        for t in token_ids:
            if self.OFFSET <= t < self.OFFSET + 256:
                pending.append(t - self.OFFSET)
                continue
            pieces.append(pending.decode("utf-8", errors="replace"))
            pending.clear()
            if t >= self.OFFSET + 256:
                pieces.append(f"<|{t}|>")
        pieces.append(pending.decode("utf-8", errors="replace"))
        return "".join(pieces)


class HFTokenizer:
    """A ``tokenizer.json`` read with the ``tokenizers`` library."""

    def __init__(self, path: str, eos_token_ids: frozenset[int]) -> None:
        from tokenizers import Tokenizer as _Tokenizer

        self._tokenizer = _Tokenizer.from_file(path)
        self.eos_token_ids = eos_token_ids

    def encode(self, text: str) -> list[int]:
        return self._tokenizer.encode(text).ids

    def decode(self, token_ids: list[int]) -> str:
        return self._tokenizer.decode(token_ids, skip_special_tokens=True)


def get_tokenizer(folder: str | None, vocab_size: int, eos_token_ids: frozenset[int]):
    """The folder's ``tokenizer.json`` when there is one, else the byte tokenizer."""
    path = os.path.join(folder, "tokenizer.json") if folder else None
    if path and os.path.isfile(path):
        return HFTokenizer(path, eos_token_ids)
    tokenizer = ByteTokenizer(vocab_size)
    if eos_token_ids:
        tokenizer.eos_token_ids = eos_token_ids
    return tokenizer
