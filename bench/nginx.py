"""nginx in front of a local gunicorn, with the committed deploy/nginx.conf (stdlib only): the
production topology of docker-compose.yml on loopback, for the tests and the fault bench.

The server configuration is the committed file itself; only its two lines marked "templated"
change (the upstream gunicorn address and the listen port), and a main configuration like the
nginx image's own includes it, with its temporary files, log and pid in a work directory.
"""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
import time
from pathlib import Path

NGINX = Path("/usr/sbin/nginx")
CONFIG = Path(__file__).resolve().parent.parent / "deploy" / "nginx.conf"
_UPSTREAM = "    server web:8000;  # templated: the gunicorn address\n"
_LISTEN = "    listen 8080;  # templated: the published port\n"


def server_config(upstream: str, port: int) -> str:
    """deploy/nginx.conf with gunicorn at `upstream` (host:port) and listening on 127.0.0.1:`port`.
    Raises ValueError when the file no longer has the templated lines."""
    text = CONFIG.read_text()
    for line in (_UPSTREAM, _LISTEN):
        if text.count(line) != 1:
            raise ValueError(f"{CONFIG} must contain exactly once: {line.strip()}")
    return text.replace(_UPSTREAM, f"    server {upstream};\n").replace(_LISTEN, f"    listen 127.0.0.1:{port};\n")


def start_nginx(workdir: Path, upstream: str, port: int, connections: int = 4096) -> subprocess.Popen[bytes]:
    """nginx (one worker process, `connections` connections) in the foreground, serving
    deploy/nginx.conf on 127.0.0.1:`port`; returns once the port accepts connections.
    Raises RuntimeError when it exits or does not listen within 10 s."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "svcx.conf").write_text(server_config(upstream, port))
    temp = "\n".join(
        f"    {kind}_temp_path {workdir / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (workdir / "nginx.conf").write_text(
        f"user {pwd.getpwuid(os.getuid()).pw_name};\n"
        "daemon off;\nworker_processes 1;\n"
        f"worker_rlimit_nofile {2 * connections + 64};\n"
        f"pid {workdir / 'nginx.pid'};\nerror_log {workdir / 'error.log'} warn;\n"
        f"events {{ worker_connections {connections}; }}\n"
        f"http {{\n    access_log off;\n{temp}\n    include {workdir / 'svcx.conf'};\n}}\n"
    )
    process = subprocess.Popen(
        [str(NGINX), "-p", str(workdir), "-e", str(workdir / "error.log"), "-c", str(workdir / "nginx.conf")],
        stdout=(workdir / "nginx.out").open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"nginx exited: {(workdir / 'nginx.out').read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            time.sleep(0.1)
    process.terminate()
    raise RuntimeError("nginx did not listen within 10 s")
