"""The UCI protocol front end of Pawnstorm, and its command-line tools."""
#: The engine's version: `id name` says it, and pyproject.toml reads it from here.
__version__ = "0.1.0"
