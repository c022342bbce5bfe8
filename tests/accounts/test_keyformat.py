"""Key format: generation, offline validation, checksum (hypothesis property tests)."""

from __future__ import annotations

import contextlib
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accounts import keyformat
from accounts.keyformat import BASE62, KeyFormatError

randoms = st.text(alphabet=BASE62, min_size=43, max_size=43)
environments = st.sampled_from(["live", "test"])


@pytest.mark.parametrize("environment", ["live", "test"])
def test_generated_key_has_the_specified_shape(environment: str) -> None:
    key = keyformat.generate(environment)

    assert len(key) == 63
    assert key.startswith(f"svcx_sk_{environment}_")
    assert key[-7] == "_"
    assert set(key[len(f"svcx_sk_{environment}_") : -7]) <= set(BASE62)


def test_checksum_is_crc32_iso_hdlc_in_base62() -> None:
    body = "svcx_sk_live_" + "0" * 43
    crc = zlib.crc32(body.encode())  # CRC-32/ISO-HDLC

    digits = ""
    n = crc
    while n:
        n, r = divmod(n, 62)
        digits = BASE62[r] + digits
    assert keyformat.checksum(body) == digits.rjust(6, "0")
    # The standard check value of CRC-32/ISO-HDLC over "123456789" is 0xCBF43926.
    assert keyformat.checksum("123456789") == keyformat.base62(0xCBF43926, 6)


def test_keys_are_random() -> None:
    assert len({keyformat.generate("live") for _ in range(50)}) == 50


@given(environments, randoms)
def test_round_trip(environment: str, random: str) -> None:
    key = keyformat.compose(environment, random)

    parsed = keyformat.parse(key)

    assert (parsed.environment, parsed.random) == (environment, random)
    assert parsed.hint == f"svcx_sk_{environment}_...{random[-4:]}"


@given(environments, randoms, st.integers(min_value=0, max_value=62), st.sampled_from(BASE62 + "_-x!"))
def test_any_single_character_change_fails(environment: str, random: str, position: int, replacement: str) -> None:
    key = keyformat.compose(environment, random)
    if key[position] == replacement:
        return
    altered = key[:position] + replacement + key[position + 1 :]

    with pytest.raises(KeyFormatError):
        keyformat.parse(altered)


@given(randoms)
def test_live_test_swap_fails_the_checksum(random: str) -> None:
    live = keyformat.compose("live", random)
    swapped = live.replace("_live_", "_test_", 1)

    with pytest.raises(KeyFormatError, match="checksum"):
        keyformat.parse(swapped)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "svcx_sk_live_",
        "sk_live_" + "a" * 55,
        "svcx_pk_live_" + "a" * 43 + "_000000",
        "svcx_sk_prod_" + "a" * 43 + "_000000",
        "x" * 63,
    ],
)
def test_malformed_strings_are_refused(value: str) -> None:
    with pytest.raises(KeyFormatError):
        keyformat.parse(value)


def test_console_token_is_recognised() -> None:
    with pytest.raises(KeyFormatError) as caught:
        keyformat.parse("svcx_cs_" + "a" * 55)

    assert caught.value.console_token is True


@given(st.text(max_size=80))
def test_parse_never_raises_anything_but_key_format_error(value: str) -> None:
    with contextlib.suppress(KeyFormatError):
        keyformat.parse(value)


def test_parsed_environment_is_the_enumeration() -> None:
    parsed = keyformat.parse(keyformat.generate(keyformat.Environment.TEST))

    assert parsed.environment is keyformat.Environment.TEST
    assert parsed.hint.startswith("svcx_sk_test_...")
