# The conventional build, for machines that can pull images. One Dockerfile for the three
# servers:
#
#   docker build --build-arg SERVER=greet-axum -t greet-axum .
#
# Where no registry is reachable, docker/build-offline.sh builds the same images from
# binaries built on the host.
ARG SERVER=greet-axum

FROM rust:1-bookworm AS build
ARG SERVER
WORKDIR /src
COPY . .
# A static binary runs in an empty image; --target keeps proc-macros buildable.
RUN RUSTFLAGS='-C target-feature=+crt-static' \
    cargo build --release --locked --target x86_64-unknown-linux-gnu -p "$SERVER" \
 && cp "target/x86_64-unknown-linux-gnu/release/$SERVER" /server \
 && mkdir -m 1777 /empty-tmp

FROM scratch
COPY --from=build /server /server
# The embedded store's database file goes under /tmp, which an empty image lacks.
COPY --from=build --chown=65534:65534 /empty-tmp /tmp
USER 65534:65534
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
HEALTHCHECK --interval=1s --timeout=2s --retries=3 CMD ["/server", "--health-check"]
ENTRYPOINT ["/server"]
