"""tools/time_odds.py: the clock-scaling proxy used for time-odds matches."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO_ROOT

from tools.time_odds import scale_go

#: A stand-in engine that reports every line it receives, then exits on quit.
ECHO_ENGINE = (
    "import sys\n"
    "for line in sys.stdin:\n"
    "    print('got ' + line.strip(), flush=True)\n"
    "    if line.strip() == 'quit':\n"
    "        break\n"
)


def test_clock_parameters_of_go_are_scaled() -> None:
    assert scale_go("go wtime 10000 btime 8000 winc 100 binc 100", 0.5) == "go wtime 5000 btime 4000 winc 50 binc 50"
    assert scale_go("go movetime 3000", 2) == "go movetime 6000"
    # Nothing else is touched: depth, nodes, movestogo, other commands.
    assert scale_go("go depth 7 nodes 5000 movestogo 20", 0.5) == "go depth 7 nodes 5000 movestogo 20"
    assert scale_go("position startpos moves e2e4", 0.5) == "position startpos moves e2e4"


def test_a_clock_never_scales_to_zero_and_bad_values_pass_through() -> None:
    assert scale_go("go wtime 1 btime 1", 0.25) == "go wtime 1 btime 1"
    assert scale_go("go wtime lots", 0.5) == "go wtime lots"
    assert scale_go("go wtime", 0.5) == "go wtime"


def test_the_proxy_forwards_both_ways_and_rewrites_go() -> None:
    command = [sys.executable, str(REPO_ROOT / "tools" / "time_odds.py"), "--factor", "0.5", "--",
               sys.executable, "-c", ECHO_ENGINE]
    done = subprocess.run(command, input="uci\ngo wtime 2000 btime 2000\nquit\n", capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["got uci", "got go wtime 1000 btime 1000", "got quit"]
