"""Replay cost: what a resume from a checkpoint would redo."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.model import CheckpointInfo
from inspector.store.base import Store
from inspector.humanize import plural

NAMES_SHOWN = 8


@dataclass(frozen=True)
class ReplayCost:
    """Work a resume from ``checkpoint`` redoes.

    ``ops_to_next`` are the operations recorded between this snapshot and the next one
    (the next checkpoint's ``ops``): with an interval policy that snapshots every N
    operations, that is the work lost between snapshots. ``steps_after`` / ``ops_after``
    count what the original run did after this checkpoint, all of which a resume redoes.
    """

    checkpoint: CheckpointInfo
    head: bool
    ops_to_next: int
    steps_after: int
    ops_after: int
    names_after: tuple[str, ...]

    def describe(self) -> str:
        """One sentence for the resume dialog and the CLI."""
        if self.head:
            return (f"#{self.checkpoint.seq} is the head of its run: nothing recorded after it is redone "
                    "(operations done after the last snapshot but not yet recorded would be).")
        shown = ", ".join(self.names_after)
        more = f", … +{self.steps_after - len(self.names_after)}" if self.steps_after > len(self.names_after) else ""
        between = plural(self.ops_to_next, "operation")
        return (f"Redoes {plural(self.steps_after, 'checkpoint')} / {plural(self.ops_after, 'operation')} the "
                f"original run did after #{self.checkpoint.seq} ({shown}{more}); {between} "
                f"{'lies' if self.ops_to_next == 1 else 'lie'} between this snapshot and the next.")


def replay_cost(store: Store, ref: CheckpointInfo | int | str) -> ReplayCost:
    """Replay cost of resuming from ``ref`` (a CheckpointInfo, an id or ``RUN:SEQ``)."""
    cp = ref if isinstance(ref, CheckpointInfo) else store.get_checkpoint(ref)
    after = store.list_checkpoints(cp.run_id, after_seq=cp.seq)
    return ReplayCost(
        checkpoint=cp, head=not after, ops_to_next=after[0].ops if after else 0,
        steps_after=len(after), ops_after=sum(c.ops for c in after),
        names_after=tuple(f"#{c.seq} {c.name or c.kind}" for c in after[:NAMES_SHOWN]))
