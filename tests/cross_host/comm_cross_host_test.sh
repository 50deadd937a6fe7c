#!/usr/bin/env bash
# Collectives across hosts (issue 42, "collectives across hosts"): two ranks,
# each in its own network namespace joined by a veth pair, so Gloo crosses
# real addresses (10.213.0.1 and 10.213.0.2) instead of loopback.
#   1. Link down from the start: creating the communicator fails, which
#      proves the ranks' traffic crosses the link (negative control).
#   2. Link up: the ranks all-reduce in a loop; the link is cut while they do.
#      Every rank must fail with DEADLINE_EXCEEDED within the timeout (plus a
#      margin for process exit), and nothing hangs.
#   3. Link up again: a new communicator works.
# Needs root and iproute2 (CI runs as root). Without them the test skips
# (exit 77) saying why, unless BACKPLANE_EXPECT_NETNS=1 (CI sets it): then it
# fails.
# Usage: comm_cross_host_test.sh COMM_RANK_BIN CPU_PLUGIN_SO
set -u
rank_bin=$1 plugin=$2
timeout_ms=${BP_CROSS_HOST_TIMEOUT_MS:-3000}
margin_s=3
fail() { echo "FAIL: $*"; exit 1; }
skip() {
  [ "${BACKPLANE_EXPECT_NETNS:-0}" = 1 ] && fail "$* (BACKPLANE_EXPECT_NETNS=1 expects network namespaces)"
  echo "SKIP: $*"; exit 77
}
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip >/dev/null || skip "iproute2 (ip) is not installed"
a=bpxa$$ b=bpxb$$ va=vxa$$ vb=vxb$$
work=$(mktemp -d)
cleanup() {
  for p in $(jobs -p); do kill -9 "$p" 2>/dev/null; done
  ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$a" && ip netns add "$b" || skip "cannot create network namespaces here"
ip link add "$va" type veth peer name "$vb" || skip "cannot create a veth pair here"
ip link set "$va" netns "$a" && ip link set "$vb" netns "$b" &&
  ip -n "$a" addr add 10.213.0.1/24 dev "$va" && ip -n "$b" addr add 10.213.0.2/24 dev "$vb" &&
  ip -n "$a" link set lo up && ip -n "$b" link set lo up || fail "setting up the namespaces"
link() { ip -n "$a" link set "$va" "$1" && ip -n "$b" link set "$vb" "$1"; }

# start_ranks PHASE ITERS [TIMEOUT_MS]: rank 0 in namespace a, rank 1 in b,
# one store.
start_ranks() {
  local t=${3:-$timeout_ms}
  mkdir -m 700 "$work/$1"
  ip netns exec "$a" "$rank_bin" --plugin "$plugin" --store "$work/$1" --prefix "$1" --host 10.213.0.1 \
    --rank 0 --world 2 --iters "$2" --timeout-ms "$t" >"$work/$1.0" 2>&1 &
  pid0=$!
  ip netns exec "$b" "$rank_bin" --plugin "$plugin" --store "$work/$1" --prefix "$1" --host 10.213.0.2 \
    --rank 1 --world 2 --iters "$2" --timeout-ms "$t" >"$work/$1.1" 2>&1 &
  pid1=$!
}
# wait_ranks SECONDS: waits for both ranks (polling their exit, not a sleep
# that hopes they are done); sets rc0/rc1; fails if either outlives SECONDS.
wait_ranks() {
  local deadline=$(( $(date +%s%N) + $1 * 1000000000 ))
  while kill -0 "$pid0" 2>/dev/null || kill -0 "$pid1" 2>/dev/null; do
    if [ "$(date +%s%N)" -gt "$deadline" ]; then
      cat "$work"/*.[01]; fail "ranks still running after $1 s (a hang)"
    fi
    sleep 0.05
  done
  wait "$pid0"; rc0=$?
  wait "$pid1"; rc1=$?
}

echo "== 1. link down from the start: the communicator cannot form"
link down
start_ranks down 1 1000
wait_ranks 30
cat "$work/down.0" "$work/down.1"
[ $rc0 != 0 ] && [ $rc1 != 0 ] || fail "a rank joined with the link down: the traffic did not cross the link"

echo "== 2. link up, all-reduce in a loop, link cut mid-loop"
link up
start_ranks cut 1000000
deadline=$(( $(date +%s) + 60 ))
until grep -q '^ok 2$' "$work/cut.0" 2>/dev/null && grep -q '^ok 2$' "$work/cut.1" 2>/dev/null; do
  kill -0 "$pid0" 2>/dev/null && kill -0 "$pid1" 2>/dev/null || { cat "$work"/cut.*; fail "a rank ended before 3 calls"; }
  [ "$(date +%s)" -lt "$deadline" ] || { cat "$work"/cut.*; fail "no 3 all-reduces within 60 s"; }
  sleep 0.05
done
cut_ns=$(date +%s%N)
link down
wait_ranks $(( timeout_ms / 1000 + margin_s + 30 ))
elapsed_ms=$(( ($(date +%s%N) - cut_ns) / 1000000 ))
tail -n 2 "$work/cut.0" "$work/cut.1"
for r in 0 1; do
  grep -q '^failed [0-9]* DEADLINE_EXCEEDED' "$work/cut.$r" || fail "rank $r did not fail with DEADLINE_EXCEEDED"
  grep -q '^wrong' "$work/cut.$r" && fail "rank $r computed a wrong all-reduce"
done
[ $rc0 = 3 ] && [ $rc1 = 3 ] || fail "exit codes $rc0 $rc1, expected 3 3 (a failed call)"
echo "both ranks failed ${elapsed_ms} ms after the cut (timeout ${timeout_ms} ms)"
[ $elapsed_ms -le $(( timeout_ms + margin_s * 1000 )) ] ||
  fail "the ranks took ${elapsed_ms} ms, over the ${timeout_ms} ms timeout plus ${margin_s} s"

echo "== 3. link up again: a new communicator works"
link up
start_ranks again 3
wait_ranks $(( timeout_ms / 1000 + 30 ))
cat "$work/again.0" "$work/again.1"
[ $rc0 = 0 ] && [ $rc1 = 0 ] || fail "the new communicator failed (exit codes $rc0 $rc1)"
echo "cross-host collectives: joined across the link, failed within the timeout on a cut, recovered"
