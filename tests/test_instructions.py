"""tools/instructions.py: cg_annotate's listing read, grouped and taken off the baseline (valgrind itself is not run)."""
from __future__ import annotations

import pytest

from tools import instructions

ANNOTATION = """\
--------------------------------------------------------------------------------
Ir                      file:function
--------------------------------------------------------------------------------
2,000,000 (50.00%)  /tmp/Python-3.11.7/Python/ceval.c:_PyEval_EvalFrameDefault
  900,000 (22.50%)  /tmp/Python-3.11.7/Objects/longobject.c:long_bitwise
  600,000 (15.00%)  ???:dgemv_kernel_4x4
  300,000 ( 7.50%)  ???:DOUBLE_clip
  200,000 ( 5.00%)  /tmp/Python-3.11.7/Parser/pegen.c:_PyPegen_is_memoized
"""
BASELINE = """\
Ir                      file:function
1,000,000 (80.00%)  /tmp/Python-3.11.7/Python/ceval.c:_PyEval_EvalFrameDefault
  200,000 (20.00%)  /tmp/Python-3.11.7/Parser/pegen.c:_PyPegen_is_memoized
"""


def test_the_listing_is_read_function_by_function() -> None:
    counts = instructions.parse(ANNOTATION)
    assert counts["???:dgemv_kernel_4x4"] == 600_000 and sum(counts.values()) == 4_000_000
    assert instructions.parse("no listing here\n 12 (1.0%) x.c:f\n") == {}


def test_the_baseline_is_taken_off_and_every_function_has_one_group() -> None:
    groups = instructions.grouped(instructions.parse(ANNOTATION), instructions.parse(BASELINE))
    assert groups == {
        "the interpreter: bytecode loop and frames": 1_000_000,
        "int arithmetic (bitboards, scores, keys)": 900_000,
        "BLAS: matrix-vector products (the net's second layer)": 600_000,
        "numpy: its other calls (ufuncs, arrays)": 300_000,
        instructions.OTHER: 0,  # parsing the code is the start's alone
    }
    rows = instructions.table(groups, 1000).splitlines()
    assert rows[2] == "| the interpreter: bytecode loop and frames | 1.0 k | 35.7% |"
    assert rows[-1] == "| **a node** | **2.8 k** | 1,000 nodes |"


def test_the_baseline_depth_cannot_be_measured_against_itself() -> None:
    with pytest.raises(SystemExit):
        instructions.main(["--depth", "1"])
