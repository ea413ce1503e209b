"""The native store: schema, content-addressed pieces, reads and fenced writes."""
