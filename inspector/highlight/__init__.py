"""Qt-free syntax highlighting: pygments tokens as (start, length, token type) spans, and colour themes."""

from inspector.highlight.sidebyside import SideBySide, align
from inspector.highlight.spans import (MAX_HIGHLIGHT_CHARS, TOKEN_TYPES, Span, json_spans,
                                       line_spans, spans_by_line)
from inspector.highlight.jsontext import MAX_LINE, elide_long_lines, line_paths, to_json_text
from inspector.highlight.theme import DARK, LIGHT, Theme, theme_for

__all__ = ["DARK", "LIGHT", "MAX_LINE", "elide_long_lines", "SideBySide", "align", "MAX_HIGHLIGHT_CHARS",
           "TOKEN_TYPES", "Span", "Theme", "json_spans", "line_spans", "spans_by_line", "line_paths", "theme_for",
           "to_json_text"]
