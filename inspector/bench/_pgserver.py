"""A throw-away PostgreSQL server in a temp directory (for benchmarks and the test suite).

PostgreSQL refuses to run as root, so when this process is root the server runs as the
``postgres`` system user (or ``nobody``) in a data directory owned by that user. The server
listens on 127.0.0.1 only, on a free port, with trust authentication.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from inspector.errors import StoreError

RUN_AS_CANDIDATES = ("postgres", "nobody")


def find_bindir() -> Path | None:
    """The directory holding initdb and pg_ctl, or None when PostgreSQL is not installed."""
    explicit = os.environ.get("CI_PG_BINDIR")
    if explicit:   # an explicit choice is respected, even a wrong one
        return Path(explicit) if (Path(explicit) / "pg_ctl").exists() else None
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                      key=lambda p: int(p.split("/")[-2]) if p.split("/")[-2].isdigit() else 0)
    for candidate in reversed(versions):
        if (Path(candidate) / "initdb").exists() and (Path(candidate) / "pg_ctl").exists():
            return Path(candidate)
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).resolve().parent
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_as_user() -> pwd.struct_passwd | None:
    if os.geteuid() != 0:
        return None
    for name in RUN_AS_CANDIDATES:
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise StoreError("Running as root, and neither a 'postgres' nor a 'nobody' user exists to run PostgreSQL.")


class TempPostgres:
    """initdb + pg_ctl start in a fresh directory; ``stop()`` removes everything."""

    def __init__(self, *, durable: bool = False, max_connections: int = 300,
                 bindir: Path | None = None) -> None:
        found = bindir or find_bindir()
        if found is None:
            raise StoreError("PostgreSQL server binaries (initdb, pg_ctl) are not installed.")
        self.bindir: Path = found
        self.durable = durable
        self.max_connections = max_connections
        self.port = 0
        self.root: Path | None = None
        self._user = _run_as_user()

    @property
    def datadir(self) -> Path:
        """The cluster's data directory."""
        assert self.root is not None
        return self.root / "data"

    @property
    def logfile(self) -> Path:
        """The server log (read it when a test fails)."""
        assert self.root is not None
        return self.root / "server.log"

    @property
    def url(self) -> str:
        """SQLAlchemy URL of the ``postgres`` database as the superuser."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def url_for(self, database: str, user: str = "postgres", password: str | None = None) -> str:
        """SQLAlchemy URL of another database (or as another role) on this server."""
        auth = f"{user}:{password}" if password else user
        return f"postgresql+psycopg://{auth}@127.0.0.1:{self.port}/{database}"

    def _cmd(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        kwargs: dict = {}
        if self._user is not None:
            kwargs = {"user": self._user.pw_uid, "group": self._user.pw_gid, "extra_groups": []}
        env = dict(os.environ, LC_ALL="C", LANG="C")
        env.pop("PGDATA", None)
        proc = subprocess.run([str(self.bindir / args[0]), *args[1:]], cwd=self.root, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout, **kwargs)
        if check and proc.returncode != 0:
            raise StoreError(f"{args[0]} {args[1] if len(args) > 1 else ''} failed: "
                             f"{(proc.stderr or proc.stdout).strip()[-800:]} (log: {self.logfile})")
        return proc

    def start(self) -> TempPostgres:
        """Create the cluster and start the server; returns self."""
        self.root = Path(tempfile.mkdtemp(prefix="ci-pg-"))
        if self._user is not None:
            os.chown(self.root, self._user.pw_uid, self._user.pw_gid)
        self._cmd("initdb", "-D", str(self.datadir), "-U", "postgres", "--auth=trust",
                  "-E", "UTF8", "--no-sync", "--no-instructions")
        self.port = free_port()
        settings = {
            "listen_addresses": "'127.0.0.1'", "port": str(self.port),
            "unix_socket_directories": f"'{self.root}'", "max_connections": str(self.max_connections),
            "shared_buffers": "'128MB'", "log_min_messages": "warning",
        }
        if not self.durable:
            settings.update(fsync="off", synchronous_commit="off", full_page_writes="off")
        with open(self.datadir / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write("\n# checkpoint-inspector temporary server\n")
            conf.writelines(f"{k} = {v}\n" for k, v in settings.items())
        self._pg_ctl("start")
        return self

    def _pg_ctl(self, action: str, *extra: str) -> None:
        self._cmd("pg_ctl", action, "-D", str(self.datadir), "-l", str(self.logfile), "-w",
                  "-t", "60", *extra)

    def restart(self) -> None:
        """Restart the server with a fast shutdown (sessions are terminated)."""
        self._pg_ctl("restart", "-m", "fast")

    def halt(self) -> None:
        """Stop the server but keep its data (``resume()`` starts it again on the same port)."""
        self._cmd("pg_ctl", "stop", "-D", str(self.datadir), "-m", "fast", "-w")

    def resume(self) -> None:
        """Start a halted server again."""
        self._pg_ctl("start")

    def stop(self) -> None:
        """Stop the server and remove its directory (safe to call twice)."""
        if self.root is None:
            return
        if (self.datadir / "postmaster.pid").exists():
            self._cmd("pg_ctl", "stop", "-D", str(self.datadir), "-m", "immediate", "-w", check=False)
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the server log."""
        try:
            return self.logfile.read_text(encoding="utf-8", errors="replace")[-chars:]
        except (OSError, AssertionError):
            return ""

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Block until the server accepts connections."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._cmd("pg_isready", "-h", "127.0.0.1", "-p", str(self.port), check=False).returncode == 0:
                return
            time.sleep(0.1)
        raise StoreError(f"The temporary PostgreSQL server did not come up (log: {self.logfile}).")

    def __enter__(self) -> TempPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
