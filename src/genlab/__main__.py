"""``python -m genlab``: the same as the ``genlab`` command."""

from genlab.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
