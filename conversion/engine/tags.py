"""What a tagged PDF declares of its text: which is content, and which content is a heading.

A tagged PDF (ISO 32000-1, 14.8) says what each run of text is: its marked content carries
an MCID, and the page's entry in the structure tree's parent tree names the structure
element each MCID belongs to (a paragraph, a list item, a heading of level N). Browsers,
word processors and publishing tools write it for accessibility. Where it names headings,
their level is the author's, not a guess from font sizes. Text the structure tree holds is
content; page furniture (running headers, page numbers) is marked as an artifact or left out
of the tree (ISO 32000-1, 14.8.2.2), or, by PDF 2.0 producers, held in an element of type
Artifact, which is not content either. `StructureTags.mcids` gives, for one page, every MCID the
tree holds, with the level of the heading element it lies in (0 for other content).
"""

from __future__ import annotations

from typing import Any

import pikepdf

__all__ = ["StructureTags"]

_LEVELS = {f"/H{n}": n for n in range(1, 7)}
_ARTIFACT = "/Artifact"  # an element of furniture (PDF 2.0): what it holds is not content
# Structure elements climbed from a piece of text to the heading that holds it, at most
# (a heading holds spans, links and emphasis, a few levels deep).
_MAX_CLIMB = 8
# Entries of one parent-tree array read at most (one per marked-content sequence of a
# page; a page of a browser's print holds a few hundred).
_MAX_MCIDS = 100_000
# Nodes of the parent tree's number tree visited at most, for one page.
_MAX_TREE_NODES = 4_096
# Structure elements read at most looking for a heading element anywhere in the tree.
_MAX_ELEMENTS = 200_000


class StructureTags:
    """The content and the heading elements of a document's structure tree, read page by page."""

    def __init__(self, pdf: pikepdf.Pdf) -> None:
        self._pdf = pdf
        self._levels: dict[tuple[int, int], int] = {}  # structure element -> heading level (0: none)
        root = pdf.Root.get("/StructTreeRoot")
        self._tree = root.get("/ParentTree") if isinstance(root, pikepdf.Dictionary) else None
        role_map = root.get("/RoleMap") if isinstance(root, pikepdf.Dictionary) else None
        self._roles: dict[str, str] = {}
        if isinstance(role_map, pikepdf.Dictionary):
            for key, value in role_map.items():
                if isinstance(value, pikepdf.Name):
                    self._roles[str(key)] = str(value)

    @property
    def present(self) -> bool:
        return isinstance(self._tree, pikepdf.Dictionary)

    def names_headings(self) -> bool:
        """Whether the structure tree holds a heading element (H1-H6, through the role map):
        then it names the document's headings, and text it holds elsewhere is none. Read from
        the root down, `_MAX_ELEMENTS` elements at most (False past them: no claim)."""
        root = self._pdf.Root.get("/StructTreeRoot")
        if not self.present or not isinstance(root, pikepdf.Dictionary):
            return False
        try:
            pending: list[Any] = [root.get("/K")]
            visited: set[tuple[int, int]] = set()  # indirect objects met (a broken tree may loop)
            seen = 0
            while pending and seen < _MAX_ELEMENTS:
                node = pending.pop()
                if not isinstance(node, (pikepdf.Array, pikepdf.Dictionary)):
                    continue
                if node.is_indirect:
                    if node.objgen in visited:
                        continue
                    visited.add(node.objgen)
                if isinstance(node, pikepdf.Array):
                    pending.extend(node)
                    continue
                seen += 1
                kind = node.get("/S")
                if isinstance(kind, pikepdf.Name):
                    name = str(kind)
                    if self._roles.get(name, name) in _LEVELS:
                        return True
                pending.append(node.get("/K"))
        except Exception:
            return False  # a broken structure tree claims nothing
        return False

    def mcids(self, number: int) -> dict[int, int]:
        """MCID -> heading level (1-6) of each MCID of page `number` (1-based) that the
        structure tree holds, 0 where its element lies in no heading; empty without a
        structure tree or a parent tree entry for the page."""
        if not self.present:
            return {}
        try:
            page = self._pdf.pages[number - 1].obj
            key = page.get("/StructParents")
            if not isinstance(key, int):
                return {}
            elements = self._lookup(int(key))
            if not isinstance(elements, pikepdf.Array):
                return {}
            found: dict[int, int] = {}
            for mcid, element in enumerate(elements):
                if mcid >= _MAX_MCIDS:
                    break
                if isinstance(element, pikepdf.Dictionary):
                    level = self._level(element)
                    if level >= 0:
                        found[mcid] = level
            return found
        except Exception:
            # A broken structure tree is no structure: levels come from the styles.
            return {}

    def _lookup(self, key: int) -> Any:
        """The value of `key` in the parent tree (a number tree)."""
        node = self._tree
        for _ in range(_MAX_TREE_NODES):
            if not isinstance(node, pikepdf.Dictionary):
                return None
            nums = node.get("/Nums")
            if isinstance(nums, pikepdf.Array):
                for i in range(0, len(nums) - 1, 2):
                    if nums[i] == key:
                        return nums[i + 1]
                return None
            kids = node.get("/Kids")
            if not isinstance(kids, pikepdf.Array):
                return None
            node = next(
                (
                    kid
                    for kid in kids
                    if isinstance(kid, pikepdf.Dictionary)
                    and isinstance(kid.get("/Limits"), pikepdf.Array)
                    and int(kid.Limits[0]) <= key <= int(kid.Limits[1])
                ),
                None,
            )
        return None

    def _level(self, element: Any) -> int:
        """Level of the heading element that holds `element` (itself or an ancestor), 0 for
        other content, -1 inside an Artifact element."""
        climbed: list[tuple[int, int]] = []
        level = 0
        for _ in range(_MAX_CLIMB):
            if not isinstance(element, pikepdf.Dictionary):
                break
            ident = element.objgen
            if ident != (0, 0) and ident in self._levels:
                level = self._levels[ident]
                break
            if ident != (0, 0):
                climbed.append(ident)
            kind = element.get("/S")
            if isinstance(kind, pikepdf.Name):
                name = str(kind)
                name = self._roles.get(name, name)
                level = -1 if name == _ARTIFACT else _LEVELS.get(name, 0)
                if level:
                    break
            element = element.get("/P")
        for ident in climbed:
            self._levels[ident] = level
        return level
