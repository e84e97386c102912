package metrics

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// HealthTimeout bounds one call of the health function by /healthz; a
// health check that takes longer answers 503.
const HealthTimeout = 5 * time.Second

// errHealthTimeout is /healthz's answer when the health function hangs.
var errHealthTimeout = errors.New("health check timed out")

// Handler serves GET /healthz and GET /metrics.
//
// /healthz answers 200 "ok" when health returns nil (a nil health counts as
// healthy) and 503 with the error's text otherwise, or when health takes
// longer than HealthTimeout; health runs under the request's context,
// bounded by it. /metrics serves the private registry in the
// Prometheus text format (or a format the scraper negotiates). Other paths
// are 404, other methods 405.
func (m *Metrics) Handler(health func(ctx context.Context) error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := checkHealth(r.Context(), health, HealthTimeout); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(err.Error() + "\n"))
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	if m != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
			Registry: m.reg, // promhttp_metric_handler_errors_total
			Timeout:  30 * time.Second,
		}))
	}
	return mux
}

// checkHealth runs health under ctx, giving up after timeout.
func checkHealth(ctx context.Context, health func(ctx context.Context) error, timeout time.Duration) error {
	if health == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan error, 1) // buffered: a late health call never blocks
	go func() { done <- health(ctx) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errHealthTimeout
	}
}
