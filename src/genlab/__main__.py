"""``python -m genlab``: the same as the ``genlab`` command."""

from genlab.cli import main

raise SystemExit(main())
