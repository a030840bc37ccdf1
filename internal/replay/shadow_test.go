package replay_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/replay"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// lsUntil sends `ls -la` calls from agent until the audit record of one
// satisfies ok (the shadow key reaches replicas through a watch), and
// returns that record; 5 s without fails the test.
func lsUntil(t *testing.T, p *brokertest.Plane, agent *client.Client, ok func(messages.AuditRecord) bool) messages.AuditRecord {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		id := "r-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		d := brokertest.Ask(t.Context(), agent, id, "bash", brokertest.Bash("ls -la")).Wait(t)
		// The live policy stands whatever the shadow says.
		brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonPolicyAllow)
		var rec messages.AuditRecord
		for wait := time.Now().Add(2 * time.Second); time.Now().Before(wait); time.Sleep(20 * time.Millisecond) {
			if rec = p.LastAudit(agent.SessionID()); rec.Decision.RequestID == id {
				break
			}
		}
		if rec.Decision.RequestID == id && ok(rec) {
			return rec
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit record as wanted in 5 s; last %+v", rec)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestShadowJudgesBesideTheLivePolicyCountsAndRecordsDifferencesAndSurvivesARestart(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true})
	agent := p.Agent("s1", "a1")
	code, out, errOut := run(t, p, replay.Shadow, "set", writePolicy(t, candidateDenyingLsAndGit))
	if code != replay.ExitOK || !strings.Contains(out, "shadow policy "+mustVersion(t, candidateDenyingLsAndGit)+" set") {
		t.Fatalf("shadow set: exit %d, %q, %q", code, out, errOut)
	}
	rec := lsUntil(t, p, agent, func(r messages.AuditRecord) bool { return r.Shadow != nil })
	if rec.Shadow.Action != "deny" || rec.Shadow.Live != "allow" || !strings.Contains(rec.Shadow.Rule, "ls *") {
		t.Fatalf("shadow verdict %+v, want the candidate's deny by bash(ls *) beside the live allow", rec.Shadow)
	}
	var diffs float64
	for _, r := range p.Replicas {
		diffs += testutil.ToFloat64(r.Metrics.ShadowDifferences.WithLabelValues("allow", "deny"))
	}
	if diffs < 1 {
		t.Fatalf("signoff_shadow_differences_total{from=allow,to=deny} = %v, want ≥ 1", diffs)
	}

	// A replica started after the set judges with it too: the shadow
	// policy is kept in the modes bucket.
	p.Replicas[0].Stop(t)
	p.StartReplica("replica-restarted")
	rec = lsUntil(t, p, agent, func(r messages.AuditRecord) bool { return r.Replica == "replica-restarted" })
	if rec.Shadow == nil || rec.Shadow.Action != "deny" {
		t.Fatalf("the restarted replica recorded shadow %+v, want the candidate's deny", rec.Shadow)
	}

	if code, out, errOut := run(t, p, replay.Shadow, "clear"); code != replay.ExitOK || !strings.Contains(out, "cleared") {
		t.Fatalf("shadow clear: exit %d, %q, %q", code, out, errOut)
	}
	lsUntil(t, p, agent, func(r messages.AuditRecord) bool { return r.Shadow == nil })
}

func TestShadowSetRefusesAPolicyThatDoesNotLoadAndChangesNothing(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true})
	bad := writePolicy(t, "mode: auto-edit\nrules:\n  - { rule: \"bash(ls\", action: allow }\n")
	code, out, errOut := run(t, p, replay.Shadow, "set", bad)
	if code != replay.ExitUsage || !strings.Contains(errOut, "candidate.yaml:3") || out != "" {
		t.Fatalf("exit %d, %q, %q; want 2 and the line of the error", code, out, errOut)
	}
	// The broker refuses one too, should a client skip the check.
	rep := p.RawRequest(p.Subjects.Admin(messages.AdminOpSetShadow), []byte(`{"v":1,"policy":"rules: [ {"}`))
	if !strings.Contains(string(rep), `"invalid_request"`) || !strings.Contains(string(rep), "shadow-policy.yaml") {
		t.Fatalf("broker accepted a bad shadow policy: %s", rep)
	}
	rec := lsUntil(t, p, p.Agent("s1", "a1"), func(messages.AuditRecord) bool { return true })
	if rec.Shadow != nil {
		t.Fatalf("a refused shadow policy judged: %+v", rec.Shadow)
	}
	for _, args := range [][]string{{}, {"set"}, {"clear", "x"}, {"start", "f"}} {
		if code, _, _ := run(t, p, replay.Shadow, args...); code != replay.ExitUsage {
			t.Errorf("shadow %q: exit %d, want 2", args, code)
		}
	}
}

func mustVersion(t *testing.T, yaml string) string {
	t.Helper()
	p, err := policy.Parse([]byte(yaml), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p.Version()
}
