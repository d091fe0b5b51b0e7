#!/usr/bin/env bash
# Builds the images greet-axum, greet-actix and greet-hyper (tag latest) without pulling
# anything: static release binaries built on this host, each copied into an empty image.
# Then: docker compose up --no-build (or docker-compose up --no-build).
set -euo pipefail
cd "$(dirname "$0")/.."

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
  cp docker/Dockerfile.offline "$context/Dockerfile"
  echo "== image $server:latest"
  # The legacy builder: the only one that works without a registry here.
  DOCKER_BUILDKIT=0 docker build --quiet --tag "$server:latest" "$context" >/dev/null
  rm -rf "$context"
  trap - EXIT
done
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E '^greet-(axum|actix|hyper):latest '
