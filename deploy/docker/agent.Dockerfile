# signoff/agent: loadagent, a small agent fleet that drives a plane through
# pkg/client and prints a JSON summary (integration/cmd/loadagent), and
# signoff (cmd/signoff), the hook and MCP gateway of agents, for images
# that build FROM it or copy /usr/local/bin/signoff (docs/AGENTS.md).
#
# Built by scripts/build-images.sh from deploy/build/agent/.
FROM scratch
COPY loadagent /usr/local/bin/loadagent
COPY signoff /usr/local/bin/signoff
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/loadagent"]
