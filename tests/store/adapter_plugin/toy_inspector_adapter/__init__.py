"""A third party's adapter: "toy log" files (JSON lines, first line {"toy_log": 1}) as a store.

Each following line is {"run": ID, "step": NAME, "at": SECONDS, "state": {...}}: a checkpoint.
It declares live updates and no fork or resume.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspector.model import OFFERED, Capabilities, Capability, CheckpointInfo, RunInfo, Snapshot, StoreInfo
from inspector.store.adapters import StoreAdapter
from inspector.store.frameworks.base import Catalog, CatalogStore, number_checkpoints


class ToyStore(CatalogStore):
    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path
        self.info = StoreInfo(url=str(path), display=str(path), kind="toy", backend="file", format_version=1,
                              read_only=True, label="Toy log",
                              capabilities=Capabilities(
                                  Capability(False, "Toy logs cannot be forked: the toy framework has no fork."),
                                  Capability(False, "Toy logs cannot be resumed: there is no toy runner."),
                                  OFFERED))

    def fingerprint(self):
        st = self.path.stat()
        return (st.st_size, st.st_mtime_ns)

    def _lines(self):
        return [json.loads(line) for line in self.path.read_text().splitlines()[1:] if line.strip()]

    def read_catalog(self) -> Catalog:
        by_run: dict[str, list] = {}
        for line in self._lines():
            by_run.setdefault(line["run"], []).append(line)
        runs, checkpoints = [], {}
        for run_id, lines in by_run.items():
            drafts = [CheckpointInfo(id="", run_id="", seq=0, kind="step", name=line["step"], created=line["at"],
                                     size=len(json.dumps(line["state"]))) for line in lines]
            checkpoints[run_id] = number_checkpoints(run_id, drafts)
            runs.append(RunInfo(id=run_id, name=run_id, agent="toy", status="completed", created=lines[0]["at"],
                                updated=lines[-1]["at"], checkpoint_count=len(lines), head_seq=len(lines) - 1,
                                resumable=False, not_resumable_reason="no toy runner"))
        return Catalog(tuple(runs), checkpoints)

    def snapshot(self, info: CheckpointInfo) -> Snapshot:
        lines = [line for line in self._lines() if line["run"] == info.run_id]
        return Snapshot(info=info, state=lines[info.seq]["state"], tasks=None)

    def watch_paths(self):
        return [self.path]


class ToyAdapter(StoreAdapter):
    kind = "toy"
    label = "Toy log"
    capabilities = Capabilities(Capability(False, "no fork"), Capability(False, "no resume"), OFFERED)

    def detect_path(self, path: Path) -> bool:
        if not path.is_file():
            return False
        with path.open("rb") as f:
            first = f.readline(200)
        try:
            return json.loads(first) == {"toy_log": 1}
        except ValueError:
            return False

    def open_path(self, path: Path, *, readonly: bool = True, **options) -> ToyStore:
        return ToyStore(path)
