package policy_test

import (
	"bufio"
	"os"
	"testing"
)

func TestZZProbe(t *testing.T) {
	f, err := os.Open("/tmp/rt_probe.txt")
	if err != nil {
		t.Skip()
	}
	defer f.Close()
	p := corpusPolicy(t)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := decodeCorpus(sc.Text())
		if c == "" {
			continue
		}
		d := corpusDecide(t, p, c)
		t.Logf("%-5s %q  [%s %s: %s]", d.Action, c, d.Layer, d.Rule, d.Reason)
	}
}
