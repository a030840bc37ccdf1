package mcpgateway

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestExposedNamesAreValidBoundedAndDistinct(t *testing.T) {
	tests := []struct {
		name, server, tool, want string
	}{
		{"a plain name is kept", "github", "create_issue", "github__create_issue"},
		{"a dotted name is kept", "docs", "search.v2", "docs__search.v2"},
		{"a name with a space is cleaned and hashed", "fs", "read file", ""},
		{"a name with a slash is cleaned and hashed", "fs", "read/file", ""},
		{"a name too long is cut and hashed", "srv", strings.Repeat("t", 200), ""},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := exposedName(tt.server, tt.tool)
			if tt.want != "" && got != tt.want {
				t.Fatalf("exposedName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
			}
			if !validToolName(got) || len(got) > maxExposedName || !strings.HasPrefix(got, tt.server+"__") {
				t.Fatalf("exposedName(%q, %q) = %q is not a valid bounded name", tt.server, tt.tool, got)
			}
			if prev, dup := seen[got]; dup {
				t.Fatalf("%q and %q both map to %q", prev, tt.tool, got)
			}
			seen[got] = tt.tool
		})
	}
	if exposedName("fs", "read file") == exposedName("fs", "read/file") {
		t.Fatal("two tools whose names clean up alike got one name")
	}
}

func TestParseUpstream(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
		wantURL           string
		wantCmd           int
	}{
		{"a URL is a streamable-HTTP upstream", "docs=https://mcp.example.com/mcp", "", "https://mcp.example.com/mcp", 0},
		{"anything else is a command", "gh=github-mcp-server stdio --read-only", "", "", 3},
		{"a name with '_' is refused", "my_srv=cmd", "no '_'", "", 0},
		{"a missing target is refused", "gh=", "want name=URL", "", 0},
		{"a missing name is refused", "=cmd", "upstream name", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := ParseUpstream(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || u.URL != tt.wantURL || len(u.Command) != tt.wantCmd {
				t.Fatalf("%+v, %v", u, err)
			}
		})
	}
}

func TestUpstreamsDoNotInheritSignoffSettings(t *testing.T) {
	got := upstreamEnv([]string{"PATH=/bin", "SIGNOFF_NATS_PASSWORD=x", "SIGNOFF_NATS_CREDS=/a.creds", "HOME=/root"})
	if strings.Join(got, " ") != "PATH=/bin HOME=/root" {
		t.Fatalf("upstream env %q", got)
	}
}

func TestAToolTheSDKCannotServeIsAnErrorNotAPanic(t *testing.T) {
	g := &Gateway{server: mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)}
	err := g.addTool(&mcp.Tool{Name: "up__bad", InputSchema: map[string]any{"type": "string"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "object") {
		t.Fatalf("err %v", err)
	}
	if got := objectSchema(map[string]any{"type": "string"}); got.(map[string]any)["type"] != "object" {
		t.Fatalf("objectSchema kept a non-object schema: %v", got)
	}
}
