"""The option `figures: "crop"` on the worker that converts: each figure's picture cropped from
its page (conversion.engine.figures) and stored as a file of the job's organization and
environment, its element given `image` and its Markdown an image link to the file.

A figure whose picture cannot be kept (the storage quota is full, the page cannot be
rendered, or the conversion has stored SVCX_FIGURES_MAX pictures already) keeps its
`<!-- figure -->` comment, and its page says so in a warning: the conversion never fails for a
figure.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from django.conf import settings

from accounts.models import Organization
from conversion import engine
from conversion.engine.elements import ElementType
from conversion.engine.figures import FigureImage, figure_image, figure_markdown, relink
from conversion.engine.render import PageRenderer
from conversion.files import figure_file_create
from core.errors import ErrorCode, ServiceError

logger = logging.getLogger("svcx.conversion")

QUOTA_WARNING = (
    "Figures on {pages} were not stored: the storage quota of stored files is full (delete files you no "
    "longer need); they are shown as <!-- figure --> comments."
)
RENDER_WARNING = "Figures on {pages} could not be rendered; they are shown as <!-- figure --> comments."
LIMIT_WARNING = (
    "Figures on {pages} were not stored: a conversion stores at most {limit} figures' pictures; they are "
    "shown as <!-- figure --> comments."
)


class FigureFiles:
    """Crops and stores the figures of each page as the engine delivers it (`page`, an
    `on_page` callback), so that pages streamed while a job runs have them too. `close()`
    when done; `warnings()` are the result's.

    The files are pending for the conversion `owner` (conversion.files.figure_file_create):
    the transaction that keeps the result keeps them (figure_files_keep); every other end of
    the conversion deletes them (figure_files_discard), and figure_files_sweep those of a
    worker that died."""

    def __init__(
        self,
        *,
        source: str | os.PathLike[str],
        password: str | None,
        organization: Organization,
        environment: str,
        api_key_id: str,
        name: str,
        owner: str,
    ) -> None:
        self.renderer = PageRenderer(source, password)
        self.organization, self.environment, self.api_key_id = organization, environment, api_key_id
        self.name = name
        # The conversion whose files these are: pending until its result is kept.
        self.owner = owner
        self.over_quota: list[int] = []
        self.unrendered: list[int] = []
        self.over_limit: list[int] = []
        # Pictures a conversion makes at most (stored or not: the quota full, a render that
        # failed): a page can hold hundreds of figure-sized images, and each is a render, an
        # encoding and a stored file.
        self.limit = int(settings.SVCX_FIGURES_MAX)
        self.limit_warning = LIMIT_WARNING.replace("{limit}", f"{self.limit:,}")
        self.tried = 0

    def page(self, page: engine.PageResult) -> None:
        figures = [i for i, e in enumerate(page.elements) if e.type == ElementType.FIGURE]
        kept = 0
        for number, index in enumerate(figures, start=1):
            element = page.elements[index]
            if self.tried >= self.limit:
                _note(page, self.over_limit, self.limit_warning)
                continue
            self.tried += 1
            try:
                picture = figure_image(self.renderer, page.page, element.bbox)
            except MemoryError:
                raise
            except Exception:
                # pdfium cannot draw what pdfminer read: the figure keeps its comment.
                logger.warning("figure not rendered", exc_info=True, extra={"page": page.page})
                _note(page, self.unrendered, RENDER_WARNING)
                continue
            try:
                record = figure_file_create(
                    organization=self.organization,
                    environment=self.environment,
                    api_key_id=self.api_key_id,
                    png=picture.png,
                    filename=f"{self.name}-p{page.page}-fig{number}.png",
                    pending_for=self.owner,
                )
            except ServiceError as exc:
                if exc.code != ErrorCode.STORAGE_QUOTA_EXCEEDED:
                    raise
                _note(page, self.over_quota, QUOTA_WARNING)
                continue
            element.image = image_of(record.id, picture)
            element.markdown = figure_markdown(page.elements, index, record.id)
            kept += 1
        if kept:
            page.markdown = relink(page.elements)

    def warnings(self) -> list[str]:
        """One warning of each kind, naming the pages."""
        return [
            template.format(pages=_pages(pages))
            for template, pages in (
                (QUOTA_WARNING, self.over_quota),
                (RENDER_WARNING, self.unrendered),
                (self.limit_warning, self.over_limit),
            )
            if pages
        ]

    def close(self) -> None:
        self.renderer.close()


def image_of(file_id: str, picture: FigureImage) -> dict[str, Any]:
    return {"file_id": file_id, "dpi": picture.dpi, "width": picture.width, "height": picture.height}


def _note(page: engine.PageResult, pages: list[int], template: str) -> None:
    if page.page not in pages:
        pages.append(page.page)
        page.warnings.append(template.format(pages=_pages([page.page])))


def _pages(numbers: list[int]) -> str:
    return f"page {numbers[0]}" if len(numbers) == 1 else "pages " + ", ".join(str(n) for n in numbers)


def figure_file_ids(payload: dict[str, Any]) -> list[str]:
    """The files of the figures of a result made with `figures: "crop"`. A figure that never
    had one (its page could not be rendered, the storage quota was full) has none to list."""
    return [
        element["image"]["file_id"]
        for page in payload.get("pages", [])
        for element in page.get("elements", [])
        if element.get("type") == ElementType.FIGURE and "image" in element
    ]
