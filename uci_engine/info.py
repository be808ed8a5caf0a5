"""Formatting search reports as UCI `info` lines."""
from __future__ import annotations

from search.driver import Iteration
from search.tt import LOWER, UPPER


def score_text(iteration: Iteration) -> str:
    mate = iteration.mate_in
    text = f"score mate {mate}" if mate is not None else f"score cp {iteration.score}"
    if iteration.bound == LOWER:
        text += " lowerbound"
    elif iteration.bound == UPPER:
        text += " upperbound"
    return text


def info_line(iteration: Iteration) -> str:
    pv = " ".join(move.uci() for move in iteration.pv)
    return (
        f"info depth {iteration.depth} seldepth {max(iteration.seldepth, iteration.depth)} multipv 1 "
        f"{score_text(iteration)} nodes {iteration.nodes} nps {iteration.nps} "
        f"hashfull {iteration.hashfull} tbhits {iteration.tbhits} time {int(iteration.time_ms)} pv {pv}"
    ).rstrip()
