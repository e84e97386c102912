package admin

import "testing"

// HealthURL asks an unspecified or empty host on the loopback address.
func TestHealthURL(t *testing.T) {
	for addr, want := range map[string]string{
		":8080":          "http://127.0.0.1:8080/healthz",
		"0.0.0.0:9090":   "http://127.0.0.1:9090/healthz",
		"[::]:8080":      "http://[::1]:8080/healthz",
		"127.0.0.1:8080": "http://127.0.0.1:8080/healthz",
		"10.0.0.5:80":    "http://10.0.0.5:80/healthz",
		"localhost:8080": "http://localhost:8080/healthz",
	} {
		if got, err := HealthURL(addr); err != nil || got != want {
			t.Errorf("HealthURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
}
