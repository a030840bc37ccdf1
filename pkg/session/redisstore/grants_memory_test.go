package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// TestGrantIndexMemory stores 1,000 agent grants shaped like the broker
// benchmark's (BenchmarkBrokerGrantAllow/grants=N: each of its own tool or
// program, so each in a bucket of its own — the index's worst case) and
// compares MEMORY USAGE of the agent's grant index with that of one string
// holding the same entries (the layout before the index). docs/STATE.md
// "The grant index" reports the figures; the test bounds the index at
// 600 bytes per grant.
func TestGrantIndexMemory(t *testing.T) {
	srv := testenv.Redis(t)
	admin := srv.Client()
	s := newStore(t, options(srv.URL(), time.Hour))
	ctx := context.Background()
	const n = 1000
	agent := uniq("agent")
	for i := range n {
		g := session.Grant{Grant: messages.Grant{ID: fmt.Sprintf("gr_%s_%d", agent, i), Scope: messages.ScopeAlways,
			AgentID: agent, Teams: []string{"default"}, Approvers: []messages.Approver{{ID: "alice"}}, RequestID: fmt.Sprintf("r%d", i)},
			Origin: "s-setup"}
		if i%4 == 0 {
			g.Scope, g.Tool, g.Patterns = messages.ScopeAlwaysPrefix, "bash", []string{fmt.Sprintf("prog%d build *", i)}
		} else {
			g.Tool = fmt.Sprintf("mcp__svc%d__op", i)
		}
		if _, _, _, err := s.AddGrant(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	idx := "signoff:agent:{" + agent + "}:grants:b"
	var entries []string
	for f, v := range admin.HGetAll(ctx, idx).Val() {
		if !strings.HasPrefix(f, "#") {
			entries = append(entries, v) // each bucket's entries, length-prefixed as in one list
		}
	}
	if err := admin.Set(ctx, "scratch:"+agent, strings.Join(entries, ""), 0).Err(); err != nil {
		t.Fatal(err)
	}
	index := admin.MemoryUsage(ctx, idx, 0).Val() / n
	list := admin.MemoryUsage(ctx, "scratch:"+agent, 0).Val() / n
	t.Logf("%d grants: the index costs %d bytes per grant, one string of the same entries %d", n, index, list)
	if index > 600 {
		t.Errorf("the grant index costs %d bytes per grant, want at most 600", index)
	}
}
