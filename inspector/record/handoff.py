"""The resume hand-off: how a launcher tells a new agent process which run it continues."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

from inspector.errors import StoreError

ENV_VAR = "CHECKPOINT_INSPECTOR_RESUME"


@dataclass(frozen=True)
class Handoff:
    """Store, run, checkpoint to restore, and the ownership epoch granted to the new process."""

    store: str
    run: str
    checkpoint: int | str
    epoch: int

    def to_env(self) -> dict[str, str]:
        """The environment entry carrying this hand-off."""
        return {ENV_VAR: json.dumps(asdict(self))}


def read_handoff(environ: dict | None = None, *, consume: bool = True) -> Handoff | None:
    """The hand-off in the environment, if any (removed so child processes don't inherit it)."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_VAR)
    if not raw:
        return None
    if consume:
        env.pop(ENV_VAR, None)
    try:
        data = json.loads(raw)
        return Handoff(store=str(data["store"]), run=str(data["run"]),
                       checkpoint=data["checkpoint"], epoch=int(data["epoch"]))
    except (ValueError, KeyError, TypeError) as err:
        raise StoreError(f"The {ENV_VAR} environment variable is malformed ({err}).") from err
