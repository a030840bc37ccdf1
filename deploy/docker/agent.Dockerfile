# signoff/agent: loadagent, a small agent fleet that drives a plane through
# pkg/client and prints a JSON summary (integration/cmd/loadagent).
#
# Built by scripts/build-images.sh from deploy/build/agent/.
FROM scratch
COPY loadagent /usr/local/bin/loadagent
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/loadagent"]
