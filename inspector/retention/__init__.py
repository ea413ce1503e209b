"""Retention: ``prune`` rules, plans (dry runs) and their crash-safe application, for native and LangGraph stores."""
