#!/usr/bin/env bash
# The crash loop (docs/reliability.md): trains a small real experiment (a Fashion-MNIST slice, an
# evaluation every 10 steps, a checkpoint every 7 and at the end) into one run store, over and over,
# and kills the run process with SIGKILL at N random moments of its life: a delay drawn uniformly
# from 0 to the length of an uninterrupted run, so the kills fall on start-up, opening the
# store, loading data, training steps, evaluations, commits and checkpoints in proportion to the time
# each takes; one kill in ten then waits for the inside of a store commit, one for a checkpoint
# write. Half the runs warm-start from the checkpoint the last run left. After every run,
# killed or not, tests/crashloop (test_crashcheck) checks the store and the checkpoint:
#   * PRAGMA integrity_check is ok and no foreign key dangles;
#   * every run is completed or interrupted, as the product lists it (RunStore::listRuns marks a
#     dead writer's run interrupted) and as the file then stores it (status, ended_at, steps);
#   * steps are contiguous from the first, evaluations and per-step rows only at recorded steps,
#     and no run checked before has lost or changed anything;
#   * the checkpoint is the one seen before, byte for byte, or a whole new one (every CRC valid) of
#     the run just made; nothing else lies next to the store or the checkpoint but the temporary
#     files of killed checkpoint writers (counted).
# At the end one more run must complete, and `trainbench-cli runs` must list no run as running.
# Prints a summary (kills and the phase each hit, violations with details) and exits 1 on any
# violation.
#
# Usage: scripts/crash-loop.sh N
# Environment: TRAINBENCH_CLI, TRAINBENCH_CRASHCHECK (the binaries; default: the release build's),
# CRASH_LOOP_SEED (the random seed; printed, so a loop can be repeated), CRASH_LOOP_KEEP=1 (keep the
# work folder, which holds the store, the checkpoint and every run's output).
set -uo pipefail
cd "$(dirname "$0")/.."
kills_wanted="${1:?usage: scripts/crash-loop.sh N}"
cli="${TRAINBENCH_CLI:-build/release/app/trainbench-cli}"
check="${TRAINBENCH_CRASHCHECK:-build/release/tests/test_crashcheck}"
for exe in "$cli" "$check"; do
  [[ -x "$exe" ]] || { echo "crash-loop: $exe is missing; build the release preset first" >&2; exit 2; }
done
seed="${CRASH_LOOP_SEED:-$(date +%s)}"
RANDOM=$seed
work=$(mktemp -d "${TMPDIR:-/tmp}/trainbench-crash.XXXXXX")
db="$work/store/runs.db"
ckpt="$work/checkpoints/model.ckpt"
state="$work/state"
every=7
mkdir -p "$work/store" "$work/checkpoints" "$work/logs"
run_args=(run experiments/fmnist-mlp.json --db "$db" --set name=crash-loop
  --set data.train_limit=3000 --set data.test_limit=2000 --set train.batch_size=64 --set train.epochs=2
  --set train.threads=1 --set train.eval_every_steps=10 --set train.checkpoint_every_steps=$every
  --set train.checkpoint_at_end=true --set "train.checkpoint_path=$ckpt")

violations=()
phases=()
kills=0 natural=0 warm=0 attempt=0 last_ms=0 ended_itself=0
started=$(date +%s)

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# Whether process $1, a child of this shell, still runs (a zombie has ended). Reads /proc with
# builtins only: it is called every 10 ms.
running() {
  local key value rest
  [[ -r /proc/$1/status ]] || return 1
  while read -r key value rest; do
    if [[ "$key" == State: ]]; then [[ "$value" != Z && "$value" != X ]]; return; fi
  done <"/proc/$1/status" 2>/dev/null
  return 1
}

# One run: started, killed after $1 ms (or left to finish when $1 is empty) or at the first moment
# after it inside what $2 names (store-commit, checkpoint), then checked.
one_run() {
  local delay_ms="$1" aim="${2:-anything}" log="$work/logs/$attempt" extra=() probe="" pid rc t0 out phase
  if [[ -f "$ckpt" ]] && (( RANDOM % 2 )); then
    extra=(--set "train.warm_start.checkpoint=$ckpt" --set "train.warm_start.optimizer=$( ((RANDOM % 2)) && echo carry || echo fresh)")
    warm=$((warm + 1))
  fi
  t0=$(now_ms)
  "$cli" "${run_args[@]}" "${extra[@]}" >"$log.out" 2>"$log.err" </dev/null &
  pid=$!
  if [[ -n "$delay_ms" ]]; then
    # Waits for the moment while watching the run: one that ends first ends the wait, so that its
    # length below is its own and not the delay (the delays are drawn from those lengths).
    while running "$pid" && (( $(now_ms) - t0 < delay_ms )); do sleep 0.01; done
    # Kills only its own child: pids are reused (pid_max may be 32768).
    if running "$pid" && [[ "$(awk '/^PPid:/ {print $2}' "/proc/$pid/status" 2>/dev/null)" == "$$" ]]; then
      probe=$("$check" kill "$pid" --db "$db" --checkpoint "$ckpt" --aim "$aim")
    else
      probe=exited
    fi
  fi
  wait "$pid" 2>/dev/null  # (no "Killed" notice from the shell)
  rc=$?
  last_ms=$(( $(now_ms) - t0 ))
  ended_itself=0
  if [[ -z "$probe" || "$probe" == exited ]]; then
    ended_itself=1
    natural=$((natural + 1))
    if [[ $rc -ne 0 ]]; then
      violations+=("attempt $attempt: the run ended by itself with exit code $rc: $(tail -3 "$log.err" | tr '\n' ' ')")
    fi
    out=$("$check" check --db "$db" --checkpoint "$ckpt" --every $every --state "$state")
  else
    kills=$((kills + 1))
    out=$("$check" check --db "$db" --checkpoint "$ckpt" --every $every --state "$state" \
      --killed "$pid" --probe "$probe" --log "$log.err")
    phase=$(sed -n 's/^phase: //p' <<<"$out")
    if [[ "$aim" != anything ]]; then phase="$phase (aimed at $aim)"; fi
    phases+=("$phase")
    echo "kill $kills at ${delay_ms} ms: $phase (probe $probe); $(sed -n 's/^checkpoint: //p' <<<"$out" | cut -c1-40)" >&2
  fi
  while IFS= read -r line; do
    violations+=("attempt $attempt (pid $pid, delay ${delay_ms:-none} ms, probe ${probe:-none}): ${line#VIOLATION: }")
    echo "  $line" >&2
  done < <(grep '^VIOLATION' <<<"$out")
  sed -n 's/^leftover_temp_files: //p' <<<"$out" >"$work/leftovers"
  sed -n 's/^time_of_completed_runs: //p' <<<"$out" >"$work/time"
}

echo "crash loop: $kills_wanted kills, seed $seed, work folder $work" >&2
# The first run is killed early, while it creates the store; the second runs whole and sets the
# length the delays are drawn from: the shortest of the last three runs that ended by themselves
# (the first of them measures the machine's roofs, and the machine's load varies).
attempt=1; one_run $((RANDOM % 1500))
attempt=2; one_run ""
lengths=("$last_ms")
length_ms=$last_ms
echo "an uninterrupted run takes $length_ms ms" >&2
while (( kills < kills_wanted && attempt < 3 * kills_wanted + 10 )); do
  attempt=$((attempt + 1))
  # One kill in ten waits for a store commit, one for a checkpoint write: random moments seldom
  # fall inside a commit (it takes a millisecond).
  case $(( (kills + 1) % 10 )) in
    5) aim=store-commit ;;
    0) aim=checkpoint ;;
    *) aim=anything ;;
  esac
  one_run $(( (RANDOM * 32768 + RANDOM) % (length_ms + 1) )) "$aim"
  if (( ended_itself )); then
    lengths=("${lengths[@]: -2}" "$last_ms")
    length_ms=$(printf '%s\n' "${lengths[@]}" | sort -n | head -1)
  fi
done
# After all that, a run must still work from the same store and checkpoint folder.
attempt=$((attempt + 1)); one_run ""
if "$cli" runs --db "$db" -n 100000 >"$work/logs/runs.txt" 2>&1; then
  if grep -qw running "$work/logs/runs.txt"; then
    violations+=("trainbench-cli runs lists runs as running after every writer died: $(grep -w running "$work/logs/runs.txt" | head -3)")
  fi
else
  violations+=("trainbench-cli runs failed: $(tail -3 "$work/logs/runs.txt")")
fi

elapsed=$(( $(date +%s) - started ))
echo
echo "crash loop summary (seed $seed)"
echo "  kills: $kills of $kills_wanted wanted; runs that ended by themselves: $natural; warm starts: $warm; wall time: ${elapsed} s"
echo "  phase the kills hit (\"training\" is steps and evaluations; the runs that completed spent $(cat "$work/time" 2>/dev/null)):"
printf '%s\n' "${phases[@]}" | sort | uniq -c | sort -rn | sed 's/^/    /'
echo "  runs in the store: $("$cli" runs --db "$db" -n 100000 2>/dev/null | grep -cw -e completed -e interrupted)"
echo "  checkpoint temporary files left by killed writers: $(cat "$work/leftovers" 2>/dev/null)"
if (( kills < kills_wanted )); then
  violations+=("only $kills kills in $attempt attempts: the runs ended before the delays")
fi
if [[ ${#violations[@]} -gt 0 ]]; then
  echo "  VIOLATIONS: ${#violations[@]}"
  printf '    %s\n' "${violations[@]}"
  echo "  work folder kept: $work"
  exit 1
fi
echo "  violations: none"
if [[ "${CRASH_LOOP_KEEP:-0}" == 1 ]]; then echo "  work folder kept: $work"; else rm -rf "$work"; fi
