"""A webhook receiver for the fault suite, run as a child process in the service's venv (it
verifies each delivery with the SDK's `svcx_client.webhooks.verify` when it arrives, as a
customer's receiver would):

    python -m bench.webhook_receiver --port P --secret-file F --log L --down SECONDS

For `--down` seconds from its start it is out of order, in phases (`--phases`, each a mode and
its share of the outage): `500` answers 500, `hang` accepts the request and never answers (the
sender's read timeout ends the attempt), `refuse` closes its listening socket (connection
refused). Then it recovers: a delivery whose signature verifies is answered 204, any other 400.
Every request is a JSON line in the log: when it came, the phase, the event id and attempt
headers, and whether the signature verified. It writes `{"ready": <start>, "recovered_at": ...}`
as the log's first line once it listens.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from svcx_client import WebhookSignatureError, webhooks

DEFAULT_PHASES = "500:0.4,hang:0.2,refuse:0.2,500:0.2"
HANG_SECONDS = 30.0  # longer than the service's read timeout (10 s): the attempt times out


def phases_parse(text: str, down: float, start: float) -> list[tuple[str, float, float]]:
    """(mode, from, until) in epoch seconds for each phase of the outage."""
    shares = [(mode, float(share)) for mode, share in (item.split(":") for item in text.split(","))]
    total = sum(share for _, share in shares)
    out, at = [], start
    for mode, share in shares:
        if mode not in ("500", "hang", "refuse"):
            raise SystemExit(f"unknown phase {mode!r}: 500, hang or refuse")
        until = at + down * share / total
        out.append((mode, at, until))
        at = until
    return out


class Receiver:
    def __init__(self, port: int, secret: str, log: Path, phases: list[tuple[str, float, float]]) -> None:
        self.port, self.secret, self.phases = port, secret, phases
        self.log = log.open("a", buffering=1)
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    def mode(self, now: float) -> str:
        for mode, since, until in self.phases:
            if since <= now < until:
                return mode
        return "ok"

    def write(self, record: dict[str, Any]) -> None:
        with self.lock:
            self.log.write(json.dumps(record) + "\n")

    def handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # the name http.server calls
                at = time.time()
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                mode = receiver.mode(at)
                header = self.headers.get("Svcx-Signature")
                record: dict[str, Any] = {
                    "at": at,
                    "mode": mode,
                    "event": self.headers.get("Svcx-Event-Id"),
                    "attempt": self.headers.get("Svcx-Delivery-Attempt"),
                }
                try:
                    event = webhooks.verify(body, header, receiver.secret)
                    record.update(verified=True, type=event["type"], job=event["data"].get("id"))
                    record["job_status"] = event["data"].get("status")
                except WebhookSignatureError as exc:
                    record.update(verified=False, why=str(exc))
                if mode == "hang":
                    receiver.write({**record, "answer": "none"})
                    time.sleep(HANG_SECONDS)
                    self.close_connection = True
                    return
                status = 500 if mode == "500" else (204 if record["verified"] else 400)
                receiver.write({**record, "answer": status})
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def listen(self) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", self.port), self.handler())
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.server = server

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def run(self) -> None:
        """Listen, except while a `refuse` phase lasts; forever (the suite ends the process)."""
        while True:
            refusing = self.mode(time.time()) == "refuse"
            if refusing and self.server is not None:
                self.close()
                self.write({"at": time.time(), "mode": "refuse", "note": "listening socket closed"})
            elif not refusing and self.server is None:
                self.listen()
            time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--secret-file", type=Path, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--down", type=float, required=True, help="seconds out of order from the start")
    parser.add_argument("--phases", default=DEFAULT_PHASES)
    args = parser.parse_args()
    start = time.time()
    phases = phases_parse(args.phases, args.down, start)
    receiver = Receiver(args.port, args.secret_file.read_text().strip(), args.log, phases)
    receiver.listen()  # the first phase may refuse: the run loop closes it then
    receiver.write({"ready": start, "recovered_at": start + args.down, "phases": phases})
    receiver.run()


if __name__ == "__main__":
    main()
