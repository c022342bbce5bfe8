"""The web server's worker: gunicorn's threaded worker, answering requests gunicorn itself
refuses (a malformed request line, oversized headers, a bad chunk) with the JSON error
envelope instead of gunicorn's HTML page.

gunicorn builds those answers in `Worker.handle_error` through `gunicorn.util.write_error`;
the module function is replaced by `core.edge.write_error` once, when this worker class is
imported by the server.
"""

from __future__ import annotations

from gunicorn import util
from gunicorn.workers.gthread import ThreadWorker

from core.edge import write_error

util.write_error = write_error  # see the module docstring


class JsonErrorThreadWorker(ThreadWorker):
    """gunicorn's gthread worker with JSON error answers (the import above installs them)."""
