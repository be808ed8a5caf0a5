"""A tiny scripted xboard (CECP) engine for the match runner's xboard tests (tests/test_match.py).

    python tests/fake_xboard.py MODE

MODE:
  legal    it plays the first legal move in UCI order, posting a score line
           before each move (as `post` asks), so adjudication sees scores
  resign   it plays as `legal` but resigns at its third move
  illegal  it answers its first `go` with a move that is not legal there
It speaks only what python-chess's xboard client sends in a match:
`xboard`, `protover`, `new`, `force`, `setboard`, `usermove`, `level`,
`time`, `otim`, `post`/`nopost`, `hard`/`easy`, `go`, `ping`, `result`,
`quit`; anything else is ignored.  With FAKE_XBOARD_LOG set, every line it
reads is appended to that file, so a test can see what the runner sent.
"""
from __future__ import annotations

import os
import sys

import chess


def main(mode: str) -> int:
    board = chess.Board()
    moves_made = 0
    post = False
    log = os.environ.get("FAKE_XBOARD_LOG")

    def say(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        if log:
            with open(log, "a") as out:
                out.write(line)
        command, _, rest = line.strip().partition(" ")
        if command == "protover":
            say('feature myname="fake-xboard" setboard=1 usermove=1 ping=1 sigint=0 reuse=1 done=1')
        elif command == "new":
            board = chess.Board()
        elif command == "setboard":
            board = chess.Board(rest)
        elif command == "usermove":
            board.push_uci(rest)
        elif command == "ping":
            say(f"pong {rest}")
        elif command == "post":
            post = True
        elif command == "nopost":
            post = False
        elif command == "go":
            moves_made += 1
            if mode == "resign" and moves_made >= 3:
                say("resign")
                continue
            if mode == "illegal":
                say("move a1a8" if board.turn == chess.WHITE else "move a8a1")  # through its own pawn, or no rook
                continue
            move = min(board.legal_moves, key=lambda m: m.uci())
            if post:
                say("1 0 0 1 " + move.uci())  # depth, score (cp), time (cs), nodes, pv
            board.push(move)
            say(f"move {move.uci()}")
        elif command == "quit":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "legal"))
