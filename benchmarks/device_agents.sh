#!/usr/bin/env bash
# Issue 5 agent runs on a many-core machine (used once on a 16-core device machine; any Linux box with the
# package installed works): the strongest agents on the 2,000 common deals of seed 2024, American then English.
# Usage: bash benchmarks/device_agents.sh OUT_DIR JOBS   (PACK=DIR: also a .tgz of each run there)
set -u
out=${1:-agent_runs}; jobs=${2:-16}
mkdir -p "$out"
py=${PYTHON:-python3}
run() {  # name, scoring, timeout, agents...
  local name=$1 scoring=$2 limit=$3; shift 3
  local args=(); for a in "$@"; do args+=(--agent "$a"); done
  timeout "$limit" $py -m pokersquares_env.cli evaluate "${args[@]}" --games "${GAMES:-2000}" --seed 2024 --scoring "$scoring" \
    --jobs "$jobs" --no-progress --out "$out/$name" > "$out/$name.md" 2> "$out/$name.err"
  echo "$name rc=$? $(date +%T)"; tail -n 12 "$out/$name.md"
  [ -n "${PACK:-}" ] && tar czf "$PACK/$name.tgz" -C "$out" "$name" "$name.md" "$name.err"
}
run american american "${AM_LIMIT:-300}" expectimax search search:ply=3
run english english "${EN_LIMIT:-150}" expectimax search
