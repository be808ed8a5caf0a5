"""`python -m uci_engine`: start the engine (UCI loop or a subcommand)."""
import multiprocessing
import sys

from uci_engine.cli import entry_point

if __name__ == "__main__":  # helper processes (Threads > 1) import this module too
    multiprocessing.freeze_support()  # a helper of the frozen executable starts here
    sys.exit(entry_point())
