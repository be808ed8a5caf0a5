"""tools/node_cost.py: it times every legal move once per run, for both evaluations, and refuses a bad net."""
from __future__ import annotations

from pathlib import Path

import chess

from tools import node_cost

MATED = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"


def test_sample_keeps_each_position_with_all_its_legal_moves() -> None:
    fens = [chess.STARTING_FEN, MATED, "8/8/3k4/8/2QK4/8/8/8 w - - 0 1"]
    sampled = node_cost.sample(fens)
    assert [board.fen() for board, _ in sampled] == [fens[0], fens[2]]  # no moves: nothing to time
    assert [len(moves) for _, moves in sampled] == [20, len(list(chess.Board(fens[2]).legal_moves))]


def test_report_has_both_evaluations_and_the_nets_share(capsys) -> None:
    assert node_cost.main(["--repeat", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    moves = sum(len(moves) for _, moves in node_cost.sample(node_cost.BENCH_FENS))
    assert lines[0].startswith(f"{moves} moves of {len(node_cost.BENCH_FENS)} bench positions")
    assert [line.split()[0] for line in lines[2:4]] == ["classical", "net"]
    assert lines[4].startswith("the net's own cost: accumulator update")


def test_a_corrupt_net_is_named_and_refused(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.nnue"
    bad.write_bytes(b"PSNN" + bytes(10))
    assert node_cost.main(["--net", str(bad), "--repeat", "1"]) == 2
    assert str(bad) in capsys.readouterr().err


def test_every_timed_evaluation_is_computed_not_read_from_the_cache(monkeypatch) -> None:
    """Run after run, the same positions are scored: each call must still compute its score."""
    import search.position

    computed = []
    real_finish = search.position.finish

    def counting_finish(*args):
        computed.append(1)
        return real_finish(*args)

    monkeypatch.setattr(search.position, "finish", counting_finish)
    boards = node_cost.sample([chess.STARTING_FEN])
    positions = [search.position.Position(board.copy(), None) for board, _ in boards]
    moves = [legal for _, legal in boards]
    for _ in range(3):
        node_cost._evaluate_seconds(positions, moves)
    assert len(computed) == 3 * 20
