"""Whether two checkouts' engines give identical answers: every PDF of the authored corpus
(the document's Markdown and every page's elements) and of the real corpus (the document's
Markdown, and the error code where a conversion fails), converted with the default options
by the engine of each tree, compared byte for byte.

    python -m bench.identical OTHER_TREE [--sets authored real] [--out DIR] [--reuse-other]
        [--files NAME ...]

OTHER_TREE is a checkout (a git worktree of main, say) with its own `.venv`. Each tree
converts in one child process of its own interpreter, importing its own `conversion.engine`;
answers go to DIR/<tree name>/<set>/<pdf>.md and .json. `--reuse-other`: keep the other
tree's answers from an earlier run (the same DIR), to check a change again quickly. Exit
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


def _dump(tree: Path, docs_file: Path, out: Path) -> int:
    """The child: convert every document with `tree`'s engine, write each answer under `out`."""
    # The tree's own engine, not this file's folder (bench/), first on the path.
    sys.path[0] = str(tree)
    from conversion import engine
    from conversion.engine import ENGINE_VERSION, ConvertOptions, EngineError, convert

    docs = json.loads(docs_file.read_text())
    started = time.monotonic()
    for doc in docs:
        path = Path(str(doc["path"]))
        target = out / str(doc["set"]) / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            result = convert(path, pages=None, password=doc["password"], options=ConvertOptions())
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
    print(f"{where}: engine {ENGINE_VERSION}, {len(docs)} documents in {time.monotonic() - started:.0f} s")
    return 0


def _run_tree(tree: Path, docs_file: Path, out: Path) -> None:
    python = tree / ".venv" / "bin" / "python"
    cmd = [str(python), str(Path(__file__).resolve()), "--dump", str(tree), str(docs_file), str(out)]
    subprocess.run(cmd, cwd=tree, check=True)


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
        return _dump(Path(args[1]), Path(args[2]), Path(args[3]))
    parser = argparse.ArgumentParser(prog="python -m bench.identical", description=__doc__.split("\n\n")[0])
    parser.add_argument("other", type=Path, help="the checkout to compare with (with its own .venv)")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--files", nargs="*", help="only these PDF file names")
    parser.add_argument("--out", type=Path, default=Path("/tmp/svcx-identical"), help="where answers go")
    parser.add_argument("--reuse-other", action="store_true", help="keep the other tree's answers from DIR")
    opts = parser.parse_args(args)
    here, other = REPO_DIR.resolve(), opts.other.resolve()
    docs = _documents(opts.sets, opts.files)
    opts.out.mkdir(parents=True, exist_ok=True)
    docs_file = opts.out / "documents.json"
    docs_file.write_text(json.dumps(docs))
    out_here, out_other = opts.out / "this", opts.out / "other"
    trees = [(here, out_here)] if opts.reuse_other and out_other.is_dir() else [(other, out_other), (here, out_here)]
    for tree, out in trees:
        for old in (out / s for s in opts.sets):
            if old.is_dir():
                for f in old.iterdir():
                    f.unlink()
        _run_tree(tree, docs_file, out)
    compared, differ = 0, []
    for s in opts.sets:
        n, d = _compare(out_here / s, out_other / s)
        compared += n
        differ += [f"{s}/{name}" for name in d]
        print(f"{s}: {n} answer files, {n - len(d)} identical, {len(d)} differ")
    for name in differ[:50]:
        print(f"  differs: {name}")
    print(f"{here} against {other}: {compared - len(differ)} of {compared} answer files identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
