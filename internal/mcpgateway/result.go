package mcpgateway

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// protocolMetaPrefix starts the _meta keys the MCP specification reserves
// for the protocol (the server's info among them, since 2026-07-28).
const protocolMetaPrefix = "io.modelcontextprotocol/"

// withoutProtocolMeta is an upstream result's _meta without the protocol's
// keys: the client speaks to the gateway, whose SDK sets them for its own
// session; the upstream's would name the wrong server.
func withoutProtocolMeta(m mcp.Meta) mcp.Meta {
	if len(m) == 0 {
		return m
	}
	out := maps.Clone(m)
	for k := range out {
		if strings.HasPrefix(k, protocolMetaPrefix) {
			delete(out, k)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// MetaArgumentsRun is the _meta key of a result whose call an approver
// changed: the arguments the upstream ran, as a JSON object.
const MetaArgumentsRun = "dev.signoff/arguments_run"

// noteEdited tells the client that the call ran with an approver's
// arguments, not its own: in a text block the model reads, and under
// [MetaArgumentsRun] for programs.
func noteEdited(res *mcp.CallToolResult, d *messages.Decision, args []byte) {
	who := cmp.Or(d.DecidedBy.Display, d.DecidedBy.ID)
	res.Content = append(res.Content, &mcp.TextContent{Text: fmt.Sprintf(
		"Signoff: %s approved this call with changes; it ran with these arguments, not the ones requested: %s", who, args)})
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	res.Meta[MetaArgumentsRun] = json.RawMessage(args)
}
