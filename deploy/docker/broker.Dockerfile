# signoff/broker: the approval broker, one static binary in an empty image.
#
# Built by scripts/build-images.sh (`make images`) from the context
# deploy/build/broker/, which holds the binary built on the host with
# CGO_ENABLED=0 -trimpath and the host's CA bundle (for rediss:// and NATS
# over TLS). Nothing is pulled: the image starts FROM scratch.
FROM scratch
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY broker /usr/local/bin/broker
# Flags beat the environment: --http overrides this. Inside a container the
# binary's default (127.0.0.1:8080) would hide /healthz, /readyz and
# /metrics from probes and scrapers.
ENV SIGNOFF_HTTP=0.0.0.0:8080
# The broker keeps no files: any non-root user will do. A numeric id lets
# Kubernetes check runAsNonRoot without an /etc/passwd.
USER 65532:65532
EXPOSE 8080
# `broker health` GETs /readyz on SIGNOFF_HTTP (a flag --http given to the
# container does not reach it: pass the same address with --url).
HEALTHCHECK --interval=5s --timeout=3s --start-period=15s --retries=3 CMD ["/usr/local/bin/broker", "health"]
ENTRYPOINT ["/usr/local/bin/broker"]
