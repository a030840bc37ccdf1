package pager_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/pager"
	"github.com/signoff-dev/signoff/internal/pager/pagertest"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// Keys the fakes accept. They are distinctive so a leak is found by a
// plain substring search.
const (
	pdKey = "PDSECRETk3y0123456789abcdefABCDE" // 32 characters
	ogKey = "og-secret-4f1c2d9e-0b7a-4e55-9a1e-77d0c0ffee00"
)

// incident is what a fake holds for one dedup key, whatever the vendor.
type incident struct {
	key      string
	count    int
	closed   bool
	summary  string
	link     string
	severity string // PagerDuty severity or Opsgenie priority
	details  map[string]string
}

// vendor drives one implementation and its fake through the same suite.
type vendor struct {
	kind      pager.Kind
	newPager  func(t *testing.T, mod func(*pager.Config)) (pager.Pager, *testenv.LogBuffer)
	incidents func() []incident
	inject    func(...pagertest.Fault)
	requests  func() int
	// rejectStatus is the vendor's status for an invalid body.
	rejectStatus int
}

// writeKey writes a key file the way operators do (with a newline).
func writeKey(t *testing.T, key string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fastConfig returns retry settings that keep the suite quick.
func fastConfig(c *pager.Config, logs *testenv.LogBuffer) {
	c.AllowHTTP = true
	c.MinBackoff = 2 * time.Millisecond
	c.MaxBackoff = 20 * time.Millisecond
	c.Timeout = 2 * time.Second
	c.MaxAttempts = 4
	c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func pagerDutyVendor(t *testing.T) *vendor {
	fake := pagertest.NewPagerDuty(t, pdKey)
	return &vendor{
		kind: pager.KindPagerDuty,
		newPager: func(t *testing.T, mod func(*pager.Config)) (pager.Pager, *testenv.LogBuffer) {
			logs := &testenv.LogBuffer{}
			c := pager.Config{PagerSpec: policy.PagerSpec{Name: "oncall-pd", Kind: pager.KindPagerDuty, RoutingKeyFile: writeKey(t, pdKey), BaseURL: fake.URL}}
			fastConfig(&c, logs)
			if mod != nil {
				mod(&c)
			}
			p, err := pager.New(c)
			if err != nil {
				t.Fatal(err)
			}
			return p, logs
		},
		incidents: func() []incident {
			var out []incident
			for _, in := range fake.Incidents() {
				pl := in.First.Payload
				d := map[string]string{}
				for k, v := range pl.CustomDetails {
					s, _ := v.(string)
					d[k] = s
				}
				link := ""
				if len(in.First.Links) > 0 {
					link = in.First.Links[0].Href
				}
				out = append(out, incident{key: in.DedupKey, count: in.Triggers, closed: in.Resolved,
					summary: pl.Summary, link: link, severity: pl.Severity, details: d})
			}
			return out
		},
		inject:       fake.Inject,
		requests:     fake.Requests,
		rejectStatus: 400,
	}
}

func opsgenieVendor(t *testing.T) *vendor {
	fake := pagertest.NewOpsgenie(t, ogKey)
	return &vendor{
		kind: pager.KindOpsgenie,
		newPager: func(t *testing.T, mod func(*pager.Config)) (pager.Pager, *testenv.LogBuffer) {
			logs := &testenv.LogBuffer{}
			c := pager.Config{PagerSpec: policy.PagerSpec{Name: "oncall-og", Kind: pager.KindOpsgenie, APIKeyFile: writeKey(t, ogKey), BaseURL: fake.URL,
				Responders: []string{"team:platform", "user:ana@example.com"}, Tags: []string{"signoff"}}}
			fastConfig(&c, logs)
			if mod != nil {
				mod(&c)
			}
			p, err := pager.New(c)
			if err != nil {
				t.Fatal(err)
			}
			return p, logs
		},
		incidents: func() []incident {
			var out []incident
			for _, a := range fake.Alerts() {
				link := ""
				if _, after, ok := strings.Cut(a.First.Description, "Open the question: "); ok {
					link, _, _ = strings.Cut(after, "\n")
				}
				out = append(out, incident{key: a.Alias, count: a.Count, closed: a.Closed,
					summary: a.First.Message, link: link, severity: a.First.Priority, details: a.First.Details})
			}
			return out
		},
		inject:       fake.Inject,
		requests:     fake.Requests,
		rejectStatus: 422,
	}
}

func vendors() map[string]func(*testing.T) *vendor {
	return map[string]func(*testing.T) *vendor{"pagerduty": pagerDutyVendor, "opsgenie": opsgenieVendor}
}

func page(id string) pager.Page {
	return pager.Page{
		RequestID: id, Summary: "Approval needed: Bash `terraform apply` (team ops)",
		Description: "agent claude-1 asks to run terraform apply in /srv/infra",
		Link:        "https://signoff.example.com/#/q/" + id, Team: "ops", Tool: "Bash", SessionID: "s-42",
		Details: map[string]string{"agent": "claude-1"},
	}
}

// forEachVendor runs one behaviour against every implementation.
func forEachVendor(t *testing.T, f func(t *testing.T, v *vendor)) {
	for name, mk := range vendors() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, mk(t))
		})
	}
}
