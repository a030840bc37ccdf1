package escalator

import (
	"fmt"
	"log/slog"
	"reflect"
	"sync"

	"github.com/signoff-dev/signoff/internal/pager"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// Pagers holds the pagers page: steps name, built from the policy's pager
// entries and rebuilt when they change (a policy reload). Safe for
// concurrent use.
type Pagers struct {
	log *slog.Logger

	mu    sync.RWMutex
	specs map[string]policy.PagerSpec
	set   map[string]pager.Pager
}

// NewPagers builds the pagers of specs (reading their keys: a missing key
// fails here, at start).
func NewPagers(specs map[string]policy.PagerSpec, log *slog.Logger) (*Pagers, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Pagers{log: log}
	if err := p.Update(specs); err != nil {
		return nil, err
	}
	return p, nil
}

// Update rebuilds the pagers if specs differ from the ones in use. If a
// pager cannot be built (its key file is gone, say), the pagers in use stay
// and the error is returned.
func (p *Pagers) Update(specs map[string]policy.PagerSpec) error {
	p.mu.RLock()
	same := p.set != nil && reflect.DeepEqual(p.specs, specs)
	p.mu.RUnlock()
	if same {
		return nil
	}
	cfgs := make(map[string]pager.Config, len(specs))
	for name, s := range specs {
		cfgs[name] = pager.FromSpec(s)
	}
	set, err := pager.NewSet(cfgs, p.log)
	if err != nil {
		return fmt.Errorf("escalator: pagers: %w", err)
	}
	p.mu.Lock()
	p.specs, p.set = specs, set
	p.mu.Unlock()
	return nil
}

// get returns the named pager and its dedup prefix.
func (p *Pagers) get(name string) (pager.Pager, string, bool) {
	if p == nil {
		return nil, "", false
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	pg, ok := p.set[name]
	return pg, p.specs[name].DedupPrefix, ok
}

// Names returns the names of the pagers in use.
func (p *Pagers) Names() []string {
	if p == nil {
		return nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]string, 0, len(p.set))
	for n := range p.set {
		out = append(out, n)
	}
	return out
}
