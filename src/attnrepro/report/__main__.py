"""``python -m attnrepro.report``: see :mod:`attnrepro.report.cli`."""

from attnrepro.report.cli import main

raise SystemExit(main())
