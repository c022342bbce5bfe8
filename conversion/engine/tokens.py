"""Token counting, offline: OpenAI's cl100k_base, the tokenizer of the text-embedding-3 models
(and of text-embedding-ada-002), which is what most retrieval pipelines embed chunks with.

The rank file ships in the repository (`data/cl100k_base.tiktoken.gz`, gzip of the file
OpenAI publishes) and is checked against the SHA-256 that tiktoken itself expects of it, so
counts are exactly tiktoken's. Nothing is downloaded: `tiktoken.get_encoding` would fetch the
file into a cache on first use, so the encoding is built here as tiktoken's
`tiktoken_ext/openai_public.py` builds it.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
from pathlib import Path

import tiktoken

RANKS_FILE = Path(__file__).parent / "data" / "cl100k_base.tiktoken.gz"
# The SHA-256 of the decompressed rank file, as tiktoken_ext/openai_public.py expects it.
RANKS_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# As tiktoken_ext/openai_public.py (tiktoken 0.12.0) defines cl100k_base.
_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@functools.cache
def encoding() -> tiktoken.Encoding:
    """cl100k_base, built once per process from the vendored rank file.

    Raises RuntimeError if the file is not the one tiktoken expects (a damaged checkout: a
    deployment fault, not a document's)."""
    contents = gzip.decompress(RANKS_FILE.read_bytes())
    if hashlib.sha256(contents).hexdigest() != RANKS_SHA256:
        raise RuntimeError(f"{RANKS_FILE.name} is not cl100k_base's rank file")
    ranks: dict[bytes, int] = {}
    for line in contents.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(
        name="cl100k_base", pat_str=_PAT_STR, mergeable_ranks=ranks, special_tokens=_SPECIAL_TOKENS
    )


def count_tokens(text: str) -> int:
    """How many cl100k_base tokens `text` is; special-token text (`<|endoftext|>`) counts as
    the ordinary text it is, since documents are not prompts."""
    return len(encoding().encode_ordinary(text))
