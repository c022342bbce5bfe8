"""The promises of the element spans, checked on a conversion result: what the corpus tests
run over every document they convert."""

from __future__ import annotations

from collections import Counter

from conversion.engine import ConversionResult, PageResult
from conversion.engine.elements import Element, ElementType, Span


def span_faults(result: ConversionResult) -> Counter[str]:
    """What breaks the spans' promises in `result`, counted by kind (empty when none does):

    - on each page, `markdown[start:end]` is the element's Markdown; the spans are in reading
      order, never overlap, and with the joins between them ("\\n\\n", or "\\n" between list
      items) cover the page's Markdown;
    - in the document, the spans are in order and never overlap; an element that no join of
      pages touches has the same text at its `doc_span` as at its `md_span`; only the first
      shown element of a page, and the last of the page before it, may differ (a table
      continued, a word joined across the break), and then they touch; and the list items (and
      their paragraphs) a page starts with, in their leading spaces only, where they nest in
      a list the page before left open.
    """
    faults: Counter[str] = Counter()
    markdown, doc_spans = result.document()
    previous_doc: Span | None = None
    previous_page_last: tuple[int, Span] | None = None  # index into the page list, its span
    for index, (page, spans) in enumerate(zip(result.pages, doc_spans, strict=True)):
        if len(spans) != len(page.elements):
            faults["doc_spans_not_one_per_element"] += 1
            continue
        at = 0
        shown = [(e, d) for e, d in zip(page.elements, spans, strict=True) if e.in_markdown]
        for element in page.elements:
            if not element.in_markdown:
                if element.md_span is not None:
                    faults["span_on_an_element_not_shown"] += 1
                continue
            if element.md_span is None:
                faults["shown_element_without_span"] += 1
                continue
            start, end = element.md_span
            if page.markdown[start:end] != element.markdown:
                faults["page_span_not_the_element"] += 1
            if start < at:
                faults["page_spans_overlap_or_out_of_order"] += 1
            elif start > at and page.markdown[at:start] not in ("\n", "\n\n"):
                faults["page_gap_not_a_join"] += 1
            at = max(at, end)
        if page.markdown[at:]:
            faults["page_markdown_past_the_last_span"] += 1
        for position, (element, doc_span) in enumerate(shown):
            if doc_span is None:
                faults["shown_element_without_doc_span"] += 1
                continue
            if previous_doc is not None and doc_span[0] < previous_doc[1]:
                faults["doc_spans_overlap_or_out_of_order"] += 1
            if doc_span[1] > len(markdown) or doc_span[0] > doc_span[1]:
                faults["doc_span_outside_the_document"] += 1
            in_document = markdown[doc_span[0] : doc_span[1]]
            if in_document != element.markdown and not _renested(page, element, in_document):
                at_join = position == 0 and previous_page_last is not None and previous_page_last[1][1] == doc_span[0]
                if not at_join and not (position == len(shown) - 1 and _joined_after(result, index, doc_spans)):
                    faults["doc_span_differs_away_from_a_join"] += 1
            previous_doc = doc_span
        if shown and shown[-1][1] is not None:
            previous_page_last = (index, shown[-1][1])
    return faults


def _renested(page: PageResult, element: Element, in_document: str) -> bool:
    """Whether the document shows `element`, one of the list items (or item paragraphs) of
    the list `page` leads with, nested deeper or shallower than its page does, and otherwise
    the same."""
    return (
        any(e is element for e, _ in page.lists.lead)
        and element.type in (ElementType.LIST_ITEM, ElementType.PARAGRAPH)
        and in_document.lstrip(" ") == element.markdown.lstrip(" ")
        and in_document != element.markdown
    )


def _joined_after(result: ConversionResult, index: int, doc_spans: list[list[Span | None]]) -> bool:
    """Whether the page after `index` starts where the page at `index` ends: joined to it."""
    if index + 1 >= len(result.pages):
        return False
    before, after = result.pages[index], result.pages[index + 1]
    last: Span | None = None
    for e, d in zip(before.elements, doc_spans[index], strict=True):
        if e.in_markdown:
            last = d
    first = next((d for e, d in zip(after.elements, doc_spans[index + 1], strict=True) if e.in_markdown), None)
    return last is not None and first is not None and first[0] == last[1]
