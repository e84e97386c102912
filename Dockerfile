# agentbot: a static binary on a distroless base, running as a non-root user.
#
#   docker build -t agentbot .
#   docker run --rm --env-file agentbot.env -v agentbot-data:/data agentbot          # serve
#   docker run --rm --env-file agentbot.env -v agentbot-data:/data agentbot check    # validate the setup
#
# Settings come from the environment (agentbot serve -h lists them). The sample
# bundles ship in /bundles; mount your own over it, or point AGENTBOT_BUNDLES or
# AGENTBOT_BMAD_ROOT elsewhere. Sessions and agentbot.db live in the /data volume.
#
# /healthz and /metrics listen on 127.0.0.1:8080 inside the container, for
# the HEALTHCHECK (`agentbot health`: distroless has no curl); nothing is
# exposed. To scrape /metrics from outside, set AGENTBOT_HTTP_ADDR=:8080 and
# publish the port (docker run -p 127.0.0.1:8080:8080 ...).
#
# The version is stamped in: docker build --build-arg VERSION=v1.2.0 .
# .ci/run runs the build command below and fails when this line changes
# without it: keep the RUN line of `go build` as is, or change both.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/agentbot ./cmd/agentbot
# The data folder, created here because the final image has no shell.
RUN mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/agentbot /usr/local/bin/agentbot
COPY bundles /bundles
COPY --from=build --chown=65532:65532 /out/data /data
# AGENTBOT_DATA names the volume: without it the data folder would be the
# user's state folder (~/.local/state/agentbot), outside the volume.
ENV AGENTBOT_DATA=/data AGENTBOT_BUNDLES=/bundles AGENTBOT_HTTP_ADDR=127.0.0.1:8080
VOLUME ["/data"]
USER 65532:65532
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 CMD ["agentbot", "health"]
ENTRYPOINT ["agentbot"]
CMD ["serve"]
