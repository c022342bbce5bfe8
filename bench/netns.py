"""Jobs workers on hosts of their own, simulated: each in a Linux network namespace of its own,
reaching PostgreSQL, Redis and S3 over a private network and nothing else (`python -m bench jobs
--netns`). Stdlib only; needs root (`ip netns`, `ip link`, `setpriv`).

    network = Network.create(workers=4)           # a bridge and one namespace per worker
    backends = Backends(root, network.host)        # PostgreSQL, Redis, moto's S3 on the bridge
    try:
        backends.start()
        stack = NetnsStack(network=network, database_url=backends.database_url("svcx_bench_jobs"), ...)
        ...
    finally:
        backends.stop()
        network.destroy()

The network: a bridge `<tag>br` holding the host side's address `10.213.N.1/24`, and per worker a
namespace `<tag>w<i>` joined to it by a veth pair (`<tag>h<i>` on the host, `<tag>n<i>` inside,
address `10.213.N.<10+i>`, default route via the bridge). The backends the bench owns listen on
the bridge's address only: a PostgreSQL cluster made by `initdb` under the run's directory (run as
the `postgres` user, trust authentication for the private subnet), a `redis-server` with no
persistence, and moto's standalone S3 server with one bucket. The machine's own PostgreSQL and
Redis listen on 127.0.0.1, which inside a namespace is the namespace's own loopback: a worker
there can reach nothing but the bridge (checked at set-up). The web tier, the interactive worker
and beat stay on the host and use the same addresses.

Each worker has an SVCX_VAR_DIR of its own and the store is S3 (`SVCX_STORE=s3`): the job's
upload, its parts' layouts, its pages and its result pass through S3 alone. Delay cannot be
added here (the kernel has no `netem` queueing discipline); `--netns-rate` caps each worker's
link with a token bucket (`tc qdisc ... tbf`) in both directions.
"""

from __future__ import annotations

import contextlib
import glob
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.paths import MAIN_PYTHON
from bench.stack import Stack, stop_process_group

# Namespaces and links made by this bench: "sxb" + the pid of the run that made them.
_TAG = re.compile(r"^sxb(\d+)(?:w\d+|br)$")
S3_BUCKET = "svcx-bench"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True, timeout=30)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale_remove() -> list[str]:
    """Delete the namespaces and bridges an earlier run of this bench left behind (killed before
    its clean-up): those whose name carries the pid of a process that no longer exists."""
    removed = []
    names = [line.split()[0] for line in _ip("netns", "list").stdout.splitlines() if line.strip()]
    links = [m.group(1) for m in re.finditer(r"^\d+: ([^:@\s]+)", _ip("-o", "link", "show").stdout, re.M)]
    for name in names + links:
        m = _TAG.match(name)
        if m and not _alive(int(m.group(1))):
            _ip("netns", "del", name, check=False) if name in names else _ip("link", "del", name, check=False)
            removed.append(name)
    return removed


@dataclass
class Network:
    """A bridge on the host and one network namespace per worker joined to it (see the module)."""

    tag: str
    subnet: str  # the first three octets of a private /24
    rate: str | None = None
    namespaces: list[str] = field(default_factory=list)

    @classmethod
    def create(cls, workers: int, rate: str | None = None) -> Network:
        """The bridge and `workers` namespaces; undone by `destroy` (also when this raises)."""
        tag = f"sxb{os.getpid()}"
        routes = _ip("-4", "route", "show").stdout + _ip("-4", "addr", "show").stdout
        subnet = next(
            f"10.213.{n}"
            for n in [*range(os.getpid() % 200 + 20, 255), *range(20, 255)]
            if f"10.213.{n}." not in routes
        )
        net = cls(tag=tag, subnet=subnet, rate=rate)
        try:
            _ip("link", "add", net.bridge, "type", "bridge")
            _ip("addr", "add", f"{net.host}/24", "dev", net.bridge)
            _ip("link", "set", net.bridge, "up")
            for i in range(workers):
                net._add(i)
        except BaseException:
            net.destroy()
            raise
        return net

    @property
    def bridge(self) -> str:
        return f"{self.tag}br"

    @property
    def host(self) -> str:
        """The host side's address: where the backends listen."""
        return f"{self.subnet}.1"

    def address(self, i: int) -> str:
        return f"{self.subnet}.{10 + i}"

    def _add(self, i: int) -> None:
        ns, outside, inside = f"{self.tag}w{i}", f"{self.tag}h{i}", f"{self.tag}n{i}"
        _ip("netns", "add", ns)
        self.namespaces.append(ns)
        _ip("link", "add", outside, "type", "veth", "peer", "name", inside, "netns", ns)
        _ip("link", "set", outside, "master", self.bridge, "up")
        _ip("-n", ns, "addr", "add", f"{self.address(i)}/24", "dev", inside)
        _ip("-n", ns, "link", "set", inside, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", ns, "route", "add", "default", "via", self.host)
        if self.rate:
            for args in (
                ["tc", "qdisc", "add", "dev", outside],
                ["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", inside],
            ):
                subprocess.run(
                    [*args, "root", "tbf", "rate", self.rate, "burst", "256kb", "latency", "50ms"],
                    check=True,
                    capture_output=True,
                    timeout=30,
                )

    def prefix(self, i: int) -> list[str]:
        """The command prefix that runs a program in worker i's namespace."""
        return ["ip", "netns", "exec", self.namespaces[i]]

    def traffic(self) -> dict[str, int]:
        """Bytes the workers' links carried so far: `to_workers` and `from_workers`, summed."""
        out = {"to_workers": 0, "from_workers": 0}
        for i in range(len(self.namespaces)):
            stats = Path(f"/sys/class/net/{self.tag}h{i}/statistics")
            with contextlib.suppress(OSError, ValueError):
                out["to_workers"] += int((stats / "tx_bytes").read_text())
                out["from_workers"] += int((stats / "rx_bytes").read_text())
        return out

    def reachable(self, i: int, host: str, port: int) -> bool:
        """Whether worker i's namespace can open a TCP connection to host:port."""
        probe = f"import socket; socket.create_connection(({host!r}, {port}), timeout=2).close()"
        return (
            subprocess.run([*self.prefix(i), sys.executable, "-c", probe], capture_output=True, timeout=30).returncode
            == 0
        )

    def destroy(self) -> None:
        """Delete the namespaces (their veth pairs go with them) and the bridge; never raises."""
        for ns in self.namespaces:
            _ip("netns", "del", ns, check=False)
        self.namespaces = []
        _ip("link", "del", self.bridge, check=False)


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _wait_port(host: str, port: int, proc: subprocess.Popen[Any], what: str, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}: {log.read_text()[-1500:]}")
        with contextlib.suppress(OSError):
            socket.create_connection((host, port), timeout=1).close()
            return
        time.sleep(0.2)
    raise RuntimeError(f"{what} not listening on {host}:{port} after {timeout:.0f} s")


def _pg_bin(tool: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{tool}"), key=lambda p: int(p.split("/")[4]))
    return found[-1] if found else (shutil.which(tool) or tool)


@dataclass
class Backends:
    """PostgreSQL, Redis and moto's S3 server owned by the bench, listening on `host` only, with
    their files under `root` (removed by `stop`). Also what `bench jobs --own-backends` runs on,
    on 127.0.0.1: no other checkout's tests or workers can share its Redis database."""

    root: Path
    host: str
    processes: dict[str, subprocess.Popen[Any]] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)

    def _start(self, name: str, cmd: list[str]) -> subprocess.Popen[Any]:
        log = self.root / f"{name}.log"
        proc = subprocess.Popen(cmd, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)
        self.processes[name] = proc
        _wait_port(self.host, self.ports[name], proc, name, log)
        return proc

    def start(self, *, s3: bool = True) -> None:
        """Start PostgreSQL and Redis, and with `s3` moto's server with the bucket."""
        self.root.mkdir(parents=True, exist_ok=True)
        data = self.root / "pg"
        data.mkdir()
        shutil.chown(self.root, "postgres")
        shutil.chown(data, "postgres")
        as_postgres = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]
        subprocess.run(
            [*as_postgres, _pg_bin("initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        with (data / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {self.host.rsplit('.', 1)[0]}.0/24 trust\n")
        self.ports = {name: _free_port(self.host) for name in ("postgres", "redis", "s3")[: 3 if s3 else 2]}
        self._start(
            "postgres",
            [
                *as_postgres,
                _pg_bin("postgres"),
                "-D",
                str(data),
                "-c",
                f"listen_addresses={self.host}",
                "-p",
                str(self.ports["postgres"]),
                "-c",
                f"unix_socket_directories={data}",
                "-c",
                "max_connections=200",
            ],
        )
        self._start(
            "redis",
            [
                "redis-server",
                "--bind",
                self.host,
                "--port",
                str(self.ports["redis"]),
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "no",
                "--dir",
                str(self.root),
            ],
        )
        if s3:
            self._start("s3", [str(MAIN_PYTHON.parent / "moto_server"), "-H", self.host, "-p", str(self.ports["s3"])])
            self._s3("PUT", f"/{S3_BUCKET}")

    def database_url(self, name: str) -> str:
        return f"postgresql://postgres@{self.host}:{self.ports['postgres']}/{name}"

    def redis_url(self, db: int = 0) -> str:
        return f"redis://{self.host}:{self.ports['redis']}/{db}"

    def s3_env(self) -> dict[str, str]:
        """The service's settings for the store on moto's server (web and every worker)."""
        return {
            "SVCX_STORE": "s3",
            "SVCX_S3_BUCKET": S3_BUCKET,
            "SVCX_S3_ENDPOINT_URL": f"http://{self.host}:{self.ports['s3']}",
            "SVCX_S3_REGION": "us-east-1",
            "SVCX_S3_ACCESS_KEY_ID": "bench",
            "SVCX_S3_SECRET_ACCESS_KEY": "bench",
        }

    def _s3(self, method: str, path: str) -> bytes:
        conn = http.client.HTTPConnection(self.host, self.ports["s3"], timeout=60)
        try:
            conn.request(method, path)
            resp = conn.getresponse()
            body = resp.read()
            if resp.status >= 300:
                raise RuntimeError(f"S3 {method} {path}: HTTP {resp.status}: {body[:300]!r}")
            return body
        finally:
            conn.close()

    def s3_objects(self) -> dict[str, dict[str, int]]:
        """Objects in the bucket by their first path segment (the store's alias): count and bytes."""
        out: dict[str, dict[str, int]] = {}
        token = ""
        ns = "{http://s3.amazonaws.com/doc/2006-03-01/}"
        while True:
            query = "list-type=2&max-keys=1000" + (f"&continuation-token={token}" if token else "")
            root = ET.fromstring(self._s3("GET", f"/{S3_BUCKET}?{query}"))
            for item in root.iter(f"{ns}Contents"):
                key, size = item.findtext(f"{ns}Key") or "", int(item.findtext(f"{ns}Size") or 0)
                entry = out.setdefault(key.split("/", 1)[0], {"objects": 0, "bytes": 0})
                entry["objects"] += 1
                entry["bytes"] += size
            token = root.findtext(f"{ns}NextContinuationToken") or ""
            if not token:
                return out

    def stop(self) -> None:
        """Stop the servers (PostgreSQL with a fast shutdown) and remove their files; never raises."""
        for name in ("s3", "redis", "postgres"):
            proc = self.processes.pop(name, None)
            if proc is not None and proc.poll() is None and name == "postgres":
                # SIGINT to the postmaster (setpriv execs it): a fast shutdown.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGINT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=30)
            stop_process_group(proc, 10)
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class NetnsStack(Stack):
    """The bench's stack with its jobs pool spread over the namespaces of `network`: a pool of N
    processes is N `celery worker --concurrency 1`, one a namespace, each with an SVCX_VAR_DIR of
    its own (`workdir/ns<i>/var`)."""

    network: Network | None = None
    backends: Backends | None = None
    jobs_workers: list[subprocess.Popen[Any]] = field(default_factory=list)

    def start_jobs_worker(self, concurrency: int) -> None:
        assert self.network is not None
        if concurrency > len(self.network.namespaces):
            raise RuntimeError(f"{concurrency} workers but {len(self.network.namespaces)} namespaces")
        self.jobs_concurrency = concurrency
        for i in range(concurrency):
            var = self.workdir / f"ns{i}" / "var"
            var.mkdir(parents=True, exist_ok=True)
            self.jobs_workers.append(
                self._spawn(
                    f"jobs{concurrency}-ns{i}",
                    [*self.network.prefix(i), *self.jobs_worker_command(1, f"ns{i}of{concurrency}")],
                    {"SVCX_VAR_DIR": str(var)},
                )
            )
        self.jobs_worker = self.jobs_workers[0]

    def stop_jobs_worker(self) -> None:
        for proc in self.jobs_workers:
            stop_process_group(proc, 5)
        self.jobs_workers = []
        self.jobs_worker = None

    def jobs_sessions(self) -> list[int]:
        return [proc.pid for proc in self.jobs_workers]

    def worker_disks(self) -> list[dict[str, Any]]:
        """What each worker's SVCX_VAR_DIR holds now (files and bytes): the job's data must not."""
        out = []
        for i in range(len(self.network.namespaces) if self.network else 0):
            var = self.workdir / f"ns{i}" / "var"
            files = [p for p in var.rglob("*") if p.is_file()]
            out.append(
                {
                    "files": len(files),
                    "bytes": sum(p.stat().st_size for p in files),
                    "names": sorted(str(p.relative_to(var)) for p in files)[:5],
                }
            )
        return out


@contextlib.contextmanager
def terminate_as_exit() -> Iterator[None]:
    """SIGTERM raises SystemExit while inside, so that the clean-up in `finally` blocks runs."""

    def _exit(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
