// Command signoff is the agent-side command of Signoff, one static binary
// to drop into an agent's image:
//
//	signoff hook claude-code   answer Claude Code's hooks (stdin → stdout)
//	signoff hook codex         answer Codex's hooks
//	signoff mcp-gateway        an MCP server that gates the tools of upstream MCP servers
//	signoff version            print the version
//
// Every setting has a flag, a SIGNOFF_* environment variable and a key in a
// YAML --config file; `signoff <command> --help` lists them.
// docs/AGENTS.md shows the configuration of each host.
package main
