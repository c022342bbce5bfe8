"""Output serializers of the conversion results: they write the body and describe it in OpenAPI."""

from __future__ import annotations

from rest_framework import serializers

from conversion.engine.elements import ElementType
from conversion.engine.layout import HIDDEN_BACKGROUND, HIDDEN_INVISIBLE, HIDDEN_OFF_PAGE, HIDDEN_TINY

BBOX_TEXT = "[x0, y0, x1, y1] in PDF points from the top-left corner of the page as displayed."


def box_field() -> serializers.ListField:
    return serializers.ListField(child=serializers.FloatField(), min_length=4, max_length=4, help_text=BBOX_TEXT)


class CellSerializer(serializers.Serializer):  # writes dicts, reads nothing
    text = serializers.CharField()
    row = serializers.IntegerField(help_text="0-based row of the table's grid where the cell starts.")
    col = serializers.IntegerField(help_text="0-based column where the cell starts.")
    rowspan = serializers.IntegerField()
    colspan = serializers.IntegerField()
    bbox = box_field()


class ElementSerializer(serializers.Serializer):  # writes dicts, reads nothing
    type = serializers.ChoiceField(choices=[t.value for t in ElementType])
    bbox = box_field()
    text = serializers.CharField(help_text="The element's plain text (a table's rows as lines, cells joined by ' | ').")
    markdown = serializers.CharField(help_text="The element's Markdown, as the page's Markdown has it.")
    in_markdown = serializers.BooleanField(
        help_text=(
            "Whether the page's Markdown shows the element. The page's `markdown` is exactly the `markdown` of "
            "its elements with `in_markdown: true`, joined by a blank line, and by a single line break between "
            "list items that follow one another. Page headers and footers and hidden text are false."
        )
    )
    level = serializers.IntegerField(required=False, min_value=1, max_value=6, help_text="Headings: the level.")
    depth = serializers.IntegerField(required=False, min_value=0, help_text="List items: 0 for the outermost list.")
    marker = serializers.CharField(required=False, help_text='List items: the Markdown marker ("-", "3.").')
    rows = serializers.ListField(
        child=CellSerializer(many=True),
        required=False,
        help_text="Tables: for each row of the grid, the cells that start in it.",
    )
    header_rows = serializers.IntegerField(required=False, min_value=0, help_text="Tables: rows of the header.")
    caption = serializers.IntegerField(
        required=False, help_text="Figures: the index, in this page's elements, of the figure's caption."
    )
    reason = serializers.ChoiceField(
        choices=[HIDDEN_INVISIBLE, HIDDEN_BACKGROUND, HIDDEN_OFF_PAGE, HIDDEN_TINY],
        required=False,
        help_text=(
            "Hidden text: why a reader cannot see it (invisible render mode, the background's colour, outside "
            "the page, smaller than one point)."
        ),
    )
