"""Fleet tests: the store on PostgreSQL and SQLite, many writers, restarts, LISTEN/NOTIFY."""
