package escalator

import (
	"context"
	"fmt"

	"github.com/signoff-dev/signoff/internal/pager"
)

// Page triggers the named pager about pg, outside any question's ladder
// (a tripped outbreak breaker pages its team's pagers this way). The
// incident key derives from pg.RequestID, so a repeated page of the same
// event lands on the same incident.
func (p *Pagers) Page(ctx context.Context, name string, pg pager.Page) error {
	pgr, _, ok := p.get(name)
	if !ok {
		return fmt.Errorf("escalator: pager %q is not configured on this broker", name)
	}
	if _, err := pgr.Trigger(ctx, pg); err != nil {
		return fmt.Errorf("escalator: page %s: %w", name, err)
	}
	return nil
}
