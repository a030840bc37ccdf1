// Package mcpgatewaytest provides an upstream MCP server for the gateway's
// tests: real MCP (the official SDK) with tools that record what reached
// them.
package mcpgatewaytest
