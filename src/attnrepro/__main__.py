"""``python -m attnrepro``: see :mod:`attnrepro.cli`."""

from attnrepro.cli import main

raise SystemExit(main())
