package approverbotd

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

// healthCheckTimeout bounds one channel's CheckHealth in /readyz.
const healthCheckTimeout = 5 * time.Second

// healthz serves GET /healthz: the process is up.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintln(w, "ok")
}

// natsStatus is what /readyz needs of the NATS connection.
type natsStatus interface{ Status() nats.Status }

// readyz serves GET /readyz: 200 when NATS is connected and every channel
// reports healthy, else 503; the body has one line per check.
func readyz(nc natsStatus, channels []approverbot.Channel) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), healthCheckTimeout)
		defer cancel()
		errs := make([]error, len(channels))
		var wg sync.WaitGroup
		for i, ch := range channels {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = ch.CheckHealth(ctx)
			}()
		}
		wg.Wait()

		var b strings.Builder
		ok := true
		if st := nc.Status(); st != nats.CONNECTED {
			ok = false
			fmt.Fprintf(&b, "nats: not connected (%s)\n", st)
		} else {
			b.WriteString("nats: ok\n")
		}
		for i, ch := range channels {
			if errs[i] != nil {
				ok = false
				fmt.Fprintf(&b, "%s: %v\n", ch.Name(), errs[i])
			} else {
				fmt.Fprintf(&b, "%s: ok\n", ch.Name())
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprint(w, b.String())
	})
}
