package policy_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// TestShellCacheDecidesAsWithoutIt evaluates every corpus command on a
// fresh policy (its first evaluation analyses the script; the cache is
// empty) and then again from several goroutines at once (the analysis now
// comes from the cache, shared between them): every decision must be the
// one the fresh policy made, field for field. Under -race, a write to a
// shared analysis by the evaluation is a reported race.
func TestShellCacheDecidesAsWithoutIt(t *testing.T) {
	cases := readCorpora(t)
	p := corpusPolicy(t)
	want := make([]policy.Decision, len(cases))
	for i, c := range cases {
		want[i] = corpusDecide(t, p, c.command)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(cases))
	for g := range 4 {
		wg.Go(func() {
			for k := range cases {
				i := (k*7 + g*131) % len(cases) // each goroutine in its own order
				got := p.Evaluate(policy.Call{Tool: "bash", Arguments: commandArgs(t, cases[i].command)})
				if !reflect.DeepEqual(got, want[i]) {
					errs <- fmt.Sprintf("%s:%d %q: cached decision %+v (analysis %#v) differs from the first %+v (analysis %#v)", cases[i].file, cases[i].line, cases[i].command, got, got.Shell, want[i], want[i].Shell)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	n := 0
	for e := range errs {
		if n++; n <= 5 {
			t.Error(e)
		}
	}
	if n > 5 {
		t.Errorf("… and %d more", n-5)
	}
}

// TestShellAnalysisIsDeterministic: caching an analysis is sound only if
// analysing the same script again gives the same result. A glob that
// could write to several protected files once named whichever a map
// iteration met first (found by TestShellCacheDecidesAsWithoutIt).
func TestShellAnalysisIsDeterministic(t *testing.T) {
	for _, c := range readCorpora(t) {
		first := shell.Analyze(c.command)
		for range 4 {
			if again := shell.Analyze(c.command); !reflect.DeepEqual(again, first) {
				t.Errorf("%s:%d %q: analysed twice, two results:\n%#v\n%#v", c.file, c.line, c.command, first, again)
				break
			}
		}
	}
}

// TestShellCacheEntryUnchangedByAMultiScriptCall: a call with two command
// arguments extends the first script's analysis with the second's safety
// reasons. The first script's analysis is shared through the cache, so
// the extension must copy it: two such calls must not write over each
// other's reasons (the first script has three reasons, so a slice of
// capacity four, room for an append in place).
func TestShellCacheEntryUnchangedByAMultiScriptCall(t *testing.T) {
	p := corpusPolicy(t)
	const first = "rm -rf / ; dd if=/dev/zero of=/dev/sda"
	alone := p.Evaluate(policy.Call{Tool: "bash", Arguments: commandArgs(t, first)})
	if alone.Shell == nil || len(alone.Shell.Safety) != 3 {
		t.Fatalf("%q: want three safety reasons, got %+v", first, alone.Shell)
	}
	two := func(second string) policy.Decision {
		// Written out, not marshalled from a map: the scripts are taken
		// in the order of the arguments.
		args := fmt.Sprintf(`{"command":%q,"cmd":%q}`, first, second)
		return p.Evaluate(policy.Call{Tool: "bash", Arguments: json.RawMessage(args)})
	}
	withReboot := two("reboot")
	rebootReasons := slices.Clone(withReboot.Shell.Safety)
	if len(rebootReasons) != 4 || !strings.Contains(rebootReasons[3], "reboot") {
		t.Fatalf("first script then reboot: want 4 safety reasons, the last reboot's, got %q", rebootReasons)
	}
	two("mkfs.ext4 /dev/sdb")
	if !slices.Equal(withReboot.Shell.Safety, rebootReasons) {
		t.Fatalf("a later two-script call changed an earlier decision's safety reasons: %q, was %q", withReboot.Shell.Safety, rebootReasons)
	}
	again := p.Evaluate(policy.Call{Tool: "bash", Arguments: commandArgs(t, first)})
	if !reflect.DeepEqual(again, alone) {
		t.Fatalf("%q after two-script calls: %+v, want %+v", first, again, alone)
	}
}

func commandArgs(t testing.TB, command string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
