package mcp

import (
	"context"
	"errors"
	"sort"
	"sync"
)

// ServerReport is what Check found for one server.
type ServerReport struct {
	Name  string
	Tools []string // the tool names the model would see
	// Problems are tools left out (bad schema, name clash).
	Problems []Problem
	// Err is why the server is unusable (config problem, connect or list
	// failure); nil when it answered. It never holds a secret.
	Err error
}

// Check connects to every server named in the config (all at once), lists
// its tools and stops it again, for `agentbot check`. Reports come in config
// order, then the disabled servers by name. Servers disabled by a config problem
// are reported with that problem; configProblems are the ones LoadConfig
// returned (pass nil if you have none).
func Check(ctx context.Context, cfg *Config, configProblems []Problem) []ServerReport {
	if cfg == nil {
		cfg = &Config{}
	}
	m := NewManager(cfg, Options{Logger: discardLogger})
	defer m.Close()
	out := make([]ServerReport, len(cfg.Servers))
	var wg sync.WaitGroup
	for i, s := range cfg.Servers {
		wg.Add(1)
		go func() { // servers are checked at once, each within its timeout
			defer wg.Done()
			r := ServerReport{Name: s.Name}
			tools, probs, err := m.conns[s.Name].list(ctx, 0, Identity{})
			r.Err, r.Problems = err, probs
			for _, t := range tools {
				r.Tools = append(r.Tools, t.Name)
			}
			out[i] = r
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	var names []string
	reasons := map[string][]string{}
	for _, p := range configProblems {
		if !seen[p.Server] {
			seen[p.Server] = true
			names = append(names, p.Server)
		}
		reasons[p.Server] = append(reasons[p.Server], p.Reason)
	}
	sort.Strings(names)
	for _, n := range names {
		msg := reasons[n][0]
		for _, r := range reasons[n][1:] {
			msg += "; " + r
		}
		out = append(out, ServerReport{Name: n, Err: errors.New("config: " + msg)})
	}
	return out
}
