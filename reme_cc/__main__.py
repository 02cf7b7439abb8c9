"""`python -m reme_cc` is the `reme-cc` command."""

import sys

from .surfaces.cli import main

sys.exit(main())
