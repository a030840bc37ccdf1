// Package mcpgateway provides an MCP server that fronts upstream MCP
// servers and asks Signoff before every tool call: the tools of each
// upstream are listed under "<server>__<tool>", and a call goes to Signoff
// as tool "mcp__<server>__<tool>" with its arguments. On allow the call is
// forwarded and the upstream's result returned; on deny the client gets a
// tool error (isError) whose text is the decision's llm_message, and the
// upstream never sees the call.
//
// It is built on the official MCP Go SDK and serves stdio and streamable
// HTTP; upstreams are stdio commands or streamable-HTTP URLs.
// docs/AGENTS.md is the user's guide.
package mcpgateway
