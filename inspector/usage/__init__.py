"""Storage analytics: why a store is the size it is, by run, checkpoint and field (native and LangGraph stores)."""
