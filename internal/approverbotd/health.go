package approverbotd

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
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

// botHealth is what /readyz needs of the bot: whether its subscriptions
// and replays work, and where to record the channels' health.
type botHealth interface {
	Ready() error
	RecordHealth(channel string, err error)
}

// readyz serves GET /readyz: 200 when NATS is connected, the server
// accepts the bot's subscriptions and answers its pending replays, and
// every channel reports healthy; else 503. The body has one line per
// check. Each channel's result also sets signoff_bot_channel_up.
func readyz(nc natsStatus, bot botHealth, channels []approverbot.Channel) http.Handler {
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
				bot.RecordHealth(ch.Name(), errs[i])
			}()
		}
		wg.Wait()

		var b strings.Builder
		ok := true
		switch st := nc.Status(); {
		case st != nats.CONNECTED:
			ok = false
			fmt.Fprintf(&b, "nats: not connected (%s)\n", st)
		case bot.Ready() != nil:
			ok = false
			fmt.Fprintf(&b, "nats: connected, but %s\n", strings.ReplaceAll(bot.Ready().Error(), "\n", "; "))
		default:
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

// opsOnly serves h only to requests that carry token as a bearer token
// (any request when token is empty); others get 401. The comparison takes
// the same time whatever the token sent.
func opsOnly(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := sha256.Sum256([]byte("Bearer " + token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := sha256.Sum256([]byte(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="signoff-ops"`)
			http.Error(w, "this endpoint needs http.ops_token as a bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
