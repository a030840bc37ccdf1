package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestRedteamAUSiblings: siblings red team AU found of this sitting's
// fixes.
func TestRedteamAUSiblings(t *testing.T) {
	p := mustParsePolicy(t, "au.yaml", `mode: auto-edit
home: /home/dev
tools:
  tiers: { "mcp__rg__*": read }
`)
	b := builtinPolicy(t)
	for _, c := range []struct {
		pol  *policy.Policy
		tool string
		args map[string]any
		want policy.Action
	}{
		// A search tool judged by name hands its pattern to rg as well
		// (F1): the built-in search and file_search, an MCP server's.
		{p, "mcp__rg__search", map[string]any{"pattern": "--pre=sh", "path": "."}, policy.Ask},
		{p, "mcp__rg__search", map[string]any{"query": "\u00a0--pre=sh"}, policy.Ask},
		{p, "mcp__rg__search", map[string]any{"pattern": "TODO", "include": ":(top).kube/config"}, policy.Ask},
		{p, "mcp__rg__search", map[string]any{"pattern": "TODO", "path": "."}, policy.Allow},
		{b, "search", map[string]any{"query": "--pre=sh"}, policy.Ask},
		{b, "file_search", map[string]any{"query": "--pre=sh"}, policy.Ask},
		{b, "Grep", map[string]any{"pattern": "\ufeff--pre=sh"}, policy.Ask},
	} {
		d := c.pol.Evaluate(policy.Call{Tool: c.tool, Arguments: mustJSON(t, c.args), Cwd: "/home/dev/proj"})
		if d.Action != c.want {
			t.Errorf("%s %v: %s (%s), want %s", c.tool, c.args, d.Action, d.Reason, c.want)
		}
	}
}

// TestRedteamAUWindowsProfileIsASecondHome: the home's rules meet a
// Windows profile under every prefix WSL, Git Bash and Cygwin show it
// with (F4), and a recursive read above one meets them too.
func TestRedteamAUWindowsProfileIsASecondHome(t *testing.T) {
	wantActionsIn(t, builtinPolicy(t), "/home/dev/proj", []bashCase{
		{`cat /mnt/c/Users/dev/.codex/auth.json`, policy.Deny},
		{`cat /mnt/c/Users/dev/.gemini/oauth_creds.json`, policy.Deny},
		{`cat /mnt/c/Users/dev/.claude.json`, policy.Deny},
		{`cat /c/Users/dev/.kube/config`, policy.Deny},
		{`cat /cygdrive/c/users/DEV/.docker/config.json`, policy.Deny},
		{`cat /c/Users/dev/_netrc`, policy.Ask},
		{`grep -r tok /c/Users`, policy.Deny},
		{`grep -r tok /cygdrive/c/Users/dev`, policy.Deny},
		{`echo x >> /c/Users/dev/.bashrc`, policy.Ask},
		{`cat /c/Users/dev/Documents/a.txt`, policy.Allow},
		{`grep -r tok /c/Users/dev/Documents`, policy.Allow},
	})
}
