#!/usr/bin/env bash
# Builds the images compose.yaml runs without pulling anything:
# - greet-axum, greet-actix and greet-hyper (tag latest): static release binaries built on
#   this host, each copied into an empty image; greet-agent:latest the same, the load agent
#   (crates/greet-load: no server, no store client) for swarm jobs and Kubernetes Jobs;
# - postgres:15 and redis:7, stand-ins for the official images built from Debian's packages
#   (mmdebstrap of a minimal Debian with PostgreSQL 15 and Redis 7, imported once as
#   greet-debian-stores:latest; docker/stores/ has their entrypoint and Dockerfiles). Where
#   an image of that name exists already (pulled, or built before) it is kept: --stores
#   rebuilds them.
# Then: docker compose up --no-build (or docker-compose up --no-build).
set -euo pipefail
cd "$(dirname "$0")/.."

rebuild_stores=0
[ "${1:-}" = --stores ] && rebuild_stores=1

build_stores() {
  if [ "$rebuild_stores" = 0 ] && docker image inspect postgres:15 redis:7 >/dev/null 2>&1; then
    echo "== postgres:15 and redis:7 present (--stores rebuilds them)"
    return
  fi
  if ! command -v mmdebstrap >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q mmdebstrap >/dev/null || { apt-get update -qq && apt-get install -y -q mmdebstrap >/dev/null; }
  fi
  local work
  work=$(mktemp -d)
  echo "== greet-debian-stores:latest (mmdebstrap: Debian bookworm, PostgreSQL 15, Redis 7)"
  mmdebstrap --quiet --variant=apt --include=postgresql-15,redis-server bookworm "$work/rootfs.tar"
  docker import "$work/rootfs.tar" greet-debian-stores:latest >/dev/null
  rm -rf "$work"
  for store in postgres:15 redis:7; do
    echo "== image $store (stand-in)"
    DOCKER_BUILDKIT=0 docker build --quiet --tag "$store" \
      -f "docker/stores/Dockerfile.${store%%:*}" docker/stores >/dev/null
  done
}

servers=(greet-axum greet-actix greet-hyper)
target=x86_64-unknown-linux-gnu

packages=()
for server in "${servers[@]}"; do packages+=(-p "$server"); done
echo "== static release binaries ($target)"
RUSTFLAGS='-C target-feature=+crt-static' \
  cargo build --release --locked --target "$target" "${packages[@]}"

for server in "${servers[@]}"; do
  context=$(mktemp -d)
  trap 'rm -rf "$context"' EXIT
  cp "target/$target/release/$server" "$context/server"
  # An empty image has no /tmp: the embedded store's default database file goes there.
  mkdir -m 1777 "$context/tmp"
  cp docker/Dockerfile.offline "$context/Dockerfile"
  echo "== image $server:latest"
  # The legacy builder: the only one that works without a registry here.
  DOCKER_BUILDKIT=0 docker build --quiet --tag "$server:latest" "$context" >/dev/null
  rm -rf "$context"
  trap - EXIT
done
# The load agent, for agents and watch tasks on a cluster.
RUSTFLAGS='-C target-feature=+crt-static' \
  cargo build --release --locked --target "$target" -p greet-load --bin greet-agent
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "target/$target/release/greet-agent" "$context/greet-agent"
cp docker/Dockerfile.agent "$context/Dockerfile"
echo "== image greet-agent:latest"
DOCKER_BUILDKIT=0 docker build --quiet --tag greet-agent:latest "$context" >/dev/null
rm -rf "$context"
trap - EXIT
build_stores
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' \
  | grep -E '^(greet-(axum|actix|hyper|agent):latest|postgres:15|redis:7) '
