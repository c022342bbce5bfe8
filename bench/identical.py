"""Whether two checkouts' engines give identical answers: every PDF of the authored corpus
(the document's Markdown and every page's elements) and of the real corpus (the document's
Markdown, and the error code where a conversion fails), converted with the default options
by the engine of each tree, compared byte for byte.

    python -m bench.identical OTHER_TREE [--sets authored real] [--out DIR] [--reuse-other]
        [--files NAME ...] [--engine ID] [--without-helper]

OTHER_TREE is a checkout (a git worktree of main, say) with its own `.venv`. Each tree
converts in one child process of its own interpreter, importing its own `conversion.engine`;
answers go to DIR/this and DIR/other, then /<set>/<pdf>.md and .json. `--engine ID`: both
trees convert with that engine (`ConvertOptions(engine=ID)`, the PDFium text source's
`svcx-layout-pdfium` say; default: the default engine). `--without-helper`: this tree's
PDFium text source runs without its C helper (`_pdfium_chars.so`), on its Python path, as
where no compiler built it. `--reuse-other`: keep the other tree's answers from an earlier
run (the same DIR) made with the same engine, to check a change again quickly. Exit
status 1 when any answer differs. A change meant to be output-neutral (a refactoring, a
speed-up) must leave every answer identical; ENGINE_VERSION stays.

Stdlib only at import: this file is also the child (`--dump`), run by each tree's Python.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

if __package__:
    from bench.paths import AUTHORED_CORPUS_DIR, CORPUS_DIR, REPO_DIR
else:  # the child, run as a script by another tree's interpreter
    AUTHORED_CORPUS_DIR = CORPUS_DIR = REPO_DIR = Path()

SETS = ("authored", "real")


def _documents(sets: list[str], only: list[str] | None) -> list[dict[str, object]]:
    """What to convert: set, path, password, and whether to keep the elements."""
    docs: list[dict[str, object]] = []
    if "authored" in sets:
        for pdf in sorted(AUTHORED_CORPUS_DIR.glob("*.pdf")):
            docs.append({"set": "authored", "path": str(pdf), "password": None, "elements": True})
    if "real" in sets:
        manifest = json.loads((CORPUS_DIR / "manifest.json").read_text())
        for rec in manifest["files"]:
            docs.append(
                {
                    "set": "real",
                    "path": str(CORPUS_DIR / "files" / rec["file"]),
                    "password": rec.get("password"),
                    "elements": False,
                }
            )
    if only:
        docs = [d for d in docs if Path(str(d["path"])).name in only]
    return docs


def _dump(tree: Path, docs_file: Path, out: Path, flags: list[str]) -> int:
    """The child: convert every document with `tree`'s engine, write each answer under `out`.
    `flags`: `--engine ID`, `--without-helper` (see the module's doc)."""
    # The tree's own engine, not this file's folder (bench/), first on the path.
    sys.path[0] = str(tree)
    from conversion import engine
    from conversion.engine import ENGINE_VERSION, ConvertOptions, EngineError, convert

    engine_id = flags[flags.index("--engine") + 1] if "--engine" in flags else None
    # (An older tree's options may not know `engine`: it is passed only when asked for.)
    options = ConvertOptions(engine=engine_id) if engine_id else ConvertOptions()
    helper = ""
    if "--without-helper" in flags:
        from conversion.engine import pdfium_source

        pdfium_source._HELPER = None
        helper = ", PDFium text source without its C helper"
    docs = json.loads(docs_file.read_text())
    started = time.monotonic()
    for doc in docs:
        path = Path(str(doc["path"]))
        target = out / str(doc["set"]) / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            result = convert(path, pages=None, password=doc["password"], options=options)
        except EngineError as exc:
            target.with_suffix(".md").write_text(f"error: {exc.code}\n")
            continue
        target.with_suffix(".md").write_text(result.markdown)
        if doc["elements"]:
            pages = [
                {
                    "page": p.page,
                    "markdown": p.markdown,
                    "warnings": p.warnings,
                    "continues": str(p.table_continues),
                    "elements": [e.as_dict() for e in p.elements],
                }
                for p in result.pages
            ]
            target.with_suffix(".json").write_text(json.dumps(pages, ensure_ascii=False, indent=0))
    where = Path(engine.__file__).parent
    print(
        f"{where}: engine {ENGINE_VERSION} ({engine_id or 'default'}{helper}), "
        f"{len(docs)} documents in {time.monotonic() - started:.0f} s"
    )
    return 0


def _run_tree(tree: Path, docs_file: Path, out: Path, flags: list[str]) -> None:
    python = tree / ".venv" / "bin" / "python"
    cmd = [str(python), str(Path(__file__).resolve()), "--dump", str(tree), str(docs_file), str(out), *flags]
    subprocess.run(cmd, cwd=tree, check=True)
    # What made these answers: `--reuse-other` keeps only answers of the same engine.
    (out / "engine.json").write_text(json.dumps({"tree": str(tree), "flags": flags}))


def _made_with(out: Path) -> list[str] | None:
    """The flags the answers in `out` were made with (None: unknown)."""
    try:
        return list(json.loads((out / "engine.json").read_text())["flags"])
    except (OSError, ValueError, KeyError):
        return None


def _compare(a: Path, b: Path) -> tuple[int, list[str]]:
    """How many answer files are compared, and the names of those that differ (or exist
    in one tree only)."""
    names = {p.relative_to(a) for p in a.rglob("*") if p.is_file()} | {
        p.relative_to(b) for p in b.rglob("*") if p.is_file()
    }
    differ = []
    for name in sorted(names):
        pa, pb = a / name, b / name
        if not (pa.is_file() and pb.is_file()) or pa.read_bytes() != pb.read_bytes():
            differ.append(str(name))
    return len(names), differ


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--dump"]:
        return _dump(Path(args[1]), Path(args[2]), Path(args[3]), args[4:])
    parser = argparse.ArgumentParser(prog="python -m bench.identical", description=__doc__.split("\n\n")[0])
    parser.add_argument("other", type=Path, help="the checkout to compare with (with its own .venv)")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--files", nargs="*", help="only these PDF file names")
    parser.add_argument("--out", type=Path, default=Path("/tmp/svcx-identical"), help="where answers go")
    parser.add_argument("--reuse-other", action="store_true", help="keep the other tree's answers from DIR")
    parser.add_argument("--engine", metavar="ID", help="convert with this engine in both trees (default: the default)")
    parser.add_argument(
        "--without-helper", action="store_true", help="this tree's PDFium text source without its C helper"
    )
    opts = parser.parse_args(args)
    engine_flags = ["--engine", opts.engine] if opts.engine else []
    here_flags = [*engine_flags, *(["--without-helper"] if opts.without_helper else [])]
    here, other = REPO_DIR.resolve(), opts.other.resolve()
    docs = _documents(opts.sets, opts.files)
    opts.out.mkdir(parents=True, exist_ok=True)
    docs_file = opts.out / "documents.json"
    docs_file.write_text(json.dumps(docs))
    out_here, out_other = opts.out / "this", opts.out / "other"
    reuse = opts.reuse_other and out_other.is_dir() and _made_with(out_other) == engine_flags
    if opts.reuse_other and not reuse:
        print(f"{out_other}: no answers of this engine to reuse; converting")
    trees = [(here, out_here, here_flags)]
    if not reuse:
        trees.insert(0, (other, out_other, engine_flags))
    for tree, out, flags in trees:
        for old in (out / s for s in opts.sets):
            if old.is_dir():
                for f in old.iterdir():
                    f.unlink()
        _run_tree(tree, docs_file, out, flags)
    compared, differ = 0, []
    for s in opts.sets:
        n, d = _compare(out_here / s, out_other / s)
        compared += n
        differ += [f"{s}/{name}" for name in d]
        print(f"{s}: {n} answer files, {n - len(d)} identical, {len(d)} differ")
    for name in differ[:50]:
        print(f"  differs: {name}")
    made = f" ({opts.engine or 'default engine'}{', this tree without the helper' if opts.without_helper else ''})"
    print(f"{here} against {other}{made}: {compared - len(differ)} of {compared} answer files identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
