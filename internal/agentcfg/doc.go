// Package agentcfg holds the settings the agent-side command (cmd/signoff)
// shares between its subcommands: how to reach NATS, who the agent is, the
// subject prefix and the time limits. Every setting has a flag, a SIGNOFF_*
// environment variable and a key in a YAML config file, with the precedence
// the other binaries use: a flag beats the environment, which beats the
// file.
//
// It also maps identifiers of the hosts (Claude Code session ids, tool-use
// ids, pod names) onto single NATS subject tokens with [Token], a stable and
// collision-free escaping.
package agentcfg
