"""Icons resolve from a checkout and from a wheel's data files; every icon the code names exists."""

from __future__ import annotations

import glob
import re
import tomllib
from pathlib import Path

from inspector.ui.icons import ICON_DIR, find_icon_dir

ROOT = Path(__file__).resolve().parents[2]


def test_icons_come_from_the_checkout_else_from_the_installed_share_folder(tmp_path: Path) -> None:
    assert ICON_DIR == ROOT / "resources" / "icons"
    installed = tmp_path / "prefix" / "share" / "checkpoint-inspector" / "icons"
    installed.mkdir(parents=True)
    assert find_icon_dir(source=tmp_path / "site-packages", prefix=tmp_path / "prefix") == installed
    assert find_icon_dir(source=ROOT, prefix=tmp_path / "prefix") == ROOT / "resources" / "icons"


def test_the_wheel_installs_every_icon_and_the_desktop_entry() -> None:
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    shipped = {Path(p).name for patterns in data_files.values() for pattern in patterns
               for p in glob.glob(str(ROOT / pattern))}
    assert {p.name for p in (ROOT / "resources" / "icons").glob("*.svg")} <= shipped
    assert "checkpoint-inspector.desktop" in shipped


def test_every_icon_named_in_the_code_exists() -> None:
    names = set()
    for source in (ROOT / "inspector" / "ui").rglob("*.py"):
        names |= set(re.findall(r"icons\.icon\(\"([\w-]+)\"", source.read_text()))
    assert names
    missing = {n for n in names if not (ICON_DIR / f"{n}.svg").exists()}
    assert not missing, missing
