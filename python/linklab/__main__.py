"""``python -m linklab``: the same as the ``linklab`` command."""

from linklab.cli import run

run()
