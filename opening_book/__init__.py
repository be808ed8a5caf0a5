"""Polyglot opening book support for Pawnstorm (lookup and a pruning build tool)."""

from opening_book.book import OpeningBook, default_book_path

__all__ = ["OpeningBook", "default_book_path"]
