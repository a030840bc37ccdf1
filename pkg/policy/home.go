package policy

import (
	"path"
	"strings"
	"sync"
)

// A policy whose file sets no home: takes the broker's home for `~`, which
// is right when the broker runs beside its agents (broker --dev) and wrong
// when it does not: a broker in a container has /home/nonroot, its agents
// /home/dev or /Users/alice, and ~/.ssh/** would guard the broker's keys
// while /home/dev/.ssh/id_rsa reached by `cd ..` went unguarded. So a call
// that says its agent's home (Call.Home, sent by the hooks and the MCP
// gateway from their own $HOME) is judged by the policy as if its file
// said home: that directory — the same text compiled again, once per
// home, in a bounded cache — and an allow stands only if the policy with
// its own home allows the call too (Policy.evaluateForHome: the home is
// the agent's word). A file that sets home: is the operator's word for
// every agent and is used as written.

// maxHomeVariants bounds the compiled variants a policy keeps; past it the
// oldest is dropped (and compiled again when a call needs it).
const maxHomeVariants = 64

// homeVariants are a policy's compilations for other homes.
type homeVariants struct {
	mu    sync.RWMutex
	m     map[string]*Policy
	order []string // insertion order, for eviction
}

// forHome returns the policy compiled with home h. h is a clean absolute
// path without glob characters (the broker validates requests); one that
// is not, or a text that does not compile again, leaves the policy as it
// is for the call — its rules then guard the broker's home, as before
// there was a Call.Home.
func (p *Policy) forHome(h string) *Policy {
	if p.homes == nil || !usableHome(h) {
		return p
	}
	v := p.homes
	v.mu.RLock()
	q := v.m[h]
	v.mu.RUnlock()
	if q != nil {
		return q
	}
	q, err := parse(p.source, p.file, h)
	if err != nil {
		return p
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if had := v.m[h]; had != nil {
		return had
	}
	if v.m == nil {
		v.m = map[string]*Policy{}
	}
	if len(v.order) >= maxHomeVariants {
		delete(v.m, v.order[0])
		v.order = v.order[1:]
	}
	v.m[h] = q
	v.order = append(v.order, h)
	return q
}

// usableHome reports whether h can stand for ~ in the policy's patterns:
// absolute, clean, and without a character a pattern would read as a glob.
func usableHome(h string) bool {
	return path.IsAbs(h) && path.Clean(h) == h && h != "/" && !strings.ContainsAny(h, "*?[]{}\\!,")
}
