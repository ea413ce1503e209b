"""Colour themes for highlighted JSON and diffs, one for light and one for dark palettes."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Theme:
    """Hex colours per token type (``TOKEN_TYPES``) plus tints for diffs and search matches."""

    name: str
    tokens: dict[str, str] = field(default_factory=dict)
    bold: frozenset[str] = frozenset()
    added_bg: str = "#e6ffec"
    removed_bg: str = "#ffebe9"
    changed_bg: str = "#fff8c5"
    added_fg: str = "#1a7f37"
    removed_fg: str = "#cf222e"
    match_bg: str = "#fff3a3"
    current_match_bg: str = "#ffb347"

    def color(self, token: str) -> str | None:
        """The colour of a token type, None for the default text colour."""
        return self.tokens.get(token)


LIGHT = Theme(
    name="light",
    tokens={"key": "#0b5cad", "string": "#0a7a3b", "number": "#a0410d", "keyword": "#8250df",
            "punctuation": "#6e7781", "error": "#cf222e"},
    bold=frozenset({"key"}),
)

DARK = Theme(
    name="dark",
    tokens={"key": "#79c0ff", "string": "#7ee787", "number": "#ffa657", "keyword": "#d2a8ff",
            "punctuation": "#8b949e", "error": "#ff7b72"},
    bold=frozenset({"key"}),
    added_bg="#12361f", removed_bg="#3d1a1d", changed_bg="#3a3413",
    added_fg="#56d364", removed_fg="#f85149",
    match_bg="#5a4a00", current_match_bg="#9e6a03",
)


def theme_for(dark: bool) -> Theme:
    """The theme matching a palette's darkness."""
    return DARK if dark else LIGHT
