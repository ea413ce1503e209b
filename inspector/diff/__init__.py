"""Qt-free diff engine: structural, task-state and text diffs of checkpoints, with lineage.

Entry points (all safe to run in a worker thread; ``cancel`` and ``progress`` let a GUI
stop and follow them):

* ``diff_checkpoints(store, a, b)`` → DiffResult (structural + task changes, summary,
  common ancestor, three-way changes when the two are on different branches);
* ``diff_values(a, b)`` / ``diff_pieces(fetch_many, digest_a, digest_b)`` → tuple[Change];
* ``diff_tasks(old, new)`` / ``task_summary(...)``; ``apply(value, changes)``;
* ``common_ancestor(store, a, b)``; ``change_summary(...)`` / ``checkpoint_change(...)``
  for a timeline column; ``to_json(result)`` for scripts.
"""

from inspector.diff.api import diff_pieces, diff_snapshots, diff_values
from inspector.diff.apply import apply
from inspector.diff.checkpoints import checkpoint_change, checkpoint_info, diff_checkpoints, keeps_pieces
from inspector.diff.lineage import common_ancestor, describe_divergence
from inspector.diff.model import (ADDED, CHANGED, MOVED, REMOVED, Change, DiffCancelled, DiffError,
                                  DiffResult, Move, NumberDelta, TaskChange, TextDelta, ThreeWay,
                                  format_path)
from inspector.diff.resolve import dict_fetcher, store_fetcher
from inspector.diff.serialize import to_json
from inspector.diff.summary import change_summary, result_summary, structural_summary
from inspector.diff.tasks import diff_tasks, task_diff, task_summary

__all__ = [
    "ADDED", "CHANGED", "MOVED", "REMOVED", "Change", "DiffCancelled", "DiffError", "DiffResult",
    "Move", "NumberDelta", "TaskChange", "TextDelta", "ThreeWay", "apply", "change_summary",
    "checkpoint_change", "checkpoint_info", "common_ancestor", "describe_divergence",
    "dict_fetcher", "diff_checkpoints", "diff_pieces", "diff_snapshots", "diff_tasks",
    "diff_values", "format_path", "keeps_pieces", "result_summary", "store_fetcher",
    "structural_summary", "task_diff", "task_summary", "to_json",
]
