"""The store-adapter interface: built-in detection by schema/layout, capabilities, and a third
party's adapter installed as a real package (entry point) that opens its own store."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.errors import NotAStoreError
from inspector.store import open_store
from inspector.store.adapters import ENTRY_POINT_GROUP, adapters

PLUGIN = Path(__file__).parent / "adapter_plugin"
FIXTURES = Path(__file__).parents[1] / "frameworks" / "stores"


def test_builtin_adapters_are_tried_in_order_and_declare_capabilities() -> None:
    kinds = [a.kind for a in adapters()]
    assert kinds[:5] == ["native", "langgraph", "openai-agents", "crewai", "google-adk"]
    for adapter in adapters():
        for action in ("fork", "resume", "live"):
            cap = adapter.capabilities.get(action)
            assert cap.available or cap.reason, f"{adapter.kind} {action} lacks a reason"


@pytest.mark.parametrize("name,kind", [("agents_sqlite.db", "openai-agents"), ("crewai_json", "crewai"),
                                       ("crewai_checkpoints.db", "crewai"), ("adk_sqlite.db", "google-adk")])
def test_detection_ignores_file_names(tmp_path: Path, name: str, kind: str) -> None:
    source = FIXTURES / name
    target = tmp_path / "renamed-without-a-hint"
    (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
    with open_store(target) as store:
        assert store.info.kind == kind
        assert store.info.capabilities == next(a for a in adapters() if a.kind == kind).capabilities \
            or kind == "openai-agents"   # plain sessions say why they cannot branch


def test_a_folder_no_adapter_knows_is_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "main").mkdir()
    (tmp_path / "main" / "x.json").write_text(json.dumps({"hello": 1}))
    with pytest.raises(NotAStoreError, match="directory"):
        open_store(tmp_path)


def _install_plugin(tmp_path: Path) -> Path:
    target = tmp_path / "site"
    build = tmp_path / "src"
    shutil.copytree(PLUGIN, build)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(target), str(build)], check=True, capture_output=True)
    return target


def _toy_log(path: Path) -> Path:
    lines = [{"toy_log": 1}, {"run": "r1", "step": "plan", "at": 1_700_000_000, "state": {"n": 1}},
             {"run": "r1", "step": "act", "at": 1_700_000_010, "state": {"n": 2}}]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def test_installed_third_party_adapter_opens_its_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = _install_plugin(tmp_path)
    assert list(site.glob("toy_inspector_adapter-*.dist-info"))
    log = _toy_log(tmp_path / "agent.log")
    with pytest.raises(NotAStoreError):           # not installed yet: one sentence
        open_store(log)
    monkeypatch.syspath_prepend(str(site))
    try:
        found = adapters(refresh=True)
        assert found[-1].kind == "toy" and found[-1].label == "Toy log"
        with open_store(log) as store:
            assert store.info.kind == "toy"
            assert not store.info.capabilities.fork.available
            assert [r.id for r in store.list_runs()] == ["r1"]
            assert store.load("r1:-1").state == {"n": 2}
            cursor = store.cursor()
            with log.open("a") as f:
                f.write(json.dumps({"run": "r2", "step": "plan", "at": 1_700_000_020, "state": {"n": 9}}) + "\n")
            changes = store.changes_since(cursor)
            assert changes.run_ids == ("r2",) and [c.id for c in changes.new_checkpoints] == ["r2:0"]
    finally:
        monkeypatch.undo()
        adapters(refresh=True)


def test_cli_uses_the_installed_adapter_and_names_missing_capabilities(tmp_path: Path) -> None:
    site = _install_plugin(tmp_path)
    log = _toy_log(tmp_path / "agent.log")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    runs = subprocess.run([sys.executable, "-m", "inspector", "runs", str(log)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert runs.returncode == 0, runs.stderr
    assert "r1" in runs.stdout
    info = subprocess.run([sys.executable, "-m", "inspector", "info", str(log)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert info.returncode == 0 and "Toy log" in info.stdout
    assert "fork: no — Toy logs cannot be forked" in info.stdout
    fork = subprocess.run([sys.executable, "-m", "inspector", "fork", str(log), "r1:0", "--reason", "x"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert fork.returncode == 2 and "the toy framework has no fork" in fork.stderr
    assert "Traceback" not in fork.stderr
    listing = subprocess.run([sys.executable, "-m", "inspector", "adapters"], env=env, capture_output=True,
                             text=True, timeout=120)
    assert listing.returncode == 0 and "toy" in listing.stdout and ENTRY_POINT_GROUP in listing.stdout
