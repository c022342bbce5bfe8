"""Output serializers of the conversion results: they write the body and describe it in OpenAPI."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from conversion.engine import ENGINE_ID
from conversion.engine.elements import ElementType
from conversion.engine.figures import FIGURE_DPI, FIGURE_MAX_PIXELS
from conversion.engine.layout import (
    HIDDEN_BACKGROUND,
    HIDDEN_COVERED,
    HIDDEN_INVISIBLE,
    HIDDEN_OFF_PAGE,
    HIDDEN_TINY,
)
from core.serializers import (
    ConstantField,
    ListEnvelopeSerializer,
    OptionalObjectField,
    OutputSerializer,
    TimestampField,
)

BBOX_TEXT = "[x0, y0, x1, y1] in PDF points from the top-left corner of the page as displayed."


def box_field() -> serializers.ListField:
    return serializers.ListField(child=serializers.FloatField(), min_length=4, max_length=4, help_text=BBOX_TEXT)


def span_field(help_text: str) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.IntegerField(min_value=0), min_length=2, max_length=2, required=False, help_text=help_text
    )


class CellSerializer(OutputSerializer):  # writes dicts, reads nothing
    text = serializers.CharField()
    row = serializers.IntegerField(help_text="0-based row of the table's grid where the cell starts.")
    col = serializers.IntegerField(help_text="0-based column where the cell starts.")
    rowspan = serializers.IntegerField()
    colspan = serializers.IntegerField()
    bbox = box_field()


class FigureImageSerializer(OutputSerializer):  # writes dicts, reads nothing
    file_id = serializers.CharField(
        help_text="The stored file of the picture (PNG): download it with GET /v1/files/{id}/content."
    )
    dpi = serializers.IntegerField(
        help_text=f"Pixels per inch it was cropped at: {FIGURE_DPI}, lower for a figure over "
        f"{FIGURE_MAX_PIXELS:,} pixels."
    )
    width = serializers.IntegerField(help_text="Pixels: the box's width in points times dpi / 72.")
    height = serializers.IntegerField(help_text="Pixels: the box's height in points times dpi / 72.")


class ElementSerializer(OutputSerializer):  # writes dicts, reads nothing
    type = serializers.ChoiceField(choices=[t.value for t in ElementType])
    bbox = box_field()
    text = serializers.CharField(help_text="The element's plain text (a table's rows as lines, cells joined by ' | ').")
    in_markdown = serializers.BooleanField(
        help_text=(
            "Whether the page's Markdown shows the element. Page headers and footers, page numbers and hidden "
            "text are false."
        )
    )
    md_span = span_field(
        "Shown elements: [start, end) character offsets (Unicode code points) of the element's Markdown in "
        "its page's `markdown`. The spans are in reading order and never overlap; between two of them the page "
        "has only the join (a blank line, or one line break between list items)."
    )
    doc_span = span_field(
        "Shown elements of a finished result: [start, end) character offsets of the element's Markdown in the "
        "document's `markdown`. Where no join of pages touches it, the text is the same as at `md_span`; a "
        "table continued across a page break spans the rows it adds to the table before it, and a paragraph "
        "joined across a break at a hyphenated word spans its part of the joined text."
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
        choices=[HIDDEN_INVISIBLE, HIDDEN_BACKGROUND, HIDDEN_OFF_PAGE, HIDDEN_TINY, HIDDEN_COVERED],
        required=False,
        help_text=(
            "Hidden text: why a reader cannot see it (invisible render mode, the background's colour, outside "
            "the page, smaller than one point, covered by an opaque shape or picture drawn over it)."
        ),
    )
    source = serializers.ChoiceField(  # type: ignore[assignment]  # a member, not Field.source
        choices=["ocr"], required=False, help_text='Pages read by OCR: "ocr" (the text was recognised in the picture).'
    )
    confidence = serializers.FloatField(
        required=False,
        min_value=0.0,
        max_value=1.0,
        help_text="Pages read by OCR: the mean confidence (0 to 1) of the recognised words inside the element.",
    )
    image = FigureImageSerializer(
        required=False,
        help_text='Figures, with the option `figures: "crop"`: the figure\'s picture, stored as a file of the '
        "organization (the Markdown shows it as `![caption](file_id)`).",
    )


class ConversionPageSerializer(OutputSerializer):  # describes stored pages (StoredPagesField)
    page = serializers.IntegerField()
    label = serializers.CharField(allow_null=True)  # type: ignore[assignment]  # a member, not Field.label
    markdown = serializers.CharField()
    has_text_layer = serializers.BooleanField()
    warnings = serializers.ListField(child=serializers.CharField())
    width = serializers.FloatField(help_text="Points, after the page's rotation.")
    height = serializers.FloatField(help_text="Points, after the page's rotation.")
    elements = ElementSerializer(many=True, help_text="What the page holds, in reading order.")


# A stored page's members in the order the page serializer declares them: the result is stored
# as jsonb, which keeps no order.
PAGE_MEMBERS = tuple(ConversionPageSerializer._declared_fields)


@extend_schema_field(ConversionPageSerializer(many=True))
class StoredPagesField(serializers.Field):  # writes stored pages, reads nothing
    """The pages as the worker stored them, elements written once there by ElementSerializer:
    an answer (or a cache hit of 200 pages) sends them as they are, each page's members in
    ConversionPageSerializer's order, and runs no serializer over its elements."""

    def to_representation(self, pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{name: page[name] for name in PAGE_MEMBERS} for page in pages]


class ChunkBoxSerializer(OutputSerializer):  # writes dicts, reads nothing
    page = serializers.IntegerField()
    bbox = box_field()
    element = serializers.CharField(
        help_text="The element: `p{page}.e{index}`, its page and its index in that page's `elements`."
    )


class ChunkSerializer(OutputSerializer):  # describes stored chunks (StoredChunksField)
    id = serializers.CharField(help_text="`c1`, `c2`, ... in reading order.")
    markdown = serializers.CharField(
        help_text=(
            "The chunk's text: the document's `markdown` at `doc_span`, after the header of a table it "
            "continues (repeated), and an HTML table it cuts closed."
        )
    )
    heading_path = serializers.ListField(child=serializers.CharField(), help_text="The titles of the headings above.")
    pages = serializers.ListField(child=serializers.IntegerField(), help_text="The pages its text comes from.")
    boxes = ChunkBoxSerializer(many=True, help_text="Each element it holds: page, box and element id, to cite.")
    doc_span = serializers.ListField(
        child=serializers.IntegerField(min_value=0),
        min_length=2,
        max_length=2,
        help_text="[start, end) character offsets in the document's `markdown`.",
    )
    token_count = serializers.IntegerField(
        help_text="cl100k_base tokens (OpenAI's text-embedding-3 tokenizer) of `markdown`."
    )
    elements = serializers.ListField(child=serializers.CharField(), help_text="The element ids it holds.")


@extend_schema_field(ChunkSerializer(many=True))
class StoredChunksField(serializers.Field):  # writes stored chunks, reads nothing
    """The chunks as the worker stored them (with the option `chunking`; absent otherwise)."""

    def to_representation(self, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{name: chunk[name] for name in CHUNK_MEMBERS} for chunk in chunks]


CHUNK_MEMBERS = tuple(ChunkSerializer._declared_fields)


class EngineRefSerializer(OutputSerializer):
    id = serializers.CharField()
    version = serializers.CharField()


class ConvertedDocumentSerializer(OutputSerializer):
    page_count = serializers.IntegerField()
    sha256 = serializers.CharField()


class ConversionSerializer(OutputSerializer):
    # Writes the stored payload (conversion.runner) with the answer's own members: request_id,
    # pages_billed, credits_billed, cached, and metadata and debug (None: left out).
    object = ConstantField("conversion")
    request_id = serializers.CharField()
    engine = EngineRefSerializer()
    document = ConvertedDocumentSerializer()
    pages = StoredPagesField()
    markdown = serializers.CharField(
        help_text="All delivered pages joined; a table that runs on across a page break is one table here."
    )
    chunks = StoredChunksField(
        required=False, help_text="With the option `chunking`: the document cut in chunks for retrieval."
    )
    result_truncated = serializers.BooleanField()
    pages_billed = serializers.IntegerField()
    credits_billed = serializers.IntegerField()
    cached = serializers.BooleanField()
    warnings = serializers.ListField(child=serializers.CharField())
    metadata = OptionalObjectField(help_text="Echo of the client metadata, when sent.")
    debug = OptionalObjectField(help_text="Timings and engine details, with debug: true.")


class EngineSerializer(OutputSerializer):
    id = serializers.CharField()
    object = ConstantField("engine")
    version = serializers.CharField()
    default = serializers.BooleanField()
    description = serializers.CharField()
    ocr = serializers.BooleanField()
    tables = serializers.ListField(child=serializers.CharField())
    flavors = serializers.ListField(child=serializers.CharField())
    ocr_languages = serializers.ListField(
        child=serializers.CharField(),
        help_text=(
            "ISO 639-1 codes of the languages the engine's OCR reads, for `options.ocr_languages` of a version 2 "
            "job; empty where OCR is not installed. Version 1 does not read scans (`ocr` is false there)."
        ),
    )


class EngineListSerializer(ListEnvelopeSerializer):
    row = EngineSerializer


class StoredFileSerializer(OutputSerializer):
    # "StoredFile", not "File": generated clients have a File type for uploads.
    id = serializers.CharField()
    object = ConstantField("file")
    filename = serializers.CharField()
    bytes = serializers.IntegerField()
    sha256 = serializers.CharField()
    page_count = serializers.IntegerField(allow_null=True)
    created_at = TimestampField()
    expires_at = TimestampField()


class FileDeletedSerializer(OutputSerializer):
    id = serializers.CharField()
    object = ConstantField("file")
    deleted = ConstantField(True)


# Inspect and toc answer the worker's stored result (conversion.runner) with the request's
# echoes. The result is stored as jsonb, which returns an object's members shortest name first
# (then by bytes): the members are declared in that order, the order clients have always read.


def _metadata_echo() -> OptionalObjectField:
    return OptionalObjectField(help_text="Echo of the client metadata, when sent.")


def _debug_echo() -> OptionalObjectField:
    return OptionalObjectField(help_text="Engine and worker time, with debug: true.")


class PageSampleSerializer(OutputSerializer):
    page = serializers.IntegerField()
    chars = serializers.IntegerField()
    sample = serializers.CharField()
    hidden_text = serializers.DictField(
        child=serializers.IntegerField(),
        help_text=(
            "Lines of text on the page that a reader cannot see, by reason (invisible, background_color, "
            "off_page, tiny, covered): left out of `sample` and of conversions. Empty when there are none."
        ),
    )
    has_text_layer = serializers.BooleanField()


class InspectionSerializer(OutputSerializer):
    object = ConstantField("inspection")
    xfa = serializers.BooleanField()
    pages = PageSampleSerializer(many=True)
    repaired = serializers.BooleanField(help_text="Whether the file needed repair to be read.")
    warnings = serializers.ListField(child=serializers.CharField())
    encrypted = serializers.BooleanField()
    page_count = serializers.IntegerField(allow_null=True)
    page_labels = serializers.ListField(
        child=serializers.CharField(allow_null=True),
        allow_null=True,
        help_text="The PDF's labels of the sampled pages (null where a page has none), or null without labels.",
    )
    pdf_version = serializers.CharField(allow_null=True)
    outline_items = serializers.IntegerField()
    password_required = serializers.BooleanField()
    extraction_allowed = serializers.BooleanField(allow_null=True)
    metadata = _metadata_echo()
    debug = _debug_echo()


class PagePlanSerializer(OutputSerializer):
    page = serializers.IntegerField()
    ocr = serializers.BooleanField(help_text="Whether a job with these options reads the page by OCR.")


class JobEstimateSerializer(OutputSerializer):
    pages = serializers.IntegerField(help_text="The pages selected (`options.pages`).")
    ocr_pages = serializers.IntegerField(help_text="Of them, those a job with these options reads by OCR.")
    upper_bound = serializers.BooleanField(
        help_text="True when the pre-flight ran out of time before it looked at every page: those it did not look "
        "at are counted in `ocr_pages` (a warning says so). A job bills the pages its result reads by OCR, never "
        "more than it holds."
    )
    credits = serializers.IntegerField(
        help_text="What the job holds when it is created and bills when it converts them all (0 with a test key, "
        "whose pages count against its monthly allowance)."
    )
    credits_per_page = serializers.IntegerField(help_text="The price of a page read from its text layer.")
    credits_per_ocr_page = serializers.IntegerField(help_text="The price of a page read by OCR.")
    plan = PagePlanSerializer(many=True, help_text="Every selected page, in order: whether OCR reads it.")


class JobInspectionSerializer(InspectionSerializer):
    estimate = JobEstimateSerializer(
        allow_null=True,
        help_text="What a job (POST /v2/jobs) with the same document and options would read by OCR and cost; null "
        "when the document cannot be opened (its password is needed) or the selection has more pages than a job "
        "converts (a warning says so).",
    )


class TocEntrySerializer(OutputSerializer):
    page = serializers.IntegerField(allow_null=True)
    level = serializers.IntegerField()
    title = serializers.CharField()


class TocSerializer(OutputSerializer):
    object = ConstantField("toc")
    entries = TocEntrySerializer(many=True)
    page_count = serializers.IntegerField()
    metadata = _metadata_echo()
    debug = _debug_echo()


# --- version 2 jobs ------------------------------------------------------------------------------


class JobErrorSerializer(OutputSerializer):
    code = serializers.CharField()
    message = serializers.CharField()
    param = serializers.CharField(allow_null=True)
    details = serializers.DictField()


class JobChunkingSerializer(OutputSerializer):
    strategy = serializers.ChoiceField(["structure"])
    max_tokens = serializers.IntegerField()
    overlap_tokens = serializers.IntegerField()


class JobOptionsSerializer(OutputSerializer):
    pages = serializers.CharField(allow_null=True, help_text="The page ranges asked for (null: every page).")
    tables = serializers.CharField()
    fallback = serializers.CharField()
    flavor = serializers.CharField()
    ocr = serializers.ChoiceField(
        ["off", "auto", "force"],
        help_text="Pages read from their picture: none, those without a usable text layer, or every one.",
    )
    ocr_languages = serializers.ListField(
        child=serializers.CharField(), help_text="ISO 639-1 codes of the languages OCR reads the pages in."
    )
    figures = serializers.ChoiceField(
        ["none", "crop"], help_text="Figures as comments (none) or as pictures stored as files (crop)."
    )
    chunking = JobChunkingSerializer(allow_null=True, help_text="The chunks asked for; null: none.")
    engine = serializers.CharField(help_text="The engine that converts (GET /v1/engines).")

    def to_representation(self, instance: Any) -> Any:
        # A job made before an option existed has its default (OCR: no page read by OCR).
        chunking = instance.get("chunking")
        return super().to_representation(
            {
                "ocr": "off",
                "ocr_languages": ["en"],
                **instance,
                "figures": instance.get("figures", "none"),
                "engine": instance.get("engine", ENGINE_ID),
                "chunking": (
                    {"strategy": "structure", "max_tokens": chunking[0], "overlap_tokens": chunking[1]}
                    if chunking
                    else None
                ),
            }
        )


class JobSerializer(OutputSerializer):
    """A version 2 job (conversion.models.Job)."""

    id = serializers.CharField()
    object = ConstantField("job")
    status = serializers.ChoiceField(["queued", "running", "succeeded", "failed", "canceled"])
    filename = serializers.CharField()
    options = JobOptionsSerializer()
    pages_total = serializers.IntegerField(help_text="The pages selected.")
    pages_completed = serializers.IntegerField(help_text="The pages converted so far, in page order.")
    credits_held = serializers.IntegerField(help_text="Credits held for the job while it is queued or running.")
    credits_billed = serializers.IntegerField(
        help_text="Credits billed: those of the result's pages once it succeeded."
    )
    pages_billed = serializers.IntegerField()
    ocr_pages = serializers.IntegerField(
        help_text="Pages read by OCR (option `ocr`): while the job is queued or running (or once it failed or was "
        "canceled), the pre-flight's estimate, which `credits_held` holds for at the price of a page read by OCR "
        "(POST /v2/inspect says it; an upper bound when a warning says so); once it succeeded, the pages its result "
        "read by OCR and billed at the held price (`credits_billed`), never more than the hold covers."
    )
    error = JobErrorSerializer(allow_null=True, help_text="Why the job failed (null otherwise).")
    warnings = serializers.ListField(child=serializers.CharField())
    webhook_metadata = serializers.DictField(allow_null=True, help_text="Echo of `webhook_metadata`, when sent.")
    request_id = serializers.CharField(help_text="The request that created the job.")
    created_at = TimestampField()
    started_at = TimestampField(allow_null=True)
    finished_at = TimestampField(allow_null=True)
    expires_at = TimestampField(help_text="When the job and its result are deleted (24 hours after it ends).")


class JobListSerializer(ListEnvelopeSerializer):
    row = JobSerializer


class JobResultSerializer(ConversionSerializer):
    """The result of a job: version 1's conversion result, with the job's id and status; while
    the job runs, the pages converted so far."""

    job_id = serializers.CharField()
    status = serializers.ChoiceField(["queued", "running", "succeeded"])
