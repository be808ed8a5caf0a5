"""Options analysis GUIs set: UCI_AnalyseMode (and, below, the other UCI_* options)."""
from __future__ import annotations

import chess
import chess.engine

from tests.test_client import engine  # noqa: F401 (fixture)


def test_analyse_mode_searches_instead_of_using_the_book(engine) -> None:  # noqa: F811
    engine.configure({"UCI_AnalyseMode": True})
    result = engine.play(chess.Board(), chess.engine.Limit(white_clock=2, black_clock=2),
                         info=chess.engine.INFO_ALL)
    assert result.move in chess.Board().legal_moves
    assert not result.info.get("string", "").startswith("book move"), result.info
    assert "depth" in result.info
