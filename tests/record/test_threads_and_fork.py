"""One Checkpointer used from several threads, and one inherited by the child of os.fork, on
SQLite and on a real PostgreSQL: every save that returned reads back exactly; nothing crashes.

Several threads saving into one Checkpointer crashed the process on SQLite (two appends on the
writer's one connection: SIGSEGV) and on PostgreSQL aborted it or lost a checkpoint a save had
returned; a forked child saving into its parent's run broke both processes' connections."""

from __future__ import annotations

import os
import threading

import pytest

from inspector.errors import StoreError
from inspector.record import Checkpointer
from inspector.store import create_store, open_store


def _target(store_url: str) -> str:
    if "://" in store_url:
        create_store(store_url).close()
    return store_url


def test_threads_saving_into_one_checkpointer_take_turns(store_url: str) -> None:
    target = _target(store_url)
    returned: list[tuple[int | str, dict]] = []
    failures: list[BaseException] = []
    with Checkpointer(target, name="threads") as cp:
        def work(worker: int) -> None:
            try:
                for step in range(40):
                    state = {"worker": worker, "step": step, "log": [f"w{worker}-{i}" for i in range(step)]}
                    info = cp.save(state, kind="tool", name=f"w{worker}")
                    assert info is not None
                    returned.append((info.id, state))
            except BaseException as err:  # the test reports any failure of a thread
                failures.append(err)
        threads = [threading.Thread(target=work, args=(w,)) for w in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        run_id = cp.run_id
    assert not failures, failures
    with open_store(target) as store:
        assert store.get_run(run_id).checkpoint_count == len(returned) == 240
        for ident, state in returned:
            assert store.load(ident).state == state


def test_a_forked_child_cannot_save_into_its_parents_run_and_the_parent_goes_on(store_url: str) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no os.fork here")
    target = _target(store_url)
    with Checkpointer(target, name="forking") as cp:
        first = cp.save({"n": 0}, kind="tool", name="before")
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:       # the child: its save is refused, and leaving touches nothing of the parent's
            os.close(read)
            try:
                cp.save({"n": "child"}, kind="tool", name="child")
                said = b"saved"
            except StoreError as err:
                said = str(err).encode()
            cp.close()
            os.write(write, said)
            os._exit(0)
        os.close(write)
        _, status = os.waitpid(pid, 0)
        said = os.read(read, 4096).decode()
        os.close(read)
        later = [cp.save({"n": i}, kind="tool", name="after") for i in range(1, 6)]
        run_id = cp.run_id
    assert os.waitstatus_to_exitcode(status) == 0
    assert "a forked child cannot save into its parent's run" in said
    with open_store(target) as store:
        run = store.get_run(run_id)
        assert run.status == "completed" and run.checkpoint_count == 6
        assert [store.load(i.id).state for i in [first, *later]] == [{"n": n} for n in range(6)]
