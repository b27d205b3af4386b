# syntax=docker/dockerfile:1

# ---- build ------------------------------------------------------------------
FROM golang:1.26 AS build
WORKDIR /src
ENV CGO_ENABLED=0
COPY . .
# Generated templ code and assets/ are committed, so no generate/npm step here.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags='-s -w' -o /tribunal . \
 && mkdir -p /data

# ---- run --------------------------------------------------------------------
# distroless/static: CA certificates + tzdata, no shell; runs as uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /tribunal /tribunal
# Owned by the nonroot user so a fresh named volume on /data is writable.
COPY --from=build --chown=65532:65532 /data /data
# Listening on every interface needs a token, passed at run time and never
# baked into the image: docker run -e TRIBUNAL_AUTH_TOKEN=$(openssl rand -hex 32) …
# (the server refuses to start without one; see README "Security").
ENV TRIBUNAL_ADDR=0.0.0.0:8080 \
    TRIBUNAL_DATA_DIR=/data
EXPOSE 8080
VOLUME /data
ENTRYPOINT ["/tribunal"]
