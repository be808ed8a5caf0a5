"""A tiny scripted UCI engine for the match runner's fault tests (tests/test_match.py).

    python tests/fake_uci.py MODE

MODE says how it misbehaves at its first `go`:
  legal    never: it plays the first legal move in UCI order (a weak, fast
           opponent) and names the same choice for the reply as its ponder move
  crash    it exits with status 3 without answering
  illegal  it answers a well-formed move that is illegal in the position
  stall    it never answers (but keeps reading, so `quit` still ends it)
  slow     it answers a legal move after 1.5 s (past a 1 s clock)
  dead     it exits before answering `uci`
  flaky    it plays as `legal` but crashes (status 3) at a `go` in about one
           position in eight, chosen by a digest of the position, so the same
           games fault on every run: deterministic, yet a mix of wins and
           draws for its opponent (the cluster tests' match, tests/
           test_match_cluster.py, needs both for an SPRT to move)
A real engine would be slower and less predictable at each of these.  With
FAKE_UCI_LOG set, every line it reads is appended to that file, so a test can
see what the runner sent (`movestogo`, `go ponder`, `ponderhit`).
"""
from __future__ import annotations

import hashlib
import os
import sys
import time

import chess


def illegal_move(board: chess.Board) -> str:
    """A move of the side not to move: well-formed UCI, never legal here."""
    other = board.copy(stack=False)
    other.turn = not board.turn
    other.ep_square = None
    for move in other.pseudo_legal_moves:
        if move not in board.legal_moves:
            return move.uci()
    return "a1a2"  # not reached from the match openings


def position(tokens: list[str]) -> chess.Board:
    """The board of a `position` command."""
    board = chess.Board() if tokens[1] == "startpos" else chess.Board(" ".join(tokens[2:8]))
    if "moves" in tokens:
        for uci in tokens[tokens.index("moves") + 1:]:
            board.push_uci(uci)
    return board


def first(board: chess.Board) -> chess.Move | None:
    """The first legal move in UCI order (None when there is none)."""
    return min(board.legal_moves, key=chess.Move.uci, default=None)


def bestmove(board: chess.Board) -> str:
    """`bestmove` with the first legal move, and the first reply to it as the ponder move."""
    move = first(board)
    if move is None:
        return "bestmove (none)"
    board.push(move)
    reply = first(board)
    board.pop()
    return f"bestmove {move.uci()}" + (f" ponder {reply.uci()}" if reply else "")


def unlucky(board: chess.Board) -> bool:
    """The positions where `flaky` crashes: about one in eight, the same on every run (not `hash`, which is salted)."""
    return hashlib.sha256(board.fen().encode()).digest()[0] % 8 == 0


def main(mode: str) -> int:
    if mode == "dead":
        return 2
    log = os.environ.get("FAKE_UCI_LOG")
    board = chess.Board()
    for line in sys.stdin:
        if log:
            with open(log, "a") as out:
                out.write(line)
        tokens = line.split()
        if not tokens:
            continue
        if tokens[0] == "uci":
            print(f"id name fake-{mode}\nuciok", flush=True)
        elif tokens[0] == "isready":
            print("readyok", flush=True)
        elif tokens[0] == "position":
            board = position(tokens)
        elif tokens[0] == "go" and "ponder" in tokens:
            continue  # the answer comes at `ponderhit` or `stop`
        elif tokens[0] in ("ponderhit", "stop"):
            print(bestmove(board), flush=True)
        elif tokens[0] == "go":
            if mode == "crash" or (mode == "flaky" and unlucky(board)):
                return 3
            if mode == "stall":
                continue
            if mode == "slow":
                time.sleep(1.5)
            print(f"bestmove {illegal_move(board)}" if mode == "illegal" else bestmove(board), flush=True)
        elif tokens[0] == "quit":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
