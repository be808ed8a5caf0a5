"""Static evaluation of chess positions.

The classical evaluation (`eval.evaluate`): tapered material and piece-square
tables, bishop pair, pawn structure and king proximity to passed pawns, with
weights in `eval.weights`; the learned evaluation (`eval.nnue`), a net that
corrects the classical one; and the win/draw/loss model (`eval.wdl`).
"""
from eval.evaluate import describe, evaluate, evaluate_terms, finish, packed_score, taper

__all__ = ["describe", "evaluate", "evaluate_terms", "finish", "packed_score", "taper"]
