"""Page-range expressions (decisions.md section 2) and page selection."""

from __future__ import annotations

import re
from itertools import pairwise

from .errors import EngineError

__all__ = ["PageRanges", "parse_page_ranges", "select_pages"]

PageRanges = tuple[tuple[int, int | None], ...]
"""(start, end) pairs, 1-based and inclusive; end None means "to the last page"."""

MAX_EXPRESSION_CHARS = 2048
MAX_RANGES = 1000
_PARAM = "options.pages"

# One range token, spaces already stripped from its ends. Digits only: "+3", "1.0" and
# "0x2" are not page numbers.
_RANGE = re.compile(r"([0-9]+)(?: *(-) *([0-9]+)?)?")  # ASCII digits only: int() would take "１" too


def _invalid(expr_hint: str) -> EngineError:
    return EngineError(
        "page_range_invalid",
        f"The pages expression could not be read ({expr_hint}). Use ascending, "
        'non-overlapping ranges such as "1-3,5,8-".',
        param=_PARAM,
    )


def parse_page_ranges(expr: str) -> PageRanges:
    """Parse `range ("," range)*` where a range is `N`, `N-M` (N <= M) or `N-`.

    Spaces are allowed around tokens. Ranges must be ascending and must not overlap.

    Raises:
        EngineError: `page_range_too_complex` (over 2,048 characters, checked before
            parsing, or over 1,000 ranges), `page_range_zero` (a page 0 anywhere),
            `page_range_reversed` (`7-3`), `page_range_invalid` (anything else that does
            not parse, including descending or overlapping ranges). `param` is
            "options.pages".
    """
    if len(expr) > MAX_EXPRESSION_CHARS:
        raise EngineError(
            "page_range_too_complex",
            f"The pages expression is longer than {MAX_EXPRESSION_CHARS} characters. "
            "Merge adjacent pages into ranges such as 1-50.",
            details={"max_chars": MAX_EXPRESSION_CHARS},
            param=_PARAM,
        )
    tokens = expr.split(",")
    if len(tokens) > MAX_RANGES:
        raise EngineError(
            "page_range_too_complex",
            f"The pages expression has more than {MAX_RANGES} ranges. Merge adjacent pages into ranges such as 1-50.",
            details={"max_ranges": MAX_RANGES},
            param=_PARAM,
        )
    parsed: list[tuple[int, int | None]] = []
    for token in tokens:
        match = _RANGE.fullmatch(token.strip(" "))
        if match is None:
            raise _invalid("each range must be N, N-M or N-")
        start = int(match.group(1))
        end: int | None
        if match.group(2) is None:
            end = start
        elif match.group(3) is None:
            end = None
        else:
            end = int(match.group(3))
        if start == 0 or end == 0:
            raise EngineError(
                "page_range_zero",
                "Pages are numbered from 1; the pages expression contains page 0.",
                param=_PARAM,
            )
        if end is not None and end < start:
            raise EngineError(
                "page_range_reversed",
                f"The range {start}-{end} runs backwards; write it as {end}-{start}.",
                details={"range": f"{start}-{end}"},
                param=_PARAM,
            )
        parsed.append((start, end))
    for (_, prev_end), (start, _) in pairwise(parsed):
        # An open range ("5-") must be the last one: anything after it overlaps.
        if prev_end is None or start <= prev_end:
            raise _invalid("ranges must be ascending and must not overlap")
    return tuple(parsed)


def select_pages(ranges: PageRanges | None, page_count: int) -> list[int]:
    """Return the 1-based page numbers `ranges` selects, clipped to `page_count`.

    `None` selects every page. A selection that reaches past the last page is clipped.

    Raises:
        EngineError: `page_range_out_of_bounds` (details: page_count) when the selection
            lies entirely past the last page.
    """
    if ranges is None:
        return list(range(1, page_count + 1))
    pages: list[int] = []
    for start, end in ranges:
        stop = page_count if end is None else min(end, page_count)
        pages.extend(range(start, stop + 1))
    if not pages:
        raise EngineError(
            "page_range_out_of_bounds",
            f"The document has {page_count} page(s); the pages expression selects none of them.",
            details={"page_count": page_count},
            param=_PARAM,
        )
    return pages
