"""`Accept` negotiation between JSON and Markdown (decisions.md 3)."""

from __future__ import annotations

import pytest

from core.errors import ServiceError
from core.negotiation import negotiate

OFFERED = ["application/json", "text/markdown"]


@pytest.mark.parametrize(
    ("accept", "chosen"),
    [
        (None, "application/json"),
        ("", "application/json"),
        ("*/*", "application/json"),
        ("text/markdown", "text/markdown"),
        ("text/*", "text/markdown"),
        ("application/json, text/markdown", "application/json"),
        ("text/markdown, application/json", "application/json"),
        ("application/json;q=0.5, text/markdown", "text/markdown"),
        ("text/markdown;q=0.9, */*;q=0.1", "text/markdown"),
        ("text/markdown;q=0, */*", "application/json"),
        ("application/*;q=0.2, text/markdown;q=0.3", "text/markdown"),
        ("*/*, text/markdown", "text/markdown"),
    ],
)
def test_accept_chooses_by_q_value_then_specificity_then_json(accept: str | None, chosen: str) -> None:
    assert OFFERED[negotiate(accept, OFFERED)] == chosen


@pytest.mark.parametrize("accept", ["text/html", "image/*", "text/markdown;q=0, application/json;q=0"])
def test_accept_naming_no_offered_type_is_unsupported_accept(accept: str) -> None:
    with pytest.raises(ServiceError) as info:
        negotiate(accept, OFFERED)

    assert info.value.code == "unsupported_accept"
    assert info.value.details == {"available": OFFERED}
    assert info.value.message.endswith("use application/json or text/markdown.")
