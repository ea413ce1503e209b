"""Write the framework fixture stores with the REAL packages, each in an environment of its own.

    python tests/frameworks/write_stores.py [--venvs DIR] [--out DIR] [--only FRAMEWORK] [--writer FILE]

crewai 1.15 needs ``openai<3`` and openai-agents 0.24 needs ``openai>=3``, so each framework
gets its own virtual environment (kept in ``--venvs``, default ~/.cache/checkpoint-inspector-
frameworks); the ``writer_*.py`` scripts beside this file run there with fake models (no
network) and write into ``--out`` (default tests/frameworks/stores), together with
VERSIONS.json naming the package versions that wrote them. ``--writer`` runs only the named
writers (a new writer's stores are added without writing the others again). The CI tests read
the committed stores and never install these packages.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
FRAMEWORKS = {
    "openai-agents": (["openai-agents==0.24.0", "sqlalchemy", "aiosqlite", "greenlet", "psycopg[binary]",
                       "cryptography"],
                      ["writer_openai_agents.py", "writer_openai_agents_emptied.py"],
                      ["openai-agents", "openai", "sqlalchemy", "aiosqlite", "psycopg"]),
    "crewai": (["crewai==1.15.30", "pysqlite3-binary"], ["writer_crewai.py", "writer_crewai_flows.py"],
               ["crewai", "openai", "pysqlite3-binary"]),
    "google-adk": (["google-adk[db]==2.13.0", "aiosqlite", "psycopg[binary]"],
                   ["writer_google_adk.py", "writer_google_adk_parts.py"],
                   ["google-adk", "google-genai", "sqlalchemy", "aiosqlite", "psycopg"]),
}


def python_of(env: Path) -> Path:
    return env / ("Scripts" if sys.platform == "win32" else "bin") / "python"


def ensure_env(root: Path, name: str, requirements: list[str]) -> Path:
    """A virtual environment with ``requirements`` installed (reused when it already has them)."""
    env = root / name
    marker = env / "requirements.txt"
    if not marker.exists() or marker.read_text() != "\n".join(requirements):
        venv.EnvBuilder(with_pip=True, clear=True).create(env)
        subprocess.run([str(python_of(env)), "-m", "pip", "install", "-q", *requirements], check=True)
        marker.write_text("\n".join(requirements))
    return python_of(env)


def versions(python: Path, names: list[str]) -> dict[str, str]:
    listed = json.loads(subprocess.run([str(python), "-m", "pip", "list", "--format", "json"], check=True,
                                       capture_output=True, text=True).stdout)
    found = {p["name"].lower(): p["version"] for p in listed}
    return {n: found[n] for n in names if n in found}


def compact(path: Path) -> None:
    """VACUUM a written SQLite store into one small file (no -wal left beside it)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("VACUUM")
    finally:
        conn.close()


PG_DUMPS = {"openai-agents": "agents_postgres.sql", "google-adk": "adk_postgres.sql"}


def start_postgres():
    """A throw-away PostgreSQL server (the project's own helper), or None without one."""
    sys.path.insert(0, str(HERE.parents[1]))
    try:
        from inspector.bench._pgserver import TempPostgres
        return TempPostgres().start()
    except Exception as err:
        print(f"no PostgreSQL server ({err}); PostgreSQL stores not written")
        return None


def dump(server, database: str, target: Path) -> None:
    """The database as plain SQL (tables and rows) for the tests to load."""
    proc = server._cmd("pg_dump", "--no-owner", "--no-privileges", "--no-comments", "--inserts",
                       "-h", "127.0.0.1", "-p", str(server.port), "-U", "postgres", database)
    lines = [line for line in proc.stdout.splitlines()
             if not line.startswith(("SET ", "SELECT pg_catalog.set_config", "\\restrict", "\\unrestrict", "--"))]
    target.write_text("\n".join(line for line in lines if line.strip()) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venvs", type=Path, default=Path.home() / ".cache" / "checkpoint-inspector-frameworks")
    parser.add_argument("--out", type=Path, default=HERE / "stores")
    parser.add_argument("--only", choices=sorted(FRAMEWORKS), action="append")
    parser.add_argument("--writer", action="append", help="run only this writer script (e.g. writer_crewai_flows.py)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    record_path = args.out / "VERSIONS.json"
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    server = start_postgres() if any(n in PG_DUMPS for n in args.only or FRAMEWORKS) else None
    try:
        return write_all(args, record, record_path, server)
    finally:
        if server is not None:
            server.stop()


def write_all(args: argparse.Namespace, record: dict, record_path: Path, server) -> int:
    for name in args.only or sorted(FRAMEWORKS):
        requirements, writers, shown = FRAMEWORKS[name]
        writers = [w for w in writers if not args.writer or w in args.writer]
        if not writers:
            continue
        python = ensure_env(args.venvs, name, requirements)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            env = {"PATH": str(python.parent), "HOME": tmp, "OPENAI_API_KEY": "not-used",
                   "CREWAI_DISABLE_TELEMETRY": "true", "OTEL_SDK_DISABLED": "true", "PYTHONUNBUFFERED": "1"}
            database = f"fixture_{name.replace('-', '_')}"
            if server is not None and name in PG_DUMPS and FRAMEWORKS[name][1][0] in writers:   # (the first writes it)
                server._cmd("psql", "-h", "127.0.0.1", "-p", str(server.port), "-U", "postgres", "-c",
                            f"DROP DATABASE IF EXISTS {database}", "-c", f"CREATE DATABASE {database}")
                env["FIXTURE_PG_URL"] = server.url_for(database)
            for writer in writers:
                subprocess.run([str(python), str(HERE / writer), str(out)], check=True, cwd=tmp, env=env)
            if "FIXTURE_PG_URL" in env:
                dump(server, database, out / PG_DUMPS[name])
            for item in sorted(out.iterdir()):
                target = args.out / item.name
                if target.is_dir():
                    shutil.rmtree(target)
                elif target.exists():
                    target.unlink()
                if item.is_dir():
                    shutil.copytree(item, target)
                else:
                    shutil.copy2(item, target)
                    if item.suffix == ".db":
                        compact(target)
            sqlite_version = subprocess.run(
                [str(python), "-c", "import sqlite3; print(sqlite3.sqlite_version)"], check=True,
                capture_output=True, text=True).stdout.strip()
            newer = subprocess.run([str(python), "-c", "import pysqlite3.dbapi2 as s; print(s.sqlite_version)"],
                                   capture_output=True, text=True).stdout.strip()
            record[name] = {"packages": versions(python, shown), "python": subprocess.run(
                [str(python), "-c", "import platform; print(platform.python_version())"], check=True,
                capture_output=True, text=True).stdout.strip(), "sqlite": sqlite_version,
                **({"pysqlite3_sqlite": newer} if newer else {}),
                "stores": sorted({p.name for p in out.iterdir()} | set(record.get(name, {}).get("stores", [])))}
        print(f"{name}: wrote {', '.join(record[name]['stores'])}")
    record_path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
