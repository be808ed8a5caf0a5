"""The UCI loop: read commands, keep the game state, run searches in a thread.

The loop thread only parses and dispatches, so it can always answer
`isready` and act on `stop`/`quit`; the search runs in a daemon thread that
prints exactly one `bestmove` per `go`.
"""
from __future__ import annotations

import io
import os
import random
import sys
import threading
from typing import Callable, TextIO

import chess

from eval import describe, nnue
from eval.nnue import Net, bundled_net
from eval.wdl import material, wdl
from opening_book import OpeningBook
from search.driver import Iteration
from search.smp import MAX_THREADS, ParallelSearcher
from search.strength import CANDIDATE_LINES, ELO_MAX, ELO_MIN, StrengthLimit, limit_for
from search.tablebase import DEFAULT_PROBE_DEPTH, Tablebases
from search.timeman import Limits
from search.tt import DEFAULT_HASH_MB, MAX_HASH_MB
from uci_engine import __version__
from uci_engine.info import currmove_line, info_line
from uci_engine.options import Option, Options, search_features, split_setoption
from uci_engine.output import Output
from uci_engine.position_cmd import legal_move, parse_go, parse_position
from uci_engine.diagnostics import DEFAULT_BENCH_DEPTH, bench, display, divide

ENGINE_NAME = f"Pawnstorm {__version__}"
ENGINE_AUTHOR = "the Pawnstorm developers"
#: BookFile value meaning "the book shipped inside the package".  Not
#: "<default>": python-chess's option parser splits on the word "default".
DEFAULT_BOOK = "<bundled>"
BUNDLED_NET = "<bundled>"
#: Path value meaning "none", as Stockfish declares its tablebase paths: for
#: the tablebases no tables, for BookFile no book (OwnBook then searches).
NO_TABLEBASES = NO_BOOK = "<empty>"


class UciEngine:
    def __init__(self, output: Output | None = None) -> None:
        self.out = output or Output()
        self.out.on_close = self.stop_search  # nobody reads the result: stop searching at once
        self.board = chess.Board()
        self.debug = False
        #: The net `EvalFile` names (kept when a new file fails to load);
        #: searched with while `Use NNUE` is on.
        self._net: Net | None = bundled_net()
        features, self._feature_problems = search_features()
        self.searcher = ParallelSearcher(DEFAULT_HASH_MB, features, net=self._net if nnue.USE_NNUE_DEFAULT else None)
        self.rng = random.Random()
        self._book: OpeningBook | None = None
        self._book_checked = False
        self._search_thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._ponderhit = threading.Event()
        # Set by `stop`, `ponderhit` and `quit`: lets a search that finished
        # early under `go infinite` / `go ponder` send its bestmove.
        self._release = threading.Event()
        #: The command line being handled, as it came.
        self._line = ""
        #: The running (or last) search's `go`: `ponderhit` releases no `go infinite`.
        self._infinite = False
        self.options = Options()
        self.options.add(Option("Hash", "spin", DEFAULT_HASH_MB, 1, MAX_HASH_MB), self._on_hash)
        self.options.add(Option("Clear Hash", "button"), lambda _: self.searcher.clear())
        self.options.add(Option("Threads", "spin", 1, 1, MAX_THREADS), self._on_threads)
        self.options.add(Option("Move Overhead", "spin", 30, 0, 5000))
        self.options.add(Option("Ponder", "check", False))
        self.options.add(Option("OwnBook", "check", True))
        self.options.add(Option("BookFile", "string", DEFAULT_BOOK), self._on_book_file)
        self.options.add(Option("MultiPV", "spin", 1, 1, 500))
        self.options.add(Option("UCI_AnalyseMode", "check", False))
        self.options.add(Option("UCI_Chess960", "check", False), self._on_chess960)
        self.options.add(Option("UCI_ShowWDL", "check", False))
        self.options.add(Option("UCI_LimitStrength", "check", False))
        self.options.add(Option("UCI_Elo", "spin", 1500, ELO_MIN, ELO_MAX))
        self.tablebases = Tablebases()
        self.options.add(Option("SyzygyPath", "string", NO_TABLEBASES), self._on_syzygy_path)
        self.options.add(Option("GaviotaTbPath", "string", NO_TABLEBASES), self._on_gaviota_path)
        self.options.add(Option("SyzygyProbeLimit", "spin", 7, 0, 7), self._on_probe_limit)
        self.options.add(Option("SyzygyProbeDepth", "spin", DEFAULT_PROBE_DEPTH, 1, 100), self._on_probe_depth)
        self.options.add(Option("EvalFile", "string", BUNDLED_NET), self._on_eval_file)
        self.options.add(Option("Use NNUE", "check", nnue.USE_NNUE_DEFAULT), self._on_use_nnue)
        self.handlers: dict[str, Callable[[list[str]], bool | None]] = {
            "uci": self.cmd_uci,
            "isready": lambda _: self.out.send("readyok"),
            "ucinewgame": self.cmd_ucinewgame,
            "position": self.cmd_position,
            "go": self.cmd_go,
            "stop": lambda _: self.stop_search(),
            "ponderhit": self.cmd_ponderhit,
            "setoption": self.cmd_setoption,
            "debug": self.cmd_debug,
            "quit": lambda _: True,
            "d": lambda _: self.out.send(display(self.board)),
            "eval": lambda _: self.out.send(self._describe_eval()),
            "bench": self.cmd_bench,
            "perft": self.cmd_perft,
        }

    # --- the loop ---------------------------------------------------------------

    def run(self, stream: TextIO | None = None) -> None:
        """Serve commands until `quit` or end of input."""
        if stream is None:
            # Bytes that are not UTF-8 must not end the engine: decode leniently.
            stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace", newline=None)
        try:
            for line in stream:
                # A closed output means the GUI is gone: nobody reads what we would say.
                if self.handle(line) or self.out.closed:
                    break
        except KeyboardInterrupt:
            pass
        finally:
            self.stop_search()
            if self._search_thread is not None:
                self._search_thread.join(timeout=0.5)
            self.searcher.close()  # no helper process outlives the engine

    def handle(self, line: str) -> bool:
        """Dispatch one command line; True means quit."""
        tokens = line.split()
        if not tokens:
            return False
        self._line = line  # as it came: `setoption` takes a value with its whitespace
        handler = self.handlers.get(tokens[0])
        if handler is None:
            if self.debug:
                self.out.info_string(f"unknown command {tokens[0]!r} ignored")
            return False
        try:
            return bool(handler(tokens[1:]))
        except Exception as error:  # a bug in one command must not end the engine
            self.out.info_string(f"error in {tokens[0]!r}: {type(error).__name__}: {error}")
            return False

    # --- commands --------------------------------------------------------------

    def cmd_uci(self, _: list[str]) -> None:
        self.out.send(f"id name {ENGINE_NAME}")
        self.out.send(f"id author {ENGINE_AUTHOR}")
        for declaration in self.options.declarations():
            self.out.send(declaration)
        problem = nnue.bundled_net_problem()
        if problem is not None and self._net is None:  # said where a GUI logs it: at the handshake
            self.out.info_string(f"NNUE: the bundled net is not usable ({problem}); "
                                 "searching with the classical evaluation")
        for problem in self._feature_problems:
            self.out.info_string(problem)
        self.out.send("uciok")

    def cmd_debug(self, args: list[str]) -> None:
        self.debug = bool(args) and args[0] == "on"

    def cmd_ucinewgame(self, _: list[str]) -> None:
        self.wait_for_search()
        self.searcher.clear()
        self.board = chess.Board(chess960=bool(self.options["UCI_Chess960"]))

    def cmd_position(self, args: list[str]) -> None:
        self.board, messages = parse_position(args, self.board, bool(self.options["UCI_Chess960"]))
        for message in messages:
            self.out.info_string(message)

    def cmd_setoption(self, args: list[str]) -> None:
        parsed = split_setoption(args, self._line)
        if parsed is None:
            self.out.info_string("setoption: expected 'setoption name <name> [value <value>]'")
            return
        # Options that touch the search's tables must not change under it.
        if parsed[0].strip().lower() in ("hash", "clear hash", "threads"):
            self.wait_for_search()
        for message in self.options.set(*parsed):
            self.out.info_string(message)

    def cmd_go(self, args: list[str]) -> None:
        self.wait_for_search()
        limits, perft_depth, messages = parse_go(args)
        for message in messages:
            self.out.info_string(message)
        if perft_depth is not None:
            if perft_depth > 0:
                divide(self.board.copy(), perft_depth, self.out.send)
            return
        if limits.searchmoves is not None:
            limits.searchmoves = self._legal_searchmoves(limits.searchmoves)
        board = self.board.copy()
        book_move = self._book_move(board, limits)
        self._infinite = limits.infinite
        self._stop.clear()
        self._ponderhit.clear()
        self._release.clear()
        self._search_thread = threading.Thread(
            target=self._think, args=(board, limits, book_move), name="search", daemon=True
        )
        self._search_thread.start()

    def _legal_searchmoves(self, texts: list[str]) -> list[str]:
        """`go searchmoves`: the legal ones in the search's notation; the others named in an info string.

        None legal: every move is searched, as if none were given.
        """
        legal, ignored = [], []
        for text in texts:
            move = legal_move(self.board, text)
            if move is None:
                ignored.append(text)
            else:
                legal.append(move.uci())
        if ignored:
            rest = "" if legal else "; searching every move"
            self.out.info_string(f"go: searchmoves {' '.join(ignored)} not legal here, ignored{rest}")
        return legal

    def cmd_bench(self, args: list[str]) -> None:
        depth = DEFAULT_BENCH_DEPTH
        if args:
            try:
                depth = max(1, min(int(args[0]), 20))
            except ValueError:
                self.out.info_string(f"bench: depth {args[0]!r} is not a number; using {depth}")
        self.wait_for_search()
        bench(depth, emit=self.out.send, net=self.searcher.net, tablebases=self.searcher.tablebases,
              features=self.searcher.features)

    def cmd_perft(self, args: list[str]) -> None:
        try:
            depth = int(args[0]) if args else 1
        except ValueError:
            self.out.info_string(f"perft: depth {args[0]!r} is not a number")
            return
        divide(self.board.copy(), max(1, depth), self.out.send)

    # --- searching ---------------------------------------------------------------

    def _think(self, board: chess.Board, limits: Limits, book_move: chess.Move | None) -> None:
        """Search thread body: always ends by printing one legal `bestmove`.

        This is the search thread's boundary: an unexpected exception inside
        the search is reported and the best move reported so far (or any
        legal move) is played, so the GUI always gets an answer.
        """
        best: chess.Move | None = book_move
        ponder: chess.Move | None = None
        reported: list[Iteration] = []
        show_wdl = bool(self.options["UCI_ShowWDL"])
        material_count = material(board)
        shown_lines = int(self.options["MultiPV"])
        strength = (limit_for(int(self.options["UCI_Elo"]), learned=self.searcher.net is not None)
                    if self.options["UCI_LimitStrength"] else None)
        if strength is not None:
            budget = strength.nodes()
            limits.nodes = budget if limits.nodes is None else min(limits.nodes, budget)
            limits.min_depth = 1  # the candidate lines must come from a whole depth

        def report(iteration: Iteration) -> None:
            if iteration.multipv > shown_lines:
                return  # a candidate searched only for the strength limit
            if iteration.multipv == 1:
                reported.append(iteration)  # the fallback move comes from the best line
            chances = wdl(iteration.score, material_count, iteration.mate_in) if show_wdl else None
            self.out.send(info_line(iteration, chances))

        try:
            if book_move is not None:
                self.out.info_string(f"book move {book_move.uci()}")
            else:
                result = self.searcher.search(
                    board, limits, move_overhead=int(self.options["Move Overhead"]),
                    stop=self._stop, ponderhit=self._ponderhit, on_iteration=report,
                    multipv=max(shown_lines, CANDIDATE_LINES) if strength else shown_lines,
                    helpers=strength is None,  # the strength limit plays with one thread
                    on_currmove=lambda move, number, depth: self.out.send(
                        currmove_line(move.uci(), number, depth)),
                )
                best, ponder = result.best_move, result.ponder_move
                if strength is not None and len(result.lines) > 1:
                    best, ponder = self._weaker_choice(strength, result.lines)
        except Exception as error:  # keep serving: fall back on what we know
            self.out.info_string(f"search error: {type(error).__name__}: {error}")
            best = reported[-1].pv[0] if reported and reported[-1].pv else None
        for problem in self.tablebases.take_problems():  # a table damaged inside, met while searching
            self.out.info_string(problem)
        for problem in self.searcher.take_problems():  # a helper process that died
            self.out.info_string(problem)
        if best is None or best not in board.legal_moves:
            best = next(iter(board.legal_moves), None)
            ponder = None
        if best is None:  # checkmated or stalemated: say which, as Stockfish does, before `bestmove (none)`
            self.out.send(f"info depth 0 score {'mate 0' if board.is_check() else 'cp 0'}")
        if limits.infinite or (limits.ponder and not self._ponderhit.is_set()):
            # UCI: while pondering or in infinite mode, bestmove waits for
            # `stop` (or `ponderhit`) even if the search ended by itself.
            self._release.wait()
        if best is None:
            # Stockfish's word for no move; python-chess reads it as None (`0000` would be a null move to push).
            self.out.send("bestmove (none)")
        elif ponder is not None:
            self.out.send(f"bestmove {best.uci()} ponder {ponder.uci()}")
        else:
            self.out.send(f"bestmove {best.uci()}")

    def _weaker_choice(self, strength: StrengthLimit, lines: list[Iteration]) -> tuple[chess.Move, chess.Move | None]:
        """UCI_LimitStrength: pick among the candidate lines, and its ponder move."""
        move = strength.choose([(line.pv[0], line.score) for line in lines if line.pv], self.rng)
        line = next(line for line in lines if line.pv and line.pv[0] == move)
        return move, line.pv[1] if len(line.pv) > 1 else None

    def stop_search(self) -> None:
        self._stop.set()
        self._release.set()

    def cmd_ponderhit(self, _: list[str]) -> None:
        """The opponent played the move we pondered on: the clock now runs.

        Under `go infinite` the bestmove still waits for `stop`.
        """
        self._ponderhit.set()
        if not self._infinite:
            self._release.set()

    def wait_for_search(self) -> None:
        """Stop a running search (it prints its bestmove) and wait for it."""
        thread = self._search_thread
        if thread is not None and thread.is_alive():
            self.stop_search()
            thread.join()
        self._search_thread = None

    # --- book ----------------------------------------------------------------

    def _book_move(self, board: chess.Board, limits: Limits) -> chess.Move | None:
        """A book move only for a game's move: a `go` with a clock or a movetime.

        Everything else is analysis, and an analyst wants a search, as from
        Stockfish, which has no book: a bare `go` (or one whose only limit was
        malformed, like `go depth abc`), `go infinite`, `go depth`/`nodes`/`mate`,
        `go ponder` and `go searchmoves` all search.
        """
        if not self.options["OwnBook"] or self.options["UCI_AnalyseMode"] or limits.infinite or limits.ponder:
            return None
        if limits.wtime is None and limits.btime is None and limits.movetime is None:
            return None  # no clock: nobody is waiting for a game move
        if limits.searchmoves is not None:
            return None  # the root was narrowed by hand: that is analysis
        if board.chess960:
            return None  # polyglot books hold standard chess only
        if int(self.options["MultiPV"]) > 1:
            return None  # several lines were asked for: that is analysis
        if limits.depth is not None or limits.nodes is not None or limits.mate is not None:
            return None
        book = self._open_book()
        return book.choose(board, self.rng) if book is not None else None

    def _open_book(self) -> OpeningBook | None:
        if self._book is None and not self._book_checked:
            self._book_checked = True
            path = str(self.options["BookFile"]).strip()
            if path == NO_BOOK:
                return None  # asked for none: not a file that is missing
            book = OpeningBook(None if path in ("", DEFAULT_BOOK) else os.path.expanduser(path))
            if book.error:
                self.out.info_string(f"{book.error}; playing without a book")
                return None
            self._book = book
        return self._book

    # --- option callbacks ---------------------------------------------------------

    def _on_hash(self, option: Option) -> None:
        self.searcher.resize_hash(int(option.value))  # type: ignore[arg-type]

    def _on_threads(self, option: Option) -> None:
        """Start or end helper processes (Lazy SMP); never during a search."""
        self.wait_for_search()
        self.searcher.set_threads(int(option.value))  # type: ignore[arg-type]

    def _on_chess960(self, option: Option) -> None:
        """Switch castling notation of the current game (king-takes-rook or not)."""
        self.board.chess960 = bool(option.value)
        # Hash moves are stored by squares: a castling move means something
        # else in the other notation.
        self.wait_for_search()
        self.searcher.clear()

    def _on_book_file(self, _: Option) -> None:
        if self._book is not None:
            self._book.close()
        self._book = None
        self._book_checked = False
        self._open_book()  # report a bad file now, while the user is looking

    def _on_eval_file(self, option: Option) -> None:
        """Load the named net (or the bundled one); on failure say why and keep the net we had."""
        path = str(option.value).strip()
        self.wait_for_search()  # the search must not change evaluation midway
        try:
            net = nnue.load(nnue.BUNDLED if path in ("", BUNDLED_NET) else os.path.expanduser(path))
        except nnue.NetError as error:
            kept = "the previous net" if self._net is not None else "the classical evaluation"
            self.out.info_string(f"EvalFile not loaded: {error}; keeping {kept}")
            return
        self._net = net
        if self.options["Use NNUE"]:
            self.out.info_string(f"NNUE evaluation using {net.name} ({net.architecture})")
        else:
            self.out.info_string(f"EvalFile loaded: {net.name} ({net.architecture}); not in use while Use NNUE is off")
        self._on_use_nnue(None)

    def _on_use_nnue(self, _: Option | None) -> None:
        self.wait_for_search()
        use = bool(self.options["Use NNUE"])
        if use and self._net is None:
            self.out.info_string("Use NNUE: no usable net loaded, searching with the classical evaluation")
        self.searcher.net = self._net if use else None
        self.searcher.clear()  # scores in the table belong to the other evaluation

    def _describe_eval(self) -> str:
        """The `eval` command: the NNUE score (if a net is loaded) and the classical terms."""
        text = describe(self.board)
        if self._net is None:
            return text + "\nNNUE evaluation: no net loaded"
        score = self._net.evaluate(self.board)
        used = "in use" if self.searcher.net is not None else "not in use (Use NNUE is off)"
        white = score if self.board.turn == chess.WHITE else -score
        return (text + f"\nNNUE evaluation:    {score / 100:+.2f} (side to move), {white / 100:+.2f} (White side); "
                f"{used}, net {self._net.name}")

    def _on_syzygy_path(self, option: Option) -> None:
        self.wait_for_search()  # the search must not probe tables being closed
        self._use_tablebases(self.tablebases.set_syzygy_path(str(option.value)))

    def _on_gaviota_path(self, option: Option) -> None:
        self.wait_for_search()
        self._use_tablebases(self.tablebases.set_gaviota_path(str(option.value)))

    def _on_probe_limit(self, option: Option) -> None:
        # Read when a search starts: a running search keeps its limit.
        self.tablebases.probe_limit = int(option.value)  # type: ignore[arg-type]

    def _on_probe_depth(self, option: Option) -> None:
        # Read when a search starts, like the limit.
        self.tablebases.probe_depth = int(option.value)  # type: ignore[arg-type]

    def _use_tablebases(self, messages: list[str]) -> None:
        """Report what the tables' paths gave (bad paths included) and search with whatever opened."""
        for message in messages:
            self.out.info_string(message)
        self.searcher.tablebases = self.tablebases if self.tablebases.max_pieces else None
