#!/usr/bin/env bash
# A test bed for --swarm across nodes: N Docker engines on this host (3 by default), joined in
# one swarm, each in network, mount and UTS namespaces of its own, their links meeting on a
# bridge in a switch namespace. Nothing is added to the host's own network namespace,
# iptables or engine, and nothing leaves the host: the nodes have no default route.
#
#   docker/swarm-bed.sh up [N]          bring N engines up (N >= 3), the swarm, its labels
#   docker/swarm-bed.sh load IMAGE...   copy images from this host's engine to every node
#   docker/swarm-bed.sh run CMD...      run CMD beside the manager (its network namespace,
#                                       DOCKER_HOST at its engine): greet-bench --swarm ...
#   docker/swarm-bed.sh node I ARGS...  the docker CLI against node I's engine
#   docker/swarm-bed.sh status          the swarm's nodes, as the manager sees them
#   docker/swarm-bed.sh cut I           cut node I off the switch (a node lost, as the
#                                       others see it; its engine and tasks go on)
#   docker/swarm-bed.sh mend I          plug node I back in
#   docker/swarm-bed.sh down            remove everything, even after an up that failed halfway
#
# Roles, as node labels (greet.role): node1, the manager, where `run` runs, is a load node;
# node2 holds the server, node3 the stores; nodes 4 and up are load nodes too.
# Addresses, all in the benchmarking range 198.18.0.0/15: the switch 198.18.0.1 (a resolver
# that answers every name with NXDOMAIN, so a registry lookup fails at once instead of after
# seconds), node I at 198.18.0.(10+I), each engine's own networks from 198.18.64.0/18, the
# swarm's overlays from 198.19.0.0/16. The kernel may lack IPVS: the project's stacks use
# dnsrr endpoints and host-mode ports, which need none.
#
# Needs root, Docker 20.10+ (dockerd, docker), iproute2 (ip), util-linux (unshare, nsenter)
# and python3 (the resolver). State lives in $GREET_BED (default /var/lib/greet-bed).
set -Eeuo pipefail

BED=${GREET_BED:-/var/lib/greet-bed}
PREFIX=greet-bed
SWITCH=$PREFIX-sw
SWITCH_IP=198.18.0.1

say() { echo "swarm-bed: $*" >&2; }
die() { say "$*"; exit 1; }

node_ns() { echo "$PREFIX-n$1"; }
node_ip() { echo "198.18.0.$((10 + $1))"; }
node_sock() { echo "unix://$BED/node$1/docker.sock"; }
nodes_up() { ls -d "$BED"/node* 2>/dev/null | sed 's/.*node//' | sort -n; }
on() { local i=$1; shift; docker -H "$(node_sock "$i")" "$@"; }

needs() {
  [ "$(id -u)" = 0 ] || die "needs root (it makes namespaces and starts engines)"
  local missing=() cmd
  for cmd in dockerd docker ip unshare nsenter mount python3; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
  done
  [ ${#missing[@]} = 0 ] || die "missing: ${missing[*]} (Docker 20.10+, iproute2, util-linux, python3)"
}

# Answers every query with NXDOMAIN.
RESOLVER='
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("'$SWITCH_IP'", 53))
while True:
    q, peer = s.recvfrom(4096)
    if len(q) < 17:
        continue
    end = 12
    while end < len(q) and q[end]:
        end += 1 + q[end]
    end += 5
    flags = bytes([0x80 | (q[2] & 0x79), 0x83])
    s.sendto(q[:2] + flags + b"\x00\x01\x00\x00\x00\x00\x00\x00" + q[12:end], peer)
'

up() {
  local n=${1:-3}
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 3 ] && [ "$n" -le 9 ] || die "up N: N from 3 to 9, not '$n'"
  needs
  [ -e "$BED" ] && die "$BED exists: a bed is up, or an up failed; 'swarm-bed.sh down' first"
  ip netns list | grep -q "^$PREFIX-" && die "namespaces $PREFIX-* exist: 'swarm-bed.sh down' first"
  local driver
  driver=$(docker info --format '{{.Driver}}' 2>/dev/null) || die "this host's engine does not answer"
  mkdir -p "$BED"
  # However up fails (a command, or a check that gives up), what it made goes.
  trap 'status=$?; if [ "$status" != 0 ]; then say "up failed: removing what it made"; down; fi' EXIT
  local started=$SECONDS

  ip netns add "$SWITCH"
  ip -n "$SWITCH" link set lo up
  ip -n "$SWITCH" link add br0 type bridge
  ip -n "$SWITCH" addr add "$SWITCH_IP/24" dev br0
  ip -n "$SWITCH" link set br0 up
  setsid ip netns exec "$SWITCH" python3 -c "$RESOLVER" >"$BED/resolver.log" 2>&1 &
  echo $! >"$BED/resolver.pid"

  local i ns dir
  for i in $(seq 1 "$n"); do
    ns=$(node_ns "$i")
    dir=$BED/node$i
    mkdir -p "$dir/data" "$dir/exec"
    ip netns add "$ns"
    ip -n "$SWITCH" link add "n$i" type veth peer name eth0 netns "$ns"
    ip -n "$SWITCH" link set "n$i" master br0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$(node_ip "$i")/24" dev eth0
    ip -n "$ns" link set eth0 up
    echo "nameserver $SWITCH_IP" >"$dir/resolv.conf"
    cat >"$dir/daemon.json" <<EOF
{
  "storage-driver": "$driver",
  "default-address-pools": [{"base": "198.18.64.0/18", "size": 24}],
  "deprecated-key-path": "$dir/key.json",
  "log-driver": "json-file",
  "log-opts": {"max-size": "10m", "max-file": "2"}
}
EOF
    # Its own mount namespace: the resolver in place of the host's, no view of a system
    # containerd (so it starts its own), and its mounts gone with it.
    setsid nsenter --net="/run/netns/$ns" unshare --mount --uts --propagation private sh -c '
      hostname "node$1"
      mount --bind "$2/resolv.conf" /etc/resolv.conf
      if [ -d /run/containerd ]; then mount -t tmpfs tmpfs /run/containerd; fi
      exec dockerd --config-file "$2/daemon.json" --data-root "$2/data" --exec-root "$2/exec" \
        --pidfile "$2/docker.pid" -H "unix://$2/docker.sock" --cgroup-parent "$3"
    ' sh "$i" "$dir" "$ns" >"$dir/dockerd.log" 2>&1 &
    echo $! >"$dir/sh.pid"
  done
  for i in $(seq 1 "$n"); do
    local tries=0
    until on "$i" info >/dev/null 2>&1; do
      kill -0 "$(cat "$BED/node$i/sh.pid")" 2>/dev/null \
        || { tail -5 "$BED/node$i/dockerd.log" >&2; die "node$i's engine exited"; }
      tries=$((tries + 1))
      [ "$tries" -lt 300 ] || { tail -5 "$BED/node$i/dockerd.log" >&2; die "node$i's engine did not answer within 30 s"; }
      sleep 0.1
    done
  done

  on 1 swarm init --advertise-addr "$(node_ip 1)" --default-addr-pool 198.19.0.0/16 >/dev/null
  local token
  token=$(on 1 swarm join-token -q worker)
  for i in $(seq 2 "$n"); do
    on "$i" swarm join --advertise-addr "$(node_ip "$i")" --token "$token" "$(node_ip 1):2377" >/dev/null
  done
  for i in $(seq 1 "$n"); do
    local role=load
    [ "$i" = 2 ] && role=server
    [ "$i" = 3 ] && role=store
    on 1 node update --label-add "greet.role=$role" "node$i" >/dev/null
  done
  trap - EXIT
  say "$n nodes up in $((SECONDS - started)) s: node1 (manager, load), node2 (server), node3 (store)"
}

load() {
  [ $# -gt 0 ] || die "load IMAGE...: name the images to copy"
  [ -n "$(nodes_up)" ] || die "no bed is up: 'swarm-bed.sh up' first"
  local i
  for i in $(nodes_up); do
    docker save "$@" | on "$i" load -q >/dev/null || die "cannot load $* into node$i"
  done
  say "loaded into $(nodes_up | wc -l) nodes: $*"
}

run() {
  [ $# -gt 0 ] || die "run CMD...: name the command"
  [ -S "$BED/node1/docker.sock" ] || die "no bed is up: 'swarm-bed.sh up' first"
  exec nsenter --net="/run/netns/$(node_ns 1)" env DOCKER_HOST="$(node_sock 1)" "$@"
}

node() {
  [[ ${1:-} =~ ^[0-9]+$ ]] || die "node I ARGS...: I is a node's number"
  [ -S "$BED/node$1/docker.sock" ] || die "no node$1: 'swarm-bed.sh up' first"
  on "$@"
}

status() {
  [ -S "$BED/node1/docker.sock" ] || die "no bed is up"
  on 1 node ls --format '{{.Hostname}} {{.Status}} {{.Availability}} {{.ManagerStatus}}'
}

# Takes node $2's link on the switch $1 (down or up).
link() {
  [[ ${2:-} =~ ^[0-9]+$ ]] || die "cut|mend I: I is a node's number"
  [ -S "$BED/node$2/docker.sock" ] || die "no node$2: 'swarm-bed.sh up' first"
  ip -n "$SWITCH" link set "n$2" "$1"
}

# Stops what runs in namespace $1: TERM, up to $2 tenths of a second, then KILL.
stop_ns() {
  local ns=$1 tenths=$2 pids
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  [ -n "$pids" ] || return 0
  kill -TERM $pids 2>/dev/null || true
  for _ in $(seq 1 "$tenths"); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] || return 0
    sleep 0.1
  done
  kill -KILL $pids 2>/dev/null || true
  sleep 0.2
}

down() {
  needs
  local ns i dir
  for dir in "$BED"/node*; do
    [ -d "$dir" ] || continue
    i=${dir##*node}
    # The engine first, so it stops its containers and its containerd.
    if [ -f "$dir/docker.pid" ]; then
      kill -TERM "$(cat "$dir/docker.pid")" 2>/dev/null || true
    fi
  done
  for ns in $(ip netns list | awk '{print $1}' | grep "^$PREFIX-" || true); do
    stop_ns "$ns" 150
    ip netns del "$ns" 2>/dev/null || true
  done
  # A namespace's mounts go with its last process; anything a dying engine left is unmounted.
  { grep -o " $BED[^ ]*" /proc/mounts || true; } | sort -r | while read -r mnt; do
    umount -l "$mnt" 2>/dev/null || true
  done
  # Each engine's control groups, deepest first (cgroup v1: one tree per controller).
  find /sys/fs/cgroup -depth -type d -name "$PREFIX-n*" 2>/dev/null | while read -r top; do
    find "$top" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  rm -rf "$BED"
  local left
  left=$( (ip netns list | grep "^$PREFIX-"; find /sys/fs/cgroup -type d -name "$PREFIX-n*" 2>/dev/null; ls -d "$BED" 2>/dev/null) || true)
  [ -z "$left" ] || die "down left behind: $left"
  say "down: nothing left"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) down ;;
  load) shift; load "$@" ;;
  run) shift; run "$@" ;;
  node) shift; node "$@" ;;
  status) status ;;
  cut) link down "${2:-}"; say "node${2} cut off" ;;
  mend) link up "${2:-}"; say "node${2} plugged back in" ;;
  -h | --help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//' ;;
  "") say "a command: up, load, run, node, status, cut, mend or down (-h for help)"; exit 2 ;;
  *) say "unknown command '$1': up, load, run, node, status, cut, mend or down (-h for help)"; exit 2 ;;
esac
