"""Static evaluation of chess positions (material + tapered piece-square tables)."""
from eval.evaluate import describe, evaluate, evaluate_terms, finish, packed_score, taper

__all__ = ["describe", "evaluate", "evaluate_terms", "finish", "packed_score", "taper"]
