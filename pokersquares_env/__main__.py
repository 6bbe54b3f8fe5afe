"""``python -m pokersquares_env`` runs the ``pokersquares`` command line."""

import sys

from pokersquares_env.cli import main

sys.exit(main())
