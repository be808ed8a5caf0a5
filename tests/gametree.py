"""A tiny game-tree adapter: lets the engine's alpha-beta walk a textbook tree.

It offers the handful of `Position` methods `search.alphabeta.AlphaBeta`
uses.  Moves are child names; leaves carry static values from the root
(maximising) player's point of view, and every static evaluation is logged so
tests can check which leaves alpha-beta looked at.
"""
from __future__ import annotations


class UnexpectedLeaf(AssertionError):
    """A leaf that the textbook says must be pruned was evaluated."""


class GameTree:
    def __init__(self, children: dict[str, list[str]], leaves: dict[str, int | None], root: str = "A") -> None:
        self.children = children
        self.leaves = leaves
        self.path = [root]
        self.evaluated: list[str] = []
        self.board = self.mailbox = None  # the search only touches them when ordering is on

    @property
    def key(self) -> int:
        return hash(self.path[-1])

    def in_check(self) -> bool:
        return False

    def is_draw(self) -> bool:
        return False

    def legal_moves(self, in_check: bool | None = None) -> list[str]:
        return list(self.children.get(self.path[-1], []))

    def tactical_moves(self) -> list[str]:
        return []

    def push(self, move: str) -> None:
        self.path.append(move)

    def pop(self) -> str:
        return self.path.pop()

    def evaluate(self) -> int:
        node = self.path[-1]
        self.evaluated.append(node)
        value = self.leaves[node]
        if value is None:
            raise UnexpectedLeaf(f"leaf {node} should have been pruned")
        # Negamax: values are for the side to move; the maximiser moves at even plies.
        return value if len(self.path) % 2 == 1 else -value

    def no_moves_score(self, ply: int) -> int:
        """A leaf above the search horizon is a terminal node: its static value."""
        return self.evaluate()


def binary_tree(leaf_values: list[int | None]) -> GameTree:
    """A complete binary tree over `leaf_values` (length a power of two), leaves named L0, L1, ..."""
    children: dict[str, list[str]] = {}
    level = [f"L{i}" for i in range(len(leaf_values))]
    counter = 0
    while len(level) > 1:
        parents = []
        for left, right in zip(level[::2], level[1::2]):
            name = f"N{counter}"
            counter += 1
            children[name] = [left, right]
            parents.append(name)
        level = parents
    leaves = {f"L{i}": value for i, value in enumerate(leaf_values)}
    return GameTree(children, leaves, root=level[0])
