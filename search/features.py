"""Switches for the parts of the search that are not plain minimax.

Tests use them to strip the search down: with `Features.exact()` the search is
alpha-beta with only value-preserving speed-ups (move ordering, principal
variation search, aspiration windows, transposition cutoffs), so its root value
must equal plain minimax to the same depth; with `Features.plain()` it is the
textbook algorithm, children in natural order, that lecture trees are drawn for.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Features:
    #: Search captures/promotions past the horizon (stand pat, delta pruning).
    quiescence: bool = True
    #: Skip captures in quiescence that cannot raise alpha even with a margin.
    delta_pruning: bool = True
    #: Search one ply deeper when the side to move is in check.
    check_extension: bool = True
    #: Hash move, MVV-LVA, killers and history (else: generator order).
    ordering: bool = True
    #: Null-window searches for all but the first move.
    pvs: bool = True
    #: Narrow root window around the previous iteration's score.
    aspiration: bool = True
    #: Probe and store the transposition table (cutoffs and the hash move).
    transposition: bool = True
    #: Null-move pruning and reverse futility pruning: cut nodes whose
    #: static evaluation (or a reduced search after passing) is already
    #: above beta.  Selective: changes the minimax value.
    null_move: bool = True
    #: Late move reductions: quiet moves late in the ordering are searched
    #: shallower first, and again at full depth only if they beat alpha.
    late_move_reductions: bool = True
    #: Skip captures in quiescence that lose material by static exchange
    #: evaluation (a queen taking a defended pawn).
    see_pruning: bool = True
    #: Quiet-move pruning near the horizon (late move pruning and futility
    #: pruning): at shallow non-PV nodes, quiet moves that give no check are
    #: skipped once enough have been tried, or when the static evaluation
    #: plus a margin cannot reach alpha.  Selective.  On since its SPRT
    #: passed at 10+0.1 (session 24, docs/strength.md);
    #: `PAWNSTORM_FEATURES=-quiet_pruning` turns it off.
    quiet_pruning: bool = True

    @classmethod
    def exact(cls) -> "Features":
        """Only the speed-ups that never change the minimax value."""
        return cls(quiescence=False, delta_pruning=False, check_extension=False, null_move=False,
                   late_move_reductions=False, see_pruning=False, quiet_pruning=False)

    @classmethod
    def plain(cls) -> "Features":
        """Textbook alpha-beta: every feature off."""
        return cls(**{f.name: False for f in fields(cls)})

    def with_spec(self, spec: str) -> tuple["Features", list[str]]:
        """These features changed by a spec such as ``"quiet_pruning,-null_move"``.

        A name alone (or ``+name``, ``name=1``) turns a switch on; ``-name``
        (or ``name=0``) turns it off.  This is how a match plays the engine
        against itself with one switch flipped (the environment variable
        ``PAWNSTORM_FEATURES``, read by the UCI engine and `bench`), so that
        a change can be measured before it is on by default.  Returns the
        new features and a message for each item not understood (skipped).
        """
        known = {f.name for f in fields(self)}
        changes: dict[str, bool] = {}
        problems: list[str] = []
        for item in spec.replace(" ", ",").split(","):
            item = item.strip()
            if not item:
                continue
            name, value = item, True
            if "=" in item:
                name, text = item.split("=", 1)
                if text not in ("0", "1", "true", "false"):
                    problems.append(f"search feature {item!r}: value must be 0, 1, true or false")
                    continue
                value = text in ("1", "true")
            elif item[0] in "+-":
                name, value = item[1:], item[0] == "+"
            if name not in known:
                problems.append(f"unknown search feature {name!r} (known: {', '.join(sorted(known))})")
                continue
            changes[name] = value
        return replace(self, **changes), problems
