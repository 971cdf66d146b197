"""`python -m krafka.cli`."""

import sys

from krafka.cli import main

sys.exit(main())
