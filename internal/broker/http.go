package broker

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// HTTPHandler serves /healthz (the process is up), /readyz (the broker
// serves and its store and NATS answer) and /metrics (Prometheus).
func (b *Broker) HTTPHandler() http.Handler { return httpHandler(b.Ready, b.m) }

// HTTPHandler serves /healthz, /readyz (every tenant's broker serves) and
// /metrics, as [Broker.HTTPHandler].
func (p *Plane) HTTPHandler() http.Handler { return httpHandler(p.Ready, p.cfg.Base.Metrics) }

func httpHandler(ready func(context.Context) error, m *Metrics) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := ready(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("not ready: " + err.Error() + "\n"))
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry}))
	return mux
}
