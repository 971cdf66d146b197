"""`python -m fuzz --execs N [harness ...]`: see `fuzz/runner.py`."""

from fuzz.runner import main

raise SystemExit(main())
