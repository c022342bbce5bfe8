"""Slow clients: 500 connections trickle their headers or their body (a piece every second,
reconnecting whenever the server ends one), while another organization's client measures
`GET /v1/health` and one-page conversions; on gunicorn direct (`make run`'s topology) and behind
nginx with deploy/nginx.conf (the production topology; when /usr/sbin/nginx exists).

Goal: each measured request answers within 1 s while the connections are open.
"""

from __future__ import annotations

import contextlib
import http.client
import multiprocessing
import resource
import socket
import statistics
import threading
import time
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from bench.hostile import HostileResult
from bench.nginx import NGINX, start_nginx
from bench.stack import free_port, stop_process_group

if TYPE_CHECKING:
    from bench.faults import Suite

CONNECTIONS = 500
TRICKLE_EVERY_S = 1.0
MEASURE_S = 30.0  # past the header (10 s) and body (20 s) deadlines: the attacker reconnects
GOAL_S = 1.0
HEAD = b"POST /v1/convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n"


class Attack(threading.Thread):
    """`CONNECTIONS` connections to `port`, half trickling a header line, half a body (after a
    head announcing 1 MB), each replaced when the server closes it."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.stopping = threading.Event()
        self.socks: list[socket.socket | None] = [None] * CONNECTIONS
        self.reconnects = 0
        self.open_samples: list[int] = []

    def _open(self, i: int) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=2)
            sock.sendall(HEAD if i % 2 else HEAD + b"Content-Length: 1000000\r\n\r\n%PDF-")
            sock.setblocking(False)
            self.socks[i] = sock
        except OSError:
            self.socks[i] = None

    def ramp(self) -> None:
        for i in range(CONNECTIONS):
            self._open(i)

    def run(self) -> None:
        step = 0
        while not self.stopping.wait(TRICKLE_EVERY_S):
            step += 1
            piece = f"X-Slow-{step}: {step}\r\n".encode()
            for i, sock in enumerate(self.socks):
                alive = sock is not None
                if sock is not None:
                    try:
                        sock.recv(4096, socket.MSG_PEEK)
                        alive = False  # answered (408) or closed by the server: over for this one
                    except BlockingIOError:
                        try:
                            sock.send(piece if i % 2 else b"1.7 ")
                        except OSError:
                            alive = False
                    except OSError:
                        alive = False
                if not alive:
                    if sock is not None:
                        sock.close()
                        self.reconnects += 1
                    self._open(i)
            self.open_samples.append(sum(s is not None for s in self.socks))

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=10)
        for sock in self.socks:
            if sock is not None:
                sock.close()


def _attack(port: int, seconds: float, report: Connection) -> None:
    """The attack in a process of its own (its sockets and loop do not slow the measuring
    client's threads): `(open_min, reconnects)` sent on `report` at the end."""
    attack = Attack(port)
    attack.ramp()
    attack.start()
    time.sleep(seconds)
    attack.stop()
    report.send((min(attack.open_samples) if attack.open_samples else 0, attack.reconnects))


def _timed(port: int, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> tuple[float, int]:
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        status = response.status
    except (OSError, http.client.HTTPException):
        status = 0
    finally:
        conn.close()
    return time.monotonic() - started, status


def _measure(port: int, key: str, tag: str) -> dict[str, list[tuple[float, int]]]:
    """Health every 0.5 s and a fresh one-page conversion back to back, for MEASURE_S seconds."""
    from bench.faults import make_pdf  # the suite's module, loaded by now

    samples: dict[str, list[tuple[float, int]]] = {"health": [], "convert": []}
    until = time.monotonic() + MEASURE_S

    def health() -> None:
        while time.monotonic() < until:
            samples["health"].append(_timed(port, "GET", "/v1/health", None, {}))
            time.sleep(0.5)

    def convert() -> None:
        n = 0
        while time.monotonic() < until:
            n += 1
            pdf = make_pdf(f"{tag}-{n}", 1)  # fresh bytes: a real conversion, never a cache hit
            headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/pdf"}
            samples["convert"].append(_timed(port, "POST", "/v1/convert", pdf, headers))

    threads = [threading.Thread(target=health), threading.Thread(target=convert)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return samples


def _summary(samples: list[tuple[float, int]]) -> dict[str, Any]:
    seconds = [s for s, _ in samples] or [float("inf")]
    return {
        "n": len(samples),
        "p50_s": round(statistics.median(seconds), 3),
        "p95_s": round(sorted(seconds)[int(0.95 * (len(seconds) - 1))], 3),
        "max_s": round(max(seconds), 3),
        "non_200": sum(status != 200 for _, status in samples),
    }


def _raise_file_limit(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(
                resource.RLIMIT_NOFILE, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard)
            )


def _topology(result: HostileResult, name: str, port: int, key: str) -> None:
    from bench.faults import make_pdf

    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/pdf"}
    idle = _summary([_timed(port, "POST", "/v1/convert", make_pdf(f"idle-{name}-{i}", 1), headers) for i in range(5)])
    receive, report = multiprocessing.Pipe(duplex=False)
    ramp_s = 5.0  # opening the connections, then every one has sent a piece since it opened
    attacker = multiprocessing.get_context("fork").Process(target=_attack, args=(port, ramp_s + MEASURE_S, report))
    attacker.start()
    try:
        time.sleep(ramp_s)
        measured = _measure(port, key, f"slow-{name}")
        open_min, reconnects = receive.recv() if receive.poll(30) else (0, 0)
    finally:
        attacker.join(timeout=10)
        if attacker.is_alive():
            attacker.kill()
    health, convert = _summary(measured["health"]), _summary(measured["convert"])
    result.figures.update(
        {
            f"{name}_convert_idle_p50_s": idle["p50_s"],
            f"{name}_convert_idle_max_s": idle["max_s"],
            f"{name}_health_p50_s": health["p50_s"],
            f"{name}_health_p95_s": health["p95_s"],
            f"{name}_health_max_s": health["max_s"],
            f"{name}_health_n": health["n"],
            f"{name}_convert_p50_s": convert["p50_s"],
            f"{name}_convert_p95_s": convert["p95_s"],
            f"{name}_convert_max_s": convert["max_s"],
            f"{name}_convert_n": convert["n"],
            f"{name}_slow_connections_open_min": open_min,
            f"{name}_slow_reconnects": reconnects,
        }
    )
    for what, figures in (("GET /v1/health", health), ("a one-page conversion", convert)):
        result.checks[f"{name}: {what} answers 200 within {GOAL_S:g} s under {CONNECTIONS} slow connections"] = {
            "pass": figures["n"] > 0 and figures["non_200"] == 0 and figures["max_s"] < GOAL_S,
            "detail": f"n={figures['n']}, p50 {figures['p50_s']} s, max {figures['max_s']} s, "
            f"{figures['non_200']} not 200",
        }
    result.checks[f"{name}: the slow connections stayed open"] = {
        "pass": open_min >= 0.9 * CONNECTIONS,
        "detail": f"at least {open_min} of {CONNECTIONS} open at each step, {reconnects} reconnections",
    }


def run(suite: Suite) -> HostileResult:
    result = HostileResult(
        name="slow_clients",
        description=f"{CONNECTIONS} connections trickle headers or bodies (one piece a second, reconnecting); "
        "another organization's health checks and one-page conversions, gunicorn direct and behind nginx",
    )
    _raise_file_limit(4 * CONNECTIONS)
    account = suite.account(credits=1000)
    _topology(result, "gunicorn", suite.s.port, account.key)
    if NGINX.exists():
        port = free_port()
        proxy = start_nginx(suite.workdir / "nginx", f"127.0.0.1:{suite.s.port}", port)
        try:
            _topology(result, "nginx", port, account.key)
        finally:
            stop_process_group(proxy, 10)
    else:
        result.checks["nginx: measured"] = {"pass": False, "detail": f"{NGINX} is absent: install nginx"}
    return result
