"""``python -m inspector.demo``: run the demo agent."""

from inspector.demo.agent import main

raise SystemExit(main())
