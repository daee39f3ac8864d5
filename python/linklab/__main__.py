"""``python -m linklab``: the same as the ``linklab`` command."""

from linklab.cli import main

raise SystemExit(main())
