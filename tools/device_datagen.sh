#!/bin/bash
# Labelled positions on a lent many-core machine that reaches no registry.
#
#   bash tools/device_datagen.sh prepare          # here: pack what the run needs into .dev/ (git-ignored)
#   bash tools/device_datagen.sh aside            # here, before the device call: data/nnue out of the tree
#   bash tools/device_datagen.sh run FIRST SECS   # there, in the repository root: play chunks from
#                                                 # index FIRST on for SECS seconds; $OUT/chunks.tar back
#   bash tools/device_datagen.sh back             # here, after the last device call
#   python -m training.merge data/nnue DIR...     # here, each returned tar unpacked into its own DIR
#
# Why a script: the machine has python3 with numpy and tqdm but neither
# python-chess nor Stockfish, and what travels is capped at 64 MiB, so the
# teacher goes xz-compressed (47 -> 22 MB).  FIRST keeps the run's chunk
# indices apart from the local generator's (training.datagen --first-chunk);
# the chunks are the same bytes wherever they are made.  The run ends by
# SIGINT at SECS; chunks finished after the generator's last provenance save
# come back as orphans, which training.merge skips.  The data itself never
# travels: the run needs none of it, and data/nnue alone is over 40 MB, so
# `aside` moves it next to the repository for the calls (stop the local
# generator first) and `back` returns it.  Device runs take play chunks from
# 14000 to 21999 (the local generator makes those below and from 22000 on);
# `aside` prints the first index free there.
set -u
cd "$(dirname "$0")/.." || exit 1
aside_dir="../$(basename "$PWD")-nnue-aside"  # beside this clone, named after it
device_first=14000 device_end=22000  # device play chunks: [device_first, device_end)
case "${1:-}" in
prepare)
    mkdir -p .git/info .dev/site
    grep -qx "/.dev/" .git/info/exclude 2>/dev/null || echo "/.dev/" >> .git/info/exclude
    stockfish=$(command -v stockfish || echo /usr/games/stockfish)
    xz -T2 -6 -c "$stockfish" > .dev/stockfish.xz
    python=python3
    [ -x .venv/bin/python ] && python=.venv/bin/python  # the one with python-chess
    "$python" - <<'EOF'
import pathlib, shutil, chess
source = pathlib.Path(chess.__file__).parent
shutil.rmtree(".dev/site/chess", ignore_errors=True)
shutil.copytree(source, ".dev/site/chess", ignore=shutil.ignore_patterns("__pycache__"))
EOF
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
    export PYTHONPATH=$PWD/.dev/site PYTHONUNBUFFERED=1
    [ -x .dev/stockfish ] || { xz -dc .dev/stockfish.xz > .dev/stockfish && chmod +x .dev/stockfish; }
    python3 -c "import chess, numpy, tqdm; print('python-chess', chess.__version__, 'numpy', numpy.__version__)"
    echo quit | .dev/stockfish | head -1
    touch /tmp/device-datagen-start && sleep 1
    timeout -s INT "$secs" python3 -m training.datagen --out data/nnue --workers "$workers" --seed 1 \
        --stockfish "$PWD/.dev/stockfish" --play-chunks "$device_end" --chunk-games 10 --first-chunk "$first" --no-progress \
        2>&1 | grep -v -e '^  ' -e Traceback -e KeyboardInterrupt -e '^Process' -e '^During handling' -e '^$'
    sleep 3  # finished chunks are renamed into place atomically: a late worker adds whole files or none
    cd data/nnue && find . -newer /tmp/device-datagen-start -name 'play-*.psd.xz' > /tmp/device-datagen-list
    echo "$(wc -l < /tmp/device-datagen-list) chunk files"
    tar cf "$OUT/chunks.tar" -T /tmp/device-datagen-list provenance.json
    ;;
*)
    awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 2
    ;;
esac
