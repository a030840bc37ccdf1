package pager_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/signoff-dev/signoff/internal/pager"
	"github.com/signoff-dev/signoff/internal/pager/pagertest"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// Example pages the on-call person about an unanswered request and resolves
// the page once the request is settled, against the PagerDuty fake.
func Example() {
	fake := pagertest.StartPagerDuty(pdKey)
	defer fake.Close()
	dir, _ := os.MkdirTemp("", "pager-example")
	defer os.RemoveAll(dir)
	keyFile := filepath.Join(dir, "routing-key")
	_ = os.WriteFile(keyFile, []byte(pdKey+"\n"), 0o600)

	pagers, err := pager.NewSet(map[string]pager.Config{
		"oncall-pd": {PagerSpec: policy.PagerSpec{Kind: pager.KindPagerDuty, RoutingKeyFile: keyFile, BaseURL: fake.URL, AllowHTTP: true}},
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		fmt.Println(err)
		return
	}
	pd := pagers["oncall-pd"]
	ctx := context.Background()
	ref, err := pd.Trigger(ctx, pager.Page{
		RequestID: "01HVZ8K3",
		SessionID: "s-42",
		Summary:   "Approval needed: Bash terraform apply (team ops)",
		Link:      "https://signoff.example.com/#/q/01HVZ8K3",
		Team:      "ops",
		Tool:      "Bash",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("triggered", ref.DedupKey)
	// Every replica that sees the request settle may resolve: the second
	// resolve finds the incident closed and is still a success.
	fmt.Println(pd.Resolve(ctx, ref.DedupKey), pd.Resolve(ctx, ref.DedupKey))
	for _, in := range fake.Incidents() {
		fmt.Println(in.DedupKey, "resolved:", in.Resolved)
	}
	// Output:
	// triggered signoff-s-42:01HVZ8K3
	// <nil> <nil>
	// signoff-s-42:01HVZ8K3 resolved: true
}

// FuzzDedupKeyIsInjective checks that two different pairs of session and
// request ids never share an incident key, whatever characters they hold.
func FuzzDedupKeyIsInjective(f *testing.F) {
	f.Add("s", "a/b", "s", "sha256-0123")
	f.Add("s", "r-1", "s", "r_1")
	f.Add("s", "é", "s", "%C3%A9")
	f.Add("s", "x:y", "s", "x-y")
	f.Add("a", "b:c", "a:b", "c")
	f.Add("victim", "toolu_1", "attacker", "toolu_1")
	f.Fuzz(func(t *testing.T, sa, a, sb, b string) {
		if sa == sb && a == b {
			return
		}
		if ka, kb := pager.DedupKey("", sa, a), pager.DedupKey("", sb, b); ka == kb {
			t.Fatalf("ids (%q, %q) and (%q, %q) share the key %q", sa, a, sb, b, ka)
		}
	})
}
