"""The normalised options that key the result cache (decisions.md 3)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.exceptions import ValidationError

from conversion.inputs import JsonMembersSerializer
from conversion.options import Options
from core.errors import ServiceError
from core.handlers import to_service_error


@pytest.fixture(autouse=True)
def pdfium_offered(settings: Any) -> None:
    """The PDFium engine offered (SVCX_PDFIUM_ENGINE), so that its option can be validated."""
    settings.SVCX_PDFIUM_ENGINE = True


def validate_options(raw: dict[str, Any]) -> Options:
    """The `options` member of a JSON body, validated as the API does (errors as it answers them)."""
    serializer = JsonMembersSerializer(data={"options": raw})
    try:
        serializer.is_valid(raise_exception=True)
    except ValidationError as exc:
        raise to_service_error(exc, None) from exc
    options: Options = serializer.validated_data["options"]
    return options


def key(**raw: str) -> str:
    return validate_options(raw).cache_key()


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"pages": "1,2,3"}, {"pages": "1-3"}),
        ({"pages": "1-2,3-4,5"}, {"pages": "1 - 5"}),
        ({"pages": "1-"}, {}),
        ({"pages": "1,2-"}, {}),
        ({"pages": "2,3-"}, {"pages": "2-"}),
        ({"tables": "markdown", "fallback": "empty", "flavor": "gfm"}, {}),
        # The default engine named: the answer it gives without the option.
        ({"engine": "svcx-layout"}, {}),
    ],
)
def test_options_that_select_the_same_pages_share_a_cache_key(a: dict[str, str], b: dict[str, str]) -> None:
    assert key(**a) == key(**b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"pages": "1-2,4"}, {"pages": "1-4"}),
        ({"pages": "3-"}, {}),
        ({"pages": "1-3"}, {"pages": "1-"}),  # the same only when the document has 3 pages
        ({"tables": "html"}, {}),
        ({"fallback": "error"}, {}),
        ({"engine": "svcx-layout-pdfium"}, {}),
    ],
)
def test_options_that_can_differ_in_output_have_different_keys(a: dict[str, str], b: dict[str, str]) -> None:
    assert key(**a) != key(**b)


@pytest.mark.parametrize(
    ("value", "named"),
    [(None, "null"), (3, "a number"), (True, "a boolean"), (["1"], "an array"), ({"a": 1}, "an object")],
)
def test_a_wrongly_typed_option_is_named_in_json_terms(value: object, named: str) -> None:
    with pytest.raises(ServiceError) as info:
        validate_options({"tables": value})

    assert (info.value.code, info.value.param) == ("invalid_parameter_type", "options.tables")
    assert info.value.message == f"`options.tables` must be a string, not {named}."


def test_ocr_enters_the_cache_key_only_when_it_is_on() -> None:
    plain = Options().cache_key()

    assert Options(ocr="off", ocr_languages=("de",)).cache_key() == plain  # keys from before OCR stay found
    assert Options(ocr="auto").cache_key() == plain + ";ocr=auto:en"
    assert Options(ocr="force", ocr_languages=("de", "en")).cache_key() == plain + ";ocr=force:de+en"
    assert (
        len(
            {
                plain,
                *(
                    Options(ocr=m, ocr_languages=ls).cache_key()
                    for m in ("auto", "force")
                    for ls in (("en",), ("de",), ("en", "de"))
                ),
            }
        )
        == 7
    )


def test_an_unknown_engine_is_engine_not_found_naming_the_engines() -> None:
    with pytest.raises(ServiceError) as info:
        validate_options({"engine": "docling"})

    assert (info.value.code, info.value.param) == ("engine_not_found", "options.engine")
    assert info.value.details == {"accepted": ["svcx-layout", "svcx-layout-pdfium"]}
    assert "GET /v1/engines" in info.value.message


def test_the_cache_key_without_an_engine_is_the_key_before_engines_were_chosen() -> None:
    # Cached results of the default engine stay found: its key has no `engine`.
    assert key() == "pages=*;tables=markdown;fallback=empty;flavor=gfm"
    assert key(engine="svcx-layout-pdfium").endswith(";engine=svcx-layout-pdfium")
