#!/bin/bash
# Labelled positions, or match games, on a lent many-core machine that reaches no registry.
#
#   bash tools/device.sh prepare [OLD]             # here: pack what a run needs into .dev/ (git-ignored);
#                                                  # OLD: a commit to play against, unpacked into .dev/old
#   bash tools/device.sh aside                     # here, before the device call: data/nnue out of the tree
#   bash tools/device.sh run FIRST SECS            # there, in the repository root: play chunks from
#                                                  # index FIRST on for SECS seconds; $OUT/chunks.tar back
#   bash tools/device.sh match SECS MATCH-ARGS...  # there: `python -m tools.match MATCH-ARGS` on all cores
#                                                  # but one, stopped after SECS (the games in play finish,
#                                                  # within GRACE=120 s); its output in $OUT/match.log
#   bash tools/device.sh back                      # here, after the last device call
#   python -m training.merge data/nnue DIR...      # here, each returned tar unpacked into its own DIR
#
# Why a script: the machine has python3 with numpy and tqdm but neither
# python-chess nor Stockfish, and what travels is capped at 64 MiB, so the
# teacher goes xz-compressed (47 -> 22 MB), with Phalanx (an xboard engine
# of the CCRL gauntlet) beside it.  In a match the engines are named by
# their packed paths: "sf=.dev/stockfish", "phalanx=.dev/phalanx -b- -l-",
# "new=python3 -m uci_engine" (this tree), "old=env -C .dev/old python3 -m
# uci_engine".  The device's SIGINT goes to the runner alone, which lets
# the games in play finish (engines run in their own process group).
#
# `run` (labelled positions): FIRST keeps the run's chunk indices apart
# from the local generator's (training.datagen --first-chunk);
# the chunks are the same bytes wherever they are made.  The run ends by
# SIGINT at SECS; chunks finished after the generator's last provenance save
# come back as orphans, which training.merge skips.  The data itself never
# travels: no run needs any of it, and data/nnue alone is over 100 MB, so
# `aside` moves it next to the repository for the calls (stop the local
# generator first) and `back` returns it.  Device runs take play chunks from
# 14000 to 21999 (the local generator makes those below and from 22000 on);
# `aside` prints the first index free there.
set -u
cd "$(dirname "$0")/.." || exit 1
aside_dir="../$(basename "$PWD")-nnue-aside"  # beside this clone, named after it
device_first=14000 device_end=22000  # device play chunks: [device_first, device_end)
unpack() {  # there: the packed engines and python-chess ready to use
    export PYTHONPATH=$PWD/.dev/site PYTHONUNBUFFERED=1
    [ -x .dev/stockfish ] || { xz -dc .dev/stockfish.xz > .dev/stockfish && chmod +x .dev/stockfish; }
    python3 -c "import chess, numpy, tqdm; print('python-chess', chess.__version__, 'numpy', numpy.__version__)"
    echo quit | .dev/stockfish | head -1
}
case "${1:-}" in
prepare)
    mkdir -p .git/info .dev/site
    grep -qx "/.dev/" .git/info/exclude 2>/dev/null || echo "/.dev/" >> .git/info/exclude
    stockfish=$(command -v stockfish || echo /usr/games/stockfish)
    xz -T2 -6 -c "$stockfish" > .dev/stockfish.xz
    phalanx=$(command -v phalanx || echo /usr/games/phalanx)
    rm -f .dev/phalanx
    if [ -x "$phalanx" ]; then cp "$phalanx" .dev/phalanx; else echo "no phalanx here: packed without it"; fi
    python=python3
    [ -x .venv/bin/python ] && python=.venv/bin/python  # the one with python-chess
    "$python" - <<'EOF2'
import pathlib, shutil, chess
source = pathlib.Path(chess.__file__).parent
shutil.rmtree(".dev/site/chess", ignore_errors=True)
shutil.copytree(source, ".dev/site/chess", ignore=shutil.ignore_patterns("__pycache__"))
EOF2
    if [ -n "${2:-}" ]; then  # the engine's folders of that commit: what `python3 -m uci_engine` needs
        rm -rf .dev/old && mkdir -p .dev/old
        git archive "$2" uci_engine search eval opening_book | tar -x -C .dev/old || exit 1
    fi
    du -sh .dev
    ;;
aside)
    [ -e "$aside_dir" ] && { echo "$aside_dir exists: run 'back' first"; exit 1; }
    pgrep -f 'training\.(datagen|merge|verify|nnue)' > /dev/null && { echo "stop what reads data/nnue first"; exit 1; }
    last=$(ls data/nnue | sed -n 's/^play-\([0-9]*\)\..*/\1/p' | awk -v lo="$device_first" -v hi="$device_end" '$1 >= lo && $1 < hi' | sort -n | tail -1)
    mv data/nnue "$aside_dir" && echo "data/nnue -> $aside_dir"
    echo "first free device chunk: FIRST=$(( ${last:-$(( device_first - 1 ))} + 1 ))"
    echo "until 'back', git sees data/nnue as deleted: commit nothing (no commit -a, add -A or stash)"
    ;;
back)
    [ -e data/nnue ] && { echo "data/nnue exists: not moving $aside_dir over it"; exit 1; }
    mv "$aside_dir" data/nnue && echo "$aside_dir -> data/nnue"
    ;;
run)
    first=${2:?first chunk index}; secs=${3:?seconds}; workers=${4:-$(nproc)}
    unpack
    touch /tmp/device-datagen-start && sleep 1
    timeout -s INT "$secs" python3 -m training.datagen --out data/nnue --workers "$workers" --seed 1 \
        --stockfish "$PWD/.dev/stockfish" --play-chunks "$device_end" --chunk-games 10 --first-chunk "$first" --no-progress \
        2>&1 | grep -v -e '^  ' -e Traceback -e KeyboardInterrupt -e '^Process' -e '^During handling' -e '^$'
    sleep 3  # finished chunks are renamed into place atomically: a late worker adds whole files or none
    cd data/nnue && find . -newer /tmp/device-datagen-start -name 'play-*.psd.xz' > /tmp/device-datagen-list
    echo "$(wc -l < /tmp/device-datagen-list) chunk files"
    tar cf "$OUT/chunks.tar" -T /tmp/device-datagen-list provenance.json
    ;;
match)
    secs=${2:?seconds}; shift 2
    : "${OUT:?run on the device: \$OUT is where the log goes}"
    set -o pipefail  # the runner's status, not tee's
    unpack
    # SIGINT at SECS lets the games in play finish; a runner still going
    # GRACE seconds later is killed, summary and all (raise it beyond 10+0.1).
    timeout --foreground -s INT -k "${GRACE:-120}" "$secs" \
        python3 -m tools.match --concurrency $(( $(nproc) > 1 ? $(nproc) - 1 : 1 )) "$@" 2>&1 | tee "$OUT/match.log"
    ;;
*)
    awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 2
    ;;
esac
