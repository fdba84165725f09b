"""`python -m provider_sandbox serve ...` (see provider_sandbox/cli.py)."""

import sys

from provider_sandbox.cli import main

sys.exit(main())
