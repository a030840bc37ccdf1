package escalator_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/signoff-dev/signoff/internal/escalator"
	"github.com/signoff-dev/signoff/internal/pager"
	"github.com/signoff-dev/signoff/internal/pager/pagertest"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

func TestAnOpsgeniePageIsOpenedAndClosedWithTheRequest(t *testing.T) {
	og := pagertest.NewOpsgenie(t, "og-key")
	t.Setenv("SIGNOFF_TEST_OG_KEY", "og-key")
	pagers, err := escalator.NewPagers(map[string]policy.PagerSpec{"og": {Kind: pager.KindOpsgenie, APIKeyEnv: "SIGNOFF_TEST_OG_KEY",
		BaseURL: og.URL, AllowHTTP: true, MaxAttempts: 2, MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{store: memstore.New(memstore.Options{EffectLease: lease}), ask: &asker{}}
	r.m = escalator.NewMetrics(prometheus.NewRegistry())
	if r.esc, err = escalator.New(escalator.Config{Store: r.store, Asker: r.ask, Pagers: pagers, Metrics: r.m, Watch: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	r.open(t, "r1", messages.EscalationStep{AfterMS: 50, Page: "og"})
	time.Sleep(60 * time.Millisecond)
	r.sweep(t)
	alerts := og.Alerts()
	if len(alerts) != 1 || alerts[0].Closed || alerts[0].Alias != pager.DedupKey("", "s1", "r1") || !strings.Contains(alerts[0].First.Message, "deploy prod") {
		t.Fatalf("alerts after the page step: %+v", alerts)
	}
	if _, err := r.store.Decide(t.Context(), "s1", "r1", denyVote("r1")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	r.sweep(t)
	if alerts := og.Alerts(); len(alerts) != 1 || !alerts[0].Closed {
		t.Fatalf("alerts after the rejection: %+v, want the alert closed", alerts)
	}
}

func TestPagersAreRebuiltOnlyWhenTheirSettingsChangeAndKeptWhenTheNewOnesFail(t *testing.T) {
	t.Setenv("SIGNOFF_TEST_PD_KEY", pdKey)
	pd := policy.PagerSpec{Kind: pager.KindPagerDuty, RoutingKeyEnv: "SIGNOFF_TEST_PD_KEY"}
	p, err := escalator.NewPagers(map[string]policy.PagerSpec{"pd": pd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Names(); !slices.Equal(got, []string{"pd"}) {
		t.Fatalf("names %v", got)
	}
	// A pager whose key is missing cannot be built: the pagers in use stay.
	broken := map[string]policy.PagerSpec{"pd": pd, "og": {Kind: pager.KindOpsgenie, APIKeyEnv: "SIGNOFF_TEST_NO_SUCH_KEY"}}
	if err := p.Update(broken); err == nil || !strings.Contains(err.Error(), "SIGNOFF_TEST_NO_SUCH_KEY") {
		t.Fatalf("Update with a missing key: %v", err)
	}
	if got := p.Names(); !slices.Equal(got, []string{"pd"}) {
		t.Fatalf("after a failed update: %v, want the old pagers", got)
	}
	t.Setenv("SIGNOFF_TEST_OG_KEY", "og-key")
	fixed := map[string]policy.PagerSpec{"pd": pd, "og": {Kind: pager.KindOpsgenie, APIKeyEnv: "SIGNOFF_TEST_OG_KEY"}}
	if err := p.Update(fixed); err != nil {
		t.Fatal(err)
	}
	got := p.Names()
	slices.Sort(got)
	if !slices.Equal(got, []string{"og", "pd"}) {
		t.Fatalf("after the update: %v", got)
	}
	// Unchanged settings are not rebuilt: the keys are not read again.
	t.Setenv("SIGNOFF_TEST_OG_KEY", "")
	if err := p.Update(fixed); err != nil {
		t.Fatalf("Update with the same settings read the keys again: %v", err)
	}
	if _, err := escalator.NewPagers(map[string]policy.PagerSpec{"pd": {Kind: pager.KindPagerDuty, RoutingKeyEnv: "SIGNOFF_TEST_NO_SUCH_KEY"}}, nil); err == nil {
		t.Fatal("NewPagers built a pager without its key")
	}
}
