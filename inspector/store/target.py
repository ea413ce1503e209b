"""Where a store is: a parsed SQLite path or server URL (no SQLAlchemy; ``engine.parse_target``
parses URLs)."""

from pathlib import Path
from typing import NamedTuple

from inspector.errors import StoreError


class Target(NamedTuple):
    """A parsed store location: a SQLite path or a server URL."""

    url: str          # SQLAlchemy URL string
    display: str      # what the user sees
    backend: str      # "sqlite" | "postgresql"
    path: Path | None = None


def sqlite_target(text: str, url: str | None) -> Target:
    """The Target of a SQLite file given as a path (``url`` None) or by a ``sqlite://`` URL."""
    try:
        path = Path(text).expanduser().resolve()
    except (RuntimeError, OSError) as err:      # a symlink loop, an unreadable directory
        reason = "it is a loop of symbolic links" if isinstance(err, RuntimeError) else (err.strerror or str(err))
        raise StoreError(f"Cannot open {text}: {reason}.") from err
    return Target(url or f"sqlite:///{path}", str(Path(text)) if url else str(path), "sqlite", path)


_PLAIN_PATH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+")


def plain_sqlite_url(text: str) -> Target | None:
    """The Target of a ``sqlite:///PATH`` URL whose path is plain (letters, digits, ``/._-+``:
    nothing a URL parser would read otherwise), as ``engine.parse_target`` gives it; None
    for any other text (``parse_target`` then parses it)."""
    prefix = "sqlite:///"
    path = text[len(prefix):]
    if not text.startswith(prefix) or not path or not set(path) <= _PLAIN_PATH:
        return None
    return sqlite_target(path, text)


def path_target(text: str) -> Target:
    """The Target of a plain path (not a URL): a SQLite file, or a folder some adapter reads."""
    target = sqlite_target(text, None)
    return Target(f"sqlite:///{target.path}", str(target.path), "sqlite", target.path)
