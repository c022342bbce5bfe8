"""Page-range grammar (decisions.md section 2) and page selection."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conversion.engine import EngineError, parse_page_ranges, select_pages


@st.composite
def valid_ranges(draw: st.DrawFn) -> tuple[tuple[int, int | None], ...]:
    """Ascending, non-overlapping ranges; only the last may be open."""
    count = draw(st.integers(min_value=1, max_value=30))
    ranges: list[tuple[int, int | None]] = []
    start = 0
    for i in range(count):
        start = start + draw(st.integers(min_value=1, max_value=50))
        kind = draw(st.sampled_from(["single", "closed", "open"] if i == count - 1 else ["single", "closed"]))
        if kind == "single":
            ranges.append((start, start))
        elif kind == "closed":
            end = start + draw(st.integers(min_value=0, max_value=50))
            ranges.append((start, end))
            start = end
        else:
            ranges.append((start, None))
    return tuple(ranges)


def render(ranges: tuple[tuple[int, int | None], ...], space: str) -> str:
    parts = []
    for start, end in ranges:
        if end == start:
            parts.append(f"{start}")
        elif end is None:
            parts.append(f"{start}{space}-")
        else:
            parts.append(f"{start}{space}-{space}{end}")
    return f"{space},{space}".join(parts)


@given(valid_ranges(), st.sampled_from(["", " ", "  "]))
def test_valid_expression_round_trips(ranges: tuple[tuple[int, int | None], ...], space: str) -> None:
    assert parse_page_ranges(render(ranges, space)) == ranges


@given(valid_ranges(), st.integers(min_value=1, max_value=3000))
def test_selection_is_ascending_unique_and_clipped(ranges: tuple[tuple[int, int | None], ...], page_count: int) -> None:
    if ranges[0][0] > page_count:
        with pytest.raises(EngineError) as info:
            select_pages(ranges, page_count)
        assert (info.value.code, info.value.details) == ("page_range_out_of_bounds", {"page_count": page_count})
        return
    pages = select_pages(ranges, page_count)
    assert pages == sorted(set(pages))
    assert all(1 <= p <= page_count for p in pages)
    expected = {
        p for start, end in ranges for p in range(start, (page_count if end is None else min(end, page_count)) + 1)
    }
    assert set(pages) == expected


@given(valid_ranges(), st.integers(min_value=0, max_value=29))
def test_zero_anywhere_is_page_range_zero(ranges: tuple[tuple[int, int | None], ...], where: int) -> None:
    text = render(ranges, "").split(",")
    text[where % len(text)] = "0"
    with pytest.raises(EngineError) as info:
        parse_page_ranges(",".join(text))
    assert info.value.code in {"page_range_zero", "page_range_invalid"}
    assert info.value.param == "options.pages"


@given(st.integers(min_value=2, max_value=10**6), st.integers(min_value=1, max_value=10**6))
def test_descending_range_is_page_range_reversed(start: int, back: int) -> None:
    end = max(1, start - back)
    if end == start:
        end = start - 1
    with pytest.raises(EngineError) as info:
        parse_page_ranges(f"{start}-{end}")
    assert info.value.code == "page_range_reversed"
    assert info.value.param == "options.pages"


@given(valid_ranges().filter(lambda r: len(r) >= 2))
def test_out_of_order_ranges_are_page_range_invalid(
    ranges: tuple[tuple[int, int | None], ...],
) -> None:
    closed = [r for r in ranges if r[1] is not None]
    if len(closed) < 2:
        return
    swapped = render((closed[1], closed[0]), "")
    with pytest.raises(EngineError) as info:
        parse_page_ranges(swapped)
    assert info.value.code == "page_range_invalid"


@given(
    st.text(alphabet="0123456789-, x.+;", min_size=1, max_size=30).filter(
        lambda s: not all(ch in "0123456789-, " for ch in s)
    )
)
def test_foreign_characters_are_page_range_invalid(expr: str) -> None:
    with pytest.raises(EngineError) as info:
        parse_page_ranges(expr)
    assert info.value.code in {"page_range_invalid", "page_range_zero", "page_range_reversed"}


@pytest.mark.parametrize(
    "expr",
    [
        "",
        " ",
        ",",
        "1,",
        ",1",
        "1--2",
        "-3",
        "1-2-3",
        "a",
        "1 2",
        "1-3,3",
        "1-5,3-7",
        "5,3",
        "2-,3",
        "\uff11",  # a full-width 1
        "\u0663",  # an Arabic-Indic 3
        "1-\u0663",
    ],
)
def test_malformed_expressions_are_page_range_invalid(expr: str) -> None:
    with pytest.raises(EngineError) as info:
        parse_page_ranges(expr)
    assert info.value.code == "page_range_invalid"
    assert info.value.param == "options.pages"


def test_spaces_around_tokens_are_allowed() -> None:
    assert parse_page_ranges(" 1 - 3 , 5 , 8 - ") == ((1, 3), (5, 5), (8, None))


def test_expression_over_2048_characters_is_too_complex_before_parsing() -> None:
    with pytest.raises(EngineError) as info:
        parse_page_ranges("x" * 2049)
    assert info.value.code == "page_range_too_complex"


def test_expression_of_exactly_2048_characters_is_parsed() -> None:
    expr = "1-" + "9" * 2046
    assert parse_page_ranges(expr) == ((1, int("9" * 2046)),)


def test_more_than_1000_ranges_is_too_complex() -> None:
    expr = ",".join(["1"] * 1001)
    assert len(expr) <= 2048
    with pytest.raises(EngineError) as info:
        parse_page_ranges(expr)
    assert info.value.code == "page_range_too_complex"


def test_1000_ranges_are_parsed_not_refused_as_too_complex() -> None:
    with pytest.raises(EngineError) as info:
        parse_page_ranges(",".join(["1"] * 1000))
    assert info.value.code == "page_range_invalid"


def test_selection_entirely_past_the_end_is_out_of_bounds() -> None:
    with pytest.raises(EngineError) as info:
        select_pages(((5, None),), 4)
    assert info.value.code == "page_range_out_of_bounds"
    assert info.value.details == {"page_count": 4}


def test_selection_reaching_past_the_end_is_clipped() -> None:
    assert select_pages(((2, 3), (4, 10)), 5) == [2, 3, 4, 5]


def test_no_ranges_selects_every_page() -> None:
    assert select_pages(None, 3) == [1, 2, 3]


@given(st.text(min_size=2049, max_size=3000))
def test_any_expression_over_2048_characters_is_too_complex(expr: str) -> None:
    with pytest.raises(EngineError) as info:
        parse_page_ranges(expr)
    assert info.value.code == "page_range_too_complex"
    assert info.value.param == "options.pages"


@given(st.integers(min_value=1001, max_value=1024))
def test_any_expression_over_1000_ranges_is_too_complex(count: int) -> None:
    with pytest.raises(EngineError) as info:
        parse_page_ranges(",".join(["1"] * count))
    assert info.value.code == "page_range_too_complex"
