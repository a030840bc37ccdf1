package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
	"github.com/signoff-dev/signoff/pkg/session"
)

// oldGrantsAllowing is grantsAllowing as it was before the grant index:
// every grant read, no grant left out before the cover loop. The index
// must not change a single answer of it.
func oldGrantsAllowing(pol *policy.Policy, d *policy.Decision, tool, requestedBy string, grants []session.Grant) []session.Grant {
	if d.Action != policy.Ask || len(grants) == 0 {
		return nil
	}
	need := pol.NeedOf(d)
	if need.NotGrantable != "" {
		return nil
	}
	var eligible []session.Grant
	for i := range grants {
		g := &grants[i]
		if g.Tool != tool {
			continue
		}
		if ok, _ := need.SettledBy(grantAuthority(g, requestedBy)); !ok {
			continue
		}
		if len(g.Patterns) == 0 {
			return []session.Grant{*g}
		}
		eligible = append(eligible, *g)
	}
	if len(eligible) == 0 || d.Shell == nil || !shell.PrefixCovered(*d.Shell, patternsOf(eligible)) {
		return nil
	}
	for i := 0; i < len(eligible) && len(eligible) > 1; {
		rest := slices.Concat(eligible[:i], eligible[i+1:])
		if shell.PrefixCovered(*d.Shell, patternsOf(rest)) {
			eligible = rest
			continue
		}
		i++
	}
	return eligible
}

// TestTheGrantIndexChangesNoDecision decides commands against grants of
// every shape the index sorts (a literal first word, a glob or a variable
// first, first words that differ, redirections, whole-tool grants, other
// tools) twice: with every grant, by the algorithm before the index, and
// with only the grants the index reads for the call (its
// session.LookupQuery.Reads), by grantsAllowing. Every answer must be the
// same, down to the grants named.
func TestTheGrantIndexChangesNoDecision(t *testing.T) {
	pol, err := policy.Parse([]byte(`
mode: always-ask
teams:
  default: { members: [alice, bob] }
`), "index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	patterns := [][]string{
		{"rm build"}, {"rm -rf build"}, {"cd *"}, {"cd x"}, {"make *"}, {"make deploy"}, {"git status *"},
		{"* --version"}, {"?m build"}, {"[r]m build"}, {`\rm build`}, {"git push *", "npm test"},
		{"echo hi", "> out.txt"}, {"> out.txt"}, {"< in.txt"}, {"cat *"}, {"/bin/rm build"}, {"rm"},
		{"ls *", "ls"}, {"rm x *"}, {"npm run build", "npm test"}, {"timeout *"}, {"prog1 build *"},
		{"> build"}, // what rm build deletes is a write of build
	}
	var grants []session.Grant
	for i, ps := range patterns {
		grants = append(grants, session.Grant{Grant: messages.Grant{ID: fmt.Sprintf("g%02d", i), Scope: messages.ScopeAlwaysPrefix,
			AgentID: "pod", Tool: "bash", Patterns: ps, Teams: []string{"default"}, Approvers: []messages.Approver{{ID: "alice"}}}})
	}
	other := session.Grant{Grant: messages.Grant{ID: "g-write", Scope: messages.ScopeAlways, AgentID: "pod", Tool: "write",
		Teams: []string{"default"}, Approvers: []messages.Approver{{ID: "alice"}}}}
	whole := other
	whole.ID, whole.Tool = "g-bash", "bash"
	commands := []string{
		"rm build", "cd x && rm build", "cd x && rm -rf build", "make deploy", "cd x; make deploy && rm build",
		"rm --version", "git push origin main", "git push origin main && npm test", "npm test", "echo hi > out.txt",
		"cat in.txt", "cat < in.txt", "/bin/rm build", "rm", "ls", "ls -la", "'rm x' y", "timeout 5 rm build",
		"git status", "git status --short", "prog1 build x", "rm build | cat y", "cd x && cd y", "make build",
		"$CMD build", "rm $X", "echo $(rm build)", "sudo rm build", "rm build &",
	}
	allowed := 0
	for _, cmd := range commands {
		d := pol.Evaluate(policy.Call{Tool: "bash", Arguments: fmt.Appendf(nil, `{"command":%q}`, cmd), Cwd: "/w"})
		for _, set := range [][]session.Grant{grants, append(slices.Clone(grants), other), append(slices.Clone(grants), whole)} {
			q := grantLookup(session.LookupQuery{SessionID: "s", AgentID: "pod"}, &d, "bash")
			var read []session.Grant
			for i := range set {
				if q.Reads(&set[i]) {
					read = append(read, set[i])
				}
			}
			want := grantIDsOf(oldGrantsAllowing(pol, &d, "bash", "", set))
			if len(want) > 0 {
				allowed++
			}
			if got := grantIDsOf(grantsAllowing(pol, &d, "bash", "", "", read)); !slices.Equal(got, want) {
				t.Errorf("%q (programs %v): grants allowing it = %v with the index, %v with every grant", cmd, q.Programs, got, want)
			}
		}
	}
	// Most calls are allowed by some grant, so that the comparison means
	// something.
	if allowed < 2*len(commands) {
		t.Errorf("%d of %d decisions allowed by grants; the test needs more", allowed, 3*len(commands))
	}
	t.Logf("%d of %d decisions allowed by grants", allowed, 3*len(commands))
}

func grantIDsOf(gs []session.Grant) []string {
	out := make([]string, len(gs))
	for i := range gs {
		out[i] = gs[i].ID
	}
	return out
}
