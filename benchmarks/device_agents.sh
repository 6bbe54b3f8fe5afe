#!/usr/bin/env bash
# Issue 5 agent runs for a many-core machine (run once on a 16-core device machine, 2026-11-29; any Linux box with
# the package installed works, --jobs sets the processes): the common deals of seed 2024.
#   english   expectimax and search, English, 2,000 deals
#   american  search, American, 2,000 deals (the compiled backend; compare 124.59 from the numpy backend)
#   ply3      expectimax and search:ply=3, American, the first 1,500 deals
# Usage: bash benchmarks/device_agents.sh OUT_DIR JOBS [RUN ...]   (OUT_DIR default runs/agent_runs;
#        PACK=DIR: also a .tgz of each run there; LIMIT=SECONDS: a time limit per run; GAMES=N: deals per run
#        instead of 2,000, or 1,500 for ply3; PYTHON=EXE: the interpreter, default python3; exits 1 if a run failed)
set -u
out=${1:-runs/agent_runs}; jobs=${2:-16}; shift $(( $# < 2 ? $# : 2 ))
runs=("$@"); [ ${#runs[@]} -eq 0 ] && runs=(english american ply3)
# everything checked before the first run (and before OUT_DIR is made): a misspelt last name is not found hours later
if ! [[ $jobs =~ ^[0-9]+$ ]] || (( 10#$jobs < 1 )); then
  echo "JOBS $jobs: expected a positive integer (processes; nothing run)" >&2; exit 2
fi
for r in "${runs[@]}"; do
  case $r in
    english|american|ply3) ;;
    *) echo "unknown run $r: expected english, american or ply3 (nothing run)" >&2; exit 2 ;;
  esac
done
for var in GAMES LIMIT; do
  value=${!var:-}
  if [ -n "$value" ] && { ! [[ $value =~ ^[0-9]+$ ]] || (( 10#$value < 1 )); }; then
    echo "$var=$value: expected a positive integer (nothing run)" >&2; exit 2
  fi
done
if [ -n "${PACK:-}" ] && ! [ -d "$PACK" -a -w "$PACK" ]; then
  echo "PACK=$PACK: expected a folder that exists and can be written (nothing run)" >&2; exit 2
fi
mkdir -p "$out"
failed=0
py=${PYTHON:-python3}
run() {  # name, scoring, games, agents...
  local name=$1 scoring=$2 games=$3; shift 3
  local args=(); for a in "$@"; do args+=(--agent "$a"); done
  timeout "${LIMIT:-3600}" $py -m pokersquares_env.cli evaluate "${args[@]}" --games "$games" --seed 2024 \
    --scoring "$scoring" --jobs "$jobs" --no-progress --out "$out/$name" > "$out/$name.md" 2> "$out/$name.err"
  local rc=$?
  echo "$name rc=$rc $(date +%T)"; tail -n 12 "$out/$name.md"
  if [ "$rc" -ne 0 ]; then failed=1; tail -n 5 "$out/$name.err" >&2; fi
  if [ -n "${PACK:-}" ]; then tar czf "$PACK/$name.tgz" -C "$out" "$name" "$name.md" "$name.err" || failed=1; fi
}
for r in "${runs[@]}"; do
  case $r in
    english) run english english "${GAMES:-2000}" expectimax search ;;
    american) run american american "${GAMES:-2000}" search ;;
    ply3) run ply3 american "${GAMES:-1500}" expectimax search:ply=3 ;;
    *) echo "unknown run $r: expected english, american or ply3" >&2; exit 2 ;;
  esac
done
exit $failed  # non-zero when any run failed (or timed out: rc 124)
