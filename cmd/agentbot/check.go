package main

import (
	"context"
	"fmt"
	"time"

	"agentbot/cmd/agentbot/check"
	"agentbot/engine/catalog"
	"agentbot/engine/model"
)

// runCheck validates the configuration without serving (package check):
// the Slack tokens (format, auth.test, apps.connections.open), the model
// endpoint, the agents and the data directory. It prints one line per
// check and exits 1 when any check failed.
func runCheck(ctx context.Context, e *env) int {
	timeout := check.DefaultTimeout
	noSlack := false
	cfg, _, code := parse("check", e, func(fs *flagSet) {
		fs.DurationVar(&timeout, "check-timeout", check.DefaultTimeout, "time limit of each network check")
		fs.BoolVar(&noSlack, "no-slack", false, "check everything but Slack (for a start in the terminal with agentbot chat)")
	})
	if cfg == nil {
		return code
	}
	if timeout <= 0 {
		fmt.Fprintf(e.stderr, "agentbot check: --check-timeout must be positive, not %s\n", timeout)
		return 2
	}
	c := checkConfig(cfg)
	c.Getenv = e.getenv
	return check.Run(ctx, e.stdout, c, timeout, noSlack)
}

// checkConfig is what package check reads of cfg: the checks themselves,
// and the format checks of the secrets serve and chat need.
func checkConfig(cfg *Config) *check.Config {
	return &check.Config{
		SlackAppToken: cfg.SlackAppToken, SlackBotToken: cfg.SlackBotToken, SlackAPIURL: cfg.SlackAPIURL,
		SlackMode: cfg.SlackMode, SigningSecret: cfg.SlackSigningSecret, PublicURL: cfg.PublicURL,
		SlackClientID: cfg.SlackClientID, SlackClientSecret: cfg.SlackClientSecret,
		APIKey: cfg.APIKey, BaseURL: cfg.BaseURL, APIType: cfg.APIType, Model: cfg.Model,
		NewModel: func(callTimeout time.Duration) (*model.Client, error) {
			one := *cfg
			one.CallTimeout = callTimeout
			return newModel(&one, nil, nil)
		},
		Bundles: cfg.Bundles, BMADRoots: cfg.BMADRoots, Skills: cfg.Skills,
		Catalog:     func() *catalog.Catalog { return loadCatalog(cfg) },
		MCPConfig:   cfg.MCPConfig,
		DatabaseURL: cfg.DatabaseURL, DataDir: cfg.DataDir,
	}
}
