"""The UCI protocol front end of Pawnstorm, and its command-line tools."""
__version__ = "0.1.0"
