"""Token counts are cl100k_base's, from the rank file in the repository, with no network."""

from __future__ import annotations

import gzip
import socket
from pathlib import Path
from typing import Any

import pytest

from conversion.engine import tokens


def test_counts_are_cl100k_base_counts_of_known_strings() -> None:
    # Counts published for cl100k_base (OpenAI's cookbook "How to count tokens with tiktoken").
    assert tokens.count_tokens("hello world") == 2
    assert tokens.count_tokens("tiktoken is great!") == 6
    assert tokens.count_tokens("The quick brown fox jumps over the lazy dog.") == 10
    assert tokens.count_tokens("") == 0
    assert tokens.encoding().encode_ordinary("hello world") == [15339, 1917]


def test_special_token_text_counts_as_ordinary_text() -> None:
    assert tokens.count_tokens("<|endoftext|>") > 1


def test_the_encoding_is_built_without_touching_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the tokenizer reached for the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    tokens.encoding.cache_clear()
    try:
        assert tokens.count_tokens("hello world") == 2
    finally:
        tokens.encoding.cache_clear()


def test_a_damaged_rank_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    damaged = tmp_path / "cl100k_base.tiktoken.gz"
    contents = gzip.decompress(tokens.RANKS_FILE.read_bytes())
    damaged.write_bytes(gzip.compress(contents.replace(b" 0\n", b" 1\n", 1)))
    monkeypatch.setattr(tokens, "RANKS_FILE", damaged)
    tokens.encoding.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="not cl100k_base"):
            tokens.encoding()
    finally:
        tokens.encoding.cache_clear()
