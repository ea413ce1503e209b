"""Render the Storage view to PNG at two sizes (a look-at-it tool, not a test).

Usage: ``QT_QPA_PLATFORM=offscreen python -m tests.ui.panels.render_storage STORE OUTDIR [--dark] [--run RUN]``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("out")
    parser.add_argument("--dark", action="store_true")
    parser.add_argument("--run")
    args = parser.parse_args()
    from inspector.ui.app import create_app
    from inspector.ui.session import StoreSession
    from inspector.ui.widgets.storage_view import StorageView

    app = create_app("dark" if args.dark else "light")
    session = StoreSession()
    view = StorageView(session)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    session.open(args.store)
    deadline = time.time() + 60
    while session.store is None and time.time() < deadline:
        app.processEvents()
        time.sleep(0.01)
    store = session.store
    assert store is not None
    run = store.get_run(args.run) if args.run else max(store.list_runs(), key=lambda r: r.checkpoint_count)
    for width, height in ((1024, 700), (1600, 1000)):
        view.resize(width, height)
        view.show()
        got = []
        view.report_ready.connect(got.append)
        view.run = None
        view.set_run(run)
        while not got and time.time() < deadline:
            app.processEvents()
            time.sleep(0.01)
        for _ in range(20):
            app.processEvents()
        name = f"storage-{width}x{height}-{'dark' if args.dark else 'light'}.png"
        view.grab().save(str(out / name))
        print(out / name)
    session.shutdown()


if __name__ == "__main__":
    main()
