"""Watching a store for changes without Qt: file watcher, change cursor, pluggable change sources."""

from inspector.watch.files import FileWatcher
from inspector.watch.sources import ChangeSource, open_change_source
from inspector.watch.tracker import GONE, REPLACED, ChangeTracker, store_identity

__all__ = ["FileWatcher", "ChangeSource", "open_change_source", "ChangeTracker", "store_identity", "GONE", "REPLACED"]
