package mcpgateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// maxExposedName keeps "mcp__" + the exposed name within the 128 bytes
// Signoff and MCP allow for a tool name.
const maxExposedName = 128 - len("mcp__")

// exposedName is the name a client sees for tool of server: server__tool
// when that is a valid MCP tool name of at most maxExposedName bytes;
// otherwise the tool's name with invalid characters replaced by '_', cut to
// fit, and followed by '_' and 8 hex digits of its SHA-256, so that two
// tools whose names clean up alike still differ.
func exposedName(server, tool string) string {
	n := server + "__" + tool
	if len(n) <= maxExposedName && validToolName(n) {
		return n
	}
	clean := []byte(tool)
	for i, c := range clean {
		if !validToolByte(c) {
			clean[i] = '_'
		}
	}
	sum := sha256.Sum256([]byte(tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	keep := maxExposedName - len(server) - len("__") - len(suffix)
	if len(clean) > keep {
		clean = clean[:keep]
	}
	return server + "__" + string(clean) + suffix
}

func validToolName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !validToolByte(s[i]) {
			return false
		}
	}
	return true
}

// validToolByte is the character set of MCP tool names (the SDK's
// validateToolName).
func validToolByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

// policyTool is the tool name Signoff judges for tool of server:
// "mcp__<server>__<tool>" as the server spells it, so that rules name the
// tool a user knows, when that is a valid Signoff tool name (at most 128
// bytes, no whitespace or control characters); otherwise "mcp__" and the
// exposed name, which is always valid.
func policyTool(server, tool, exposed string) string {
	n := "mcp__" + server + "__" + tool
	probe := messages.Request{RequestID: "x", SessionID: "x", AgentID: "x", Tool: n, Arguments: json.RawMessage("{}")}
	if err := probe.Validate(); err == nil {
		return n
	}
	return "mcp__" + exposed
}
