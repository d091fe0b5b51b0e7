#!/usr/bin/env bash
# Whether a cost gate catches what it claims to: greet-hyper built with work added on purpose to
# every greeting (greet-core's `seeded-cost` feature: GREET_SEEDED_COST rounds of a loop), its
# `greetings` cell counted against a baseline of the same binary with none added, and held to
# `instructions<1.01x`, RUNS times each with no work added, about 1% and about 2% (the rounds
# that make them are counted first). Prints, for each, how many runs breached the gate and each
# run's instructions over the baseline's.
#
#   benches/scripts/seeded-cost.sh                   # 20 runs each, the default N of 1024
#   RUNS=5 SIZE=--quick benches/scripts/seeded-cost.sh
#
# Needs valgrind and perf (as cost does). Leaves target/release/greet-hyper built as shipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
runs=${RUNS:-20}
size=${SIZE:-}
gate='hyper:instructions<1.01x'

cargo build --release --locked -q -p greet-bench -p greet-floor
cargo build --release --locked -q -p greet-hyper --features greet-core/seeded-cost
work=$(mktemp -d)
trap 'cd "$root"; rm -rf "$work"; cargo build --release --locked -q -p greet-hyper' EXIT
mkdir "$work/bin"
cp target/release/greet-hyper target/release/greet-floor "$work/bin"
cd "$work" # baselines are written under the working directory

# `cost` of greet-hyper's greetings cell with `rounds` added, then any further flags.
cost() {
  local rounds=$1
  shift
  GREET_SEEDED_COST=$rounds "$root/target/release/greet-bench" cost --quiet --servers hyper \
    --cells greetings --bin-dir "$work/bin" $size "$@"
}
# Instructions a request in the run written to `dir`.
instructions() {
  python3 -c 'import json,sys
c = json.load(open(sys.argv[1] + "/results.json"))["cost"]["cells"]
print(next(x for x in c if x["server"] == "greet-hyper")["runs"][0]["instructions"])' "$1"
}

cost 0 --out "$work/none" >/dev/null
cost 100 --out "$work/hundred" >/dev/null
base=$(instructions "$work/none")
round=$(python3 -c "print(($(instructions "$work/hundred") - $base) / 100)")
if python3 -c "import sys; sys.exit(float('$round') > 0)"; then
  echo "a round of added work counted no instructions: is greet-core's seeded-cost feature on?"
  exit 1
fi
echo "greet-hyper greetings: $base instructions a request, $round a round of added work"
cost 0 --save-baseline seeded --out "$work/baseline" >/dev/null
old=$(instructions "$work/baseline")

for share in 0 1 2; do
  rounds=$(python3 -c "print(round($share / 100 * $base / $round))")
  breached=0
  ratios=()
  for i in $(seq "$runs"); do
    rc=0
    said=$(cost "$rounds" --baseline seeded --threshold "$gate" --out "$work/run" 2>&1) || rc=$?
    case $rc in
      0) ;;
      3) breached=$((breached + 1)) ;;
      *) echo "$said"; echo "run $i at $share% failed (exit $rc)"; exit 1 ;;
    esac
    ratios+=("$(python3 -c "print(f'{$(instructions "$work/run") / $old:.4f}')")")
  done
  added=$(python3 -c "print(f'{$rounds * $round / $base * 100:.2f}')")
  echo "added ${added}% ($rounds rounds): $breached of $runs breached $gate; NEW/OLD: ${ratios[*]}"
done
