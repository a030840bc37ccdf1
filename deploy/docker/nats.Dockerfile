# signoff/nats: nats-server at the version pinned in go.mod, built on the
# host with CGO_ENABLED=0 -trimpath (`go build github.com/nats-io/nats-server/v2`),
# in an empty image. Any command line replaces CMD: pass a config file
# (-c FILE) or flags, as with the official nats image.
#
# Built by scripts/build-images.sh from deploy/build/nats/.
FROM scratch
COPY nats-server /usr/local/bin/nats-server
# The healthcheck (deploy/docker/healthcheck): GET /healthz?js-enabled-only=true
# on the monitoring port 8222. The image has no shell to run curl in.
COPY signoff-healthcheck /usr/local/bin/signoff-healthcheck
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 CMD ["/usr/local/bin/signoff-healthcheck"]
# JetStream's store: mount a volume here. The directory belongs to the
# image's user, and Docker copies that ownership into a new named volume.
COPY --chown=65532:65532 data /data
USER 65532:65532
WORKDIR /data
# clients, cluster routes, monitoring (/healthz, /varz)
EXPOSE 4222 6222 8222
ENTRYPOINT ["/usr/local/bin/nats-server"]
CMD ["--jetstream", "--store_dir", "/data/jetstream", "--http_port", "8222"]
