# syntax=docker/dockerfile:1
# Multi-stage: build a static binary with the Go toolchain, ship it alone
# on scratch (with CA certificates for webhook pushes over HTTPS).

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/mqgate ./cmd/mqgate \
 && mkdir -p /out/data && chown 65532:65532 /out/data

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/mqgate /mqgate
COPY --from=build --chown=65532:65532 /out/data /data
# Non-root (the conventional "nonroot" uid/gid); /data is owned by it.
USER 65532:65532
# Every interface, so that `docker run -p` reaches the server. A listener
# beyond loopback starts only with MQGATE_API_KEYS or an explicit
# MQGATE_INSECURE_OPEN=true (docs/security.md): the image opens nothing
# by itself.
ENV MQGATE_ADDR=:8080 \
    MQGATE_DATA=/data \
    MQGATE_LOG_FORMAT=json
VOLUME /data
EXPOSE 8080
# scratch has no curl: the binary checks its own /healthz, over HTTPS when
# MQGATE_TLS_CERT is set (give TLS as MQGATE_TLS_CERT / MQGATE_TLS_KEY, not
# as flags, so the check sees it). The Helm chart (deploy/helm/mqgate) runs
# this image as it is: uid/gid 65532, MQGATE_DATA=/data, port 8080.
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 CMD ["/mqgate", "healthcheck"]
ENTRYPOINT ["/mqgate"]
CMD ["serve"]
