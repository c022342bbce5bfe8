"""The thresholds of the page stages, with their units, as pdfminer's `LAParams` holds those
of its layout analysis.

One frozen dataclass per stage (or per family of decisions inside one), each field named for
what it measures, in one of these units:

- em: a multiple of the font size of the line (or lines) the decision is about, so that a
  rule holds at any size of print;
- pt: PDF points (1/72 inch), for what does not scale with the type: rulings, drawing
  slack, differences between font sizes;
- share: a fraction (of the page's width or area, of a size, of the text);
- a count: of lines, characters, rows.

`EngineParams` gathers them; `DEFAULT` is what the engine converts with. The values are the
ones the engine was tuned with on the development corpus: changing one changes answers
(bump ENGINE_VERSION), and tests pass other objects to show each one is used.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PageParams:
    """`structure.render_page`'s own stages: the page's leading, the gutter search, blocks
    demoted after building, hidden text grouped."""

    # em: a gap between two lines of a segment counts toward the page's leading only from
    # this (a small overlap of boxes is still the next line) ...
    leading_gap_min_em: float = -0.2
    # em: ... up to this (wider is a paragraph or section break, not the leading).
    leading_gap_max_em: float = 2.0
    # count: fewer measured gaps than this say nothing about the leading ...
    leading_min_gaps: int = 3
    # em of the body size: ... so a common leading is assumed.
    default_leading_em: float = 0.3
    # count: a gutter (two columns) is looked for only on pages of this many lines or more;
    # fewer lines are no columns worth splitting.
    gutter_min_lines: int = 6
    # count: a monospaced block of fewer lines than this is a paragraph: one monospaced line
    # is more often a running title or a term than a program.
    code_min_lines: int = 2
    # share of a line's height: hidden lines overlapping the one above by up to this much ...
    hidden_overlap_heights: float = 0.5
    # share of a line's height: ... or below it by up to this gap are one hidden element.
    hidden_gap_heights: float = 1.0


@dataclass(frozen=True)
class BlockParams:
    """`blocks.build_blocks` and `blocks._continues`: whether a line goes on with the block
    above it (a paragraph, list item or code block) or opens one of its own."""

    # share of the line's height: a line whose top is this far above the previous line's
    # bottom stands on the same row (a word set apart, a checkbox option).
    same_row_overlap_heights: float = 0.5
    # pt: lines whose font sizes differ by more than this are different text (a heading
    # and its paragraph, a footnote); also for a paragraph carried over into a new column.
    size_tolerance_pt: float = 0.6
    # em: a line continues a block when the gap above it is at most the page's leading
    # (scaled to the line's size) plus this: leading grows with the size of the type.
    leading_slack_em: float = 0.45
    # em: a line more than this above the previous one's bottom (boxes overlapping this
    # much) is in another flow, not the next line.
    overlap_max_em: float = 2.0
    # em: a list item's text stands further in than its marker by at least this; a line
    # within it of the marker is back at the marker (its own item or none).
    marker_clearance_em: float = 0.5
    # em: a line ending further than this before its column's right edge is short: the
    # writer broke it (the end of a paragraph, an item's title).
    short_line_em: float = 3.0
    # em: a right-to-left line starting within this of its column's right edge is flush
    # with it.
    rtl_flush_em: float = 0.5
    # em: a right-to-left line ending within this of the column's left edge is full.
    rtl_full_em: float = 2.0
    # em: a line indented by more than this under a flush-left line is a first-line indent ...
    first_indent_em: float = 1.0
    # em: ... where the line above starts within this of the column's left edge ...
    flush_left_em: float = 0.5
    # em: ... and the indented line runs to within this of the column's right edge.
    full_width_em: float = 2.0
    # em per level: outline numbers ("1.2.3") nest list items by their depth, this much
    # further in per level, where the items share one indent.
    label_depth_em: float = 2.0
    # em: a list item's line that ends this close to its column's right edge was broken by
    # wrapping: the next line under its text continues it, whatever its font (a line that
    # is mostly inline code is set in a smaller monospaced font).
    wrapped_em: float = 2.0
    # share of the larger size: inline code is set in a monospaced font this much smaller
    # than the text around it at most, so a line that is mostly code has that size.
    code_size_share: float = 0.25
    # em: a line of inline code after a line break follows at the leading of the text above
    # it, give or take this (its own box is a little taller); a code block stands apart by
    # its padding (browsers: an em and more).
    item_leading_slack_em: float = 0.25
    # em: an item's text starts at most this far after its marker (browsers: about one;
    # word processors' hanging indents: up to two and a half). A paragraph further in is no
    # paragraph of the item (a column beside the list, a quotation).
    item_text_em: float = 3.0
    # em: room beyond the width of the next line's first word that a line must leave at its
    # end for its break to be the writer's, not the layout's: a space and a margin for the
    # right edge, which is known only from the longest line of the column.
    break_room_em: float = 1.0


@dataclass(frozen=True)
class HeadingParams:
    """`blocks.classify_headings` and the passes after it (`merge_wrapped_headings`,
    `title_front_matter`, `keep_introducing_headings`): which paragraphs are headings."""

    # count: a paragraph of more lines than this is prose, whatever its size.
    max_lines: int = 3
    # count of characters: a longer paragraph is prose.
    max_chars: int = 200
    # count of letters: a heading by its size has at least this many (a lone symbol in a
    # large font is no heading).
    min_letters: int = 2
    # count: a heading by its weight alone (bold at the body size) has at most this many
    # lines ...
    bold_max_lines: int = 2
    # count of characters: ... and at most this many characters (longer is a bold paragraph) ...
    bold_max_chars: int = 100
    # pt: ... and is set no smaller than the body size less this (bold small print is a
    # label, a caption).
    bold_below_body_pt: float = 0.5
    # em of the line's size: a line is centred under the title when the centres of the two
    # lie this far apart at most (its front matter: authors, date).
    centred_em: float = 1.0
    # share of the page's text: where the document's body size is less than this of the
    # page's text, the page's own most common size is its body (a brochure page set smaller).
    page_body_share: float = 0.2
    # share: a heading above a larger one heads a part of its own when it is at least this
    # share of the larger one's size; smaller, it is that heading's kicker ("Front cover").
    kicker_share: float = 0.75
    # pt: text under a heading set smaller than the body by more than this is small print
    # (labels of a diagram): the heading introduces nothing.
    small_print_pt: float = 0.6
    # share of the body size: text under a heading up to this size is body text.
    body_text_share: float = 1.15
    # pt: text under a heading is smaller than the heading by more than this, or as large
    # within it where the heading stands out by its weight alone.
    heading_size_margin_pt: float = 0.3
    # count: a paragraph of fewer letters and digits than this (a stray mark, "®", a lone
    # bullet) is no content a heading introduces.
    content_min_alnum: int = 2
    # pt: the lines of one heading wrapped onto two differ in size by this at most ...
    wrap_size_tolerance_pt: float = 0.6
    # share of the first line's size: ... or the second is set smaller, down to this ...
    wrap_smaller_share: float = 0.85
    # em: ... but then tight under the first, within this gap.
    wrap_smaller_gap_em: float = 0.3
    # em: the gap between the two lines of a wrapped heading lies from this ...
    wrap_gap_min_em: float = -0.2
    # em: ... to this (a sub-heading keeps more distance).
    wrap_gap_max_em: float = 0.6
    # em: the two lines start within this of each other ...
    wrap_left_em: float = 1.0
    # em: ... or their centres (twice) lie within this of each other (a centred title).
    wrap_centre_em: float = 2.0
    # count: a wrapped heading has at most this many lines.
    wrap_max_lines: int = 3
    # em of the next line's size: a word space and some slack of justification; a heading's
    # line wrapped when the next line's first word and this would not fit after it in its
    # column.
    wrap_space_em: float = 0.5


@dataclass(frozen=True)
class TableParams:
    """`tables._grid_table` (a table drawn with rulings) and `tables._band_table` (a table
    of text in columns without rulings)."""

    # count: a page with more rulings than this (across, or down) is a drawing (hatching,
    # a chart's grid), not tables; matching every ruling against every other would cost more
    # than the page is worth.
    grid_max_rulings: int = 2000
    # pt: a horizontal and a vertical ruling this close to meeting are joined in one grid
    # (rulings drawn as rectangles stop short of each other by their width).
    grid_join_pt: float = 2.0
    # pt: a vertical ruling that comes down from further than this (three lines of text)
    # above a grid's highest horizontal ruling is a rule between columns of text or the side
    # of a frame, not an edge of the grid: it counts only over the grid's rows
    # (`tables._within_rows`).
    grid_overrun_pt: float = 36.0
    # pt: vertical rulings this close across are one column edge (a double rule, a cell's
    # border drawn twice) ...
    grid_column_cluster_pt: float = 3.0
    # pt: ... and horizontal ones this close down one row edge.
    grid_row_cluster_pt: float = 2.0
    # pt: a grid narrower than this is no table (a checkbox, an underline and a tick) ...
    grid_min_width_pt: float = 20.0
    # pt: ... nor one lower than this (a rule with ticks).
    grid_min_height_pt: float = 8.0
    # pt: a line belongs to a ruled grid when its centre lies inside it or this close to its
    # outer rulings (rulings are drawn with a width, glyph boxes are loose).
    grid_edge_slack_pt: float = 1.0
    # count: a grid of rulings whose lines have words cut by its rulings in more than one
    # line in this many (and more than one line) is lines drawn over text, not cells.
    grid_torn_lines_per: int = 10
    # share of the page's area: a cell holding more than this is a frame around the page's
    # text, not a table.
    grid_frame_area_share: float = 0.25
    # pt: columns narrower than this without text are a double rule or cell borders drawn
    # with an inset, not columns.
    grid_thin_column_pt: float = 10.0
    # pt: rows narrower than this without text are the same, across.
    grid_thin_row_pt: float = 5.0
    # em of the smaller font: text chunks of one row this far apart at least are cells of
    # different columns (a word space is a quarter em, a tab stop more).
    band_gap_em: float = 0.8
    # share of the row's tallest line: a row this far below the one before it (in line
    # heights) ends the run of rows that may be a table.
    band_run_gap_heights: float = 2.2
    # count: a table of bands has at least this many rows in a run of rows of cells.
    band_min_rows: int = 3
    # count: a table found only by cutting lines at wide gaps has at least this many
    # columns; two columns inside lines are more often aligned code or a contents entry.
    band_split_min_columns: int = 3
    # pt: a line belongs to the band (column) its centre lies in or this close to.
    band_edge_slack_pt: float = 1.0
    # share of the page's width: a band at least this wide is a column of prose; side by
    # side with one other (or with only such others), they are a page's columns, not a table.
    band_prose_width_share: float = 0.22
    # count: a table of bands has at least this many rows with two cells or more filled.
    band_min_filled_rows: int = 3
    # share of the median gap above the rows whose first cell is filled: a row with its
    # first cell empty standing closer than this under the row above holds that row's
    # cells wrapped (a wrapped cell's lines sit at the text's leading; rows are parted by
    # the cells' padding as well).
    band_wrap_gap_share: float = 0.75
    # Rows parted by padding (`tables._leading_pitch`): the pitches between a column's lines
    # come in two sizes, the text's leading inside a cell (the least pitch, and those within
    # this share of a line's height of it: fonts of other heights move a line's centre) ...
    band_row_gap_heights: float = 0.15
    # ... and wider ones between cells of different rows, at least this many times the least.
    band_row_gap_ratio: float = 1.1
    # pt: chunks of a column whose left edges (or right edges, or centres) lie within twice
    # this of one another line up ...
    band_align_pt: float = 2.0
    # share: ... and a column of a table has at least this share of its chunks lined up.
    band_aligned_share: float = 0.5
    # share: rows so made of several lines are at least this share ragged (`tables._ragged`:
    # cells of different lengths); fewer, they are rows set in groups, not wrapped.
    band_ragged_rows_share: float = 0.5
    # share of the text's width: a gutter this far from either side of the page's text at
    # least parts two columns of text, each searched for tables on its own; nearer a side,
    # it sets a margin column (side notes, labels) apart.
    band_column_share: float = 0.3


@dataclass(frozen=True)
class EngineParams:
    """Every stage's parameters: what `structure.render_page` converts a page with."""

    page: PageParams = field(default_factory=PageParams)
    blocks: BlockParams = field(default_factory=BlockParams)
    headings: HeadingParams = field(default_factory=HeadingParams)
    tables: TableParams = field(default_factory=TableParams)


DEFAULT = EngineParams()
