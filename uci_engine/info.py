"""Formatting search reports as UCI `info` lines."""
from __future__ import annotations

from search.driver import Iteration
from search.types import uci_score


def info_line(iteration: Iteration, wdl: tuple[int, int, int] | None = None) -> str:
    """The `info` line of one (MultiPV) line; `wdl` per mille when UCI_ShowWDL is on."""
    pv = " ".join(move.uci() for move in iteration.pv)
    wdl_text = f" wdl {wdl[0]} {wdl[1]} {wdl[2]}" if wdl is not None else ""
    return (
        f"info depth {iteration.depth} seldepth {max(iteration.seldepth, iteration.depth)} "
        f"multipv {iteration.multipv} "
        f"score {uci_score(iteration.score, iteration.bound)}{wdl_text} nodes {iteration.nodes} nps {iteration.nps} "
        f"hashfull {iteration.hashfull} tbhits {iteration.tbhits} time {int(iteration.time_ms)} pv {pv}"
    ).rstrip()


def currmove_line(move: str, number: int, depth: int) -> str:
    """`info currmove`: which root move a long search is on (move in UCI notation)."""
    return f"info depth {depth} currmove {move} currmovenumber {number}"
