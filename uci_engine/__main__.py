"""`python -m uci_engine`: start the engine (UCI loop or a subcommand)."""
import sys

from uci_engine.cli import main

sys.exit(main())
