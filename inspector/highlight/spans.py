"""Lex JSON text with pygments into spans ``(start, length, token_type)`` a painter can apply.

Token types are a small fixed vocabulary (``TOKEN_TYPES``) so that a theme maps each to one
colour; whitespace and anything unclassified produce no span.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from pygments.lexers import JsonLexer
from pygments.token import Error, Keyword, Name, Number, Punctuation, String, _TokenType, is_token_subtype

TOKEN_TYPES = ("key", "string", "number", "keyword", "punctuation", "error")
MAX_HIGHLIGHT_CHARS = 32_000_000  # beyond this the text is shown plain (lexing would take minutes)
_CANCEL_EVERY = 20_000            # tokens between two cancellation checks


class Span(NamedTuple):
    """A run of characters with one token type; ``start`` counts from the text's (or line's) start."""

    start: int
    length: int
    token: str


def _classify(ttype: _TokenType) -> str | None:
    # is_token_subtype is pygments' `ttype in other` (a subtype check, not a tuple membership)
    if is_token_subtype(ttype, Name.Tag):
        return "key"
    if is_token_subtype(ttype, String):
        return "string"
    if is_token_subtype(ttype, Number):
        return "number"
    if is_token_subtype(ttype, Keyword):
        return "keyword"
    if is_token_subtype(ttype, Punctuation):
        return "punctuation"
    if is_token_subtype(ttype, Error):
        return "error"
    return None


def json_spans(text: str, cancel: Callable[[], bool] | None = None) -> list[Span]:
    """Spans over the whole of ``text`` in order; empty when the text is too big to highlight.

    ``cancel()`` is polled every few thousand tokens; when it returns True lexing stops and
    the spans found so far are returned (the caller discards them).
    """
    if len(text) > MAX_HIGHLIGHT_CHARS:
        return []
    spans: list[Span] = []
    for count, (start, ttype, value) in enumerate(JsonLexer().get_tokens_unprocessed(text)):
        if cancel is not None and count % _CANCEL_EVERY == 0 and cancel():
            break
        token = _classify(ttype)
        if token is not None and value:
            spans.append(Span(start, len(value), token))
    return spans


def spans_by_line(text: str, spans: list[Span]) -> list[list[Span]]:
    """Split whole-text spans into per-line lists with line-relative starts (one list per line).

    A span crossing a newline (not produced for valid JSON) is cut at each line end.
    """
    starts = [0]
    find = text.find
    pos = find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    lines: list[list[Span]] = [[] for _ in starts]
    line = 0
    last = len(starts) - 1
    for start, length, token in spans:
        while line < last and starts[line + 1] <= start:
            line += 1
        end = start + length
        row = line
        while True:
            line_start = starts[row]
            line_end = starts[row + 1] - 1 if row < last else len(text)
            piece_end = min(end, line_end)
            if piece_end > start:
                lines[row].append(Span(start - line_start, piece_end - start, token))
            if end <= line_end or row == last:
                break
            row += 1
            start = starts[row]
    return lines


def line_spans(line: str) -> list[Span]:
    """Spans of one line of pretty-printed JSON lexed on its own (for live editing).

    Pretty JSON keeps every token on one line, so a line lexes the same alone as in context.
    """
    return [s for s in json_spans(line) if s.start < len(line)]
