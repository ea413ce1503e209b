"""Start and stop a FileWatcher on a store many times while another process writes to it.

``python -m tests.watch.quit_probe STORE N [--plain]``: prints how many stops saw events;
anything watchdog logs goes to stderr (logging's last-resort handler), which the test reads.
``--plain`` uses watchdog's own Observer (to see the race the inspector's observer avoids).
"""

from __future__ import annotations

import queue
import sys
from pathlib import Path

from inspector.watch import files


def main(argv: list[str]) -> int:
    store, rounds = Path(argv[0]), int(argv[1])
    if "--plain" in argv:
        files.OBSERVER = files.Observer
    busy = 0
    for _ in range(rounds):
        events: queue.Queue[Path] = queue.Queue()
        watcher = files.FileWatcher([store, Path(f"{store}-wal")], events.put)
        watcher.start()
        try:
            events.get(timeout=10)       # the writer's events are arriving while it stops
            busy += 1
        except queue.Empty:
            pass
        watcher.stop()
    print(f"{busy} of {rounds} stops while events arrived")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
