"""The native store: schema, content-addressed pieces, reads and fenced writes."""

FORMAT_VERSION = 4   # the newest store format this version reads and writes (see FORMAT.md)
