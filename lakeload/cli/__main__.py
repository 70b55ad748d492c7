"""`python -m lakeload.cli ...` runs the `lakeload` command."""

import sys

from lakeload.cli.main import main

sys.exit(main())
