"""``python -m bench ocr``: OCR engines on scans made from documents whose text is known.

Steps, each a child process with the interpreter it needs (``bench/ocr/run.py`` orchestrates,
stdlib only):

1. ``bench.ocr.scans`` (service venv: pypdfium2, Pillow, pikepdf, the engine): pages of the
   authored and real corpora rendered to images and wrapped as image-only PDFs, clean at 300
   and 150 dpi and degraded (noise and JPEG artefacts, 1-3 degree skew, a page turned 90
   degrees). The truth of each page is the engine's text-layer conversion of the original
   page (every element's text, running headers and footers included, in the engine's reading
   order, right-to-left text in logical order); a document's structure truth is its
   reference Markdown (authored corpus).
2. ``bench.ocr.systems`` (one child per system): each system reads every scan; per page its
   text, CPU seconds (one thread: ``OMP_THREAD_LIMIT=1``, onnxruntime's threads at 1) and the
   child's peak memory.
3. ``bench.ocr.score`` (bench venv: rapidfuzz): text fidelity per page with the measure of
   ``bench/real/score.py`` (``bench.quality.score.text_fidelity``), heading recall per
   document with ``bench.real.score``.

Only documents of the ``tune`` fold are used (``bench/real/sets.py``).
"""
