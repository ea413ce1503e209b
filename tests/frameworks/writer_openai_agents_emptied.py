"""Run inside an environment with ``openai-agents`` (see write_stores.py): sessions emptied by
``pop_item``.

The real SQLiteSession keeps a session's row when ``pop_item`` takes its last item (only
``clear_session`` removes the row): ``agents_emptied.db`` holds such a session, one with an
item left, and one that was never emptied.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from agents import SQLiteSession


async def write(path: Path) -> None:
    path.unlink(missing_ok=True)
    for sid, pops in (("emptied", 2), ("one-left", 1), ("untouched", 0)):
        session = SQLiteSession(sid, str(path))
        await session.add_items([{"role": "user", "content": f"hello from {sid}"},
                                 {"role": "assistant", "content": f"hi, {sid}"}])
        for _ in range(pops):
            await session.pop_item()
        session.close()


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    asyncio.run(write(target / "agents_emptied.db"))
