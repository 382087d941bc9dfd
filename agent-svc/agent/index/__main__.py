"""`python -m agent.index`: the operators' CLI (cli.py)."""

import sys

from agent.index.cli import main

sys.exit(main())
