// Package check is agentbot check: it validates a configuration without
// serving (the Slack tokens' format, auth.test and Socket Mode, the model
// endpoint with a real tool call, the agents, the MCP servers, the store)
// and prints one line per check, secrets redacted. It also holds the
// format checks of the secrets that serve and chat refuse to start without
// (Tokens, APIKey).
package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"agentbot/bot/slackcheck"
	"agentbot/cmd/agentbot/mcptools"
	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/llm"
	"agentbot/engine/mcp"
	"agentbot/engine/model"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/credentials"
	"agentbot/storage/postgres"
)

// DefaultTimeout bounds each network check of agentbot check.
const DefaultTimeout = 10 * time.Second

// Config is what the checks read of agentbot's configuration, and how
// they make the model client and the catalog as the bot would.
type Config struct {
	SlackAppToken, SlackBotToken string
	// SlackMode is socket (Socket Mode, the app token) or http (the Events
	// API at PublicURL/slack/events, SigningSecret verifying requests).
	SlackMode, SigningSecret, PublicURL string
	// SlackClientID and SlackClientSecret, when set, distribute the app:
	// each workspace's bot token comes from its installation
	// (/slack/install), and SLACK_BOT_TOKEN is not used.
	SlackClientID, SlackClientSecret string
	// SlackAPIURL is the Slack Web API URL ("": Slack's).
	SlackAPIURL string

	APIKey, BaseURL, APIType string
	// Model is the model name (Azure: deployment).
	Model string
	// NewModel returns the model client, each call bounded by callTimeout.
	NewModel func(callTimeout time.Duration) (*model.Client, error)

	// Bundles, BMADRoots and Skills are where the agents come from;
	// Catalog loads them.
	Bundles, BMADRoots []string
	Skills             string
	Catalog            func() *catalog.Catalog

	// MCPConfig is the MCP servers' config file ("": none); Getenv
	// resolves the variables it names.
	MCPConfig string
	Getenv    func(string) string

	// DatabaseURL is PostgreSQL's URL ("": bbolt in DataDir).
	DatabaseURL, DataDir string
}

// Run runs every check of cfg, each network one within timeout (Slack's
// not at all with noSlack), prints one line per check to w and returns
// the exit code: 1 when any check failed, else 0.
func Run(ctx context.Context, w io.Writer, cfg *Config, timeout time.Duration, noSlack bool) int {
	var mc *mcp.Config
	var mcProbs []mcp.Problem
	var mcErr error
	secrets := append([]string{cfg.SlackBotToken, cfg.SlackAppToken, cfg.SigningSecret, cfg.APIKey}, postgres.Secrets(cfg.DatabaseURL)...)
	if cfg.MCPConfig != "" {
		mc, mcProbs, mcErr = mcp.LoadConfig(cfg.MCPConfig, cfg.Getenv)
		secrets = append(secrets, mcptools.Secrets(mc)...)
	}
	r := &checkReport{w: newRedactor(w, secrets...)}
	c := &checker{cfg: cfg, timeout: timeout, r: r}

	c.slackChecks(ctx, noSlack)
	if c.apiKey() {
		c.modelEndpoint(ctx)
	} else {
		r.skip("model endpoint", "OPENAI_API_KEY is missing or a placeholder")
	}
	cat := c.agents()
	if cfg.MCPConfig != "" {
		c.mcpServers(ctx, cat, mc, mcProbs, mcErr)
	}
	if cfg.DatabaseURL != "" {
		c.database(ctx)
	} else {
		c.dataDir()
	}
	return r.finish()
}

// slackChecks checks the Slack side: the tokens' formats, auth.test and
// Socket Mode, or HTTP mode's signing secret and request URL (with
// --no-slack, nothing).
func (c *checker) slackChecks(ctx context.Context, noSlack bool) {
	cfg, r := c.cfg, c.r
	ok := map[string]bool{}
	for _, t := range slackTokens {
		if noSlack {
			break
		}
		if t.env == "SLACK_APP_TOKEN" && HTTPMode(cfg) {
			c.httpMode()
			continue
		}
		if t.env == "SLACK_BOT_TOKEN" && cfg.SlackClientID != "" {
			continue // each installation has its own
		}
		ok[t.env] = c.tokenFormat(t)
	}
	botOK, appOK := ok["SLACK_BOT_TOKEN"], ok["SLACK_APP_TOKEN"]
	switch {
	case noSlack:
		r.skip("Slack", "--no-slack")
	case cfg.SlackClientID != "":
		r.skip("Slack auth.test", "SLACK_CLIENT_ID is set: each installation has its own token (agentbot installs list)")
	case botOK:
		c.slackAuth(ctx)
	default:
		r.skip("Slack auth.test", "SLACK_BOT_TOKEN is missing or malformed")
	}
	if appOK {
		c.socketMode(ctx)
	} else if !noSlack && !HTTPMode(cfg) {
		r.skip("Slack Socket Mode", "SLACK_APP_TOKEN is missing or malformed")
	}
}

// checker runs the checks of one configuration.
type checker struct {
	cfg     *Config
	timeout time.Duration
	r       *checkReport
}

// tokenFormat checks that a token is set and starts with prefix.
func (c *checker) tokenFormat(t slackToken) bool {
	hint := fmt.Sprintf("set %s to %s; %s", t.env, t.what, slackDoc)
	switch t.problem(c.cfg) {
	case "missing":
		c.r.fail(t.env, "missing", hint)
		return false
	case problemPlaceholder: // never shown: it may be a real token after all
		c.r.fail(t.env, problemPlaceholder+" copied from an example, not a real token", hint)
		return false
	case "malformed":
		c.r.fail(t.env, fmt.Sprintf("malformed: %s, want a token starting with %q", redactToken(t.value(c.cfg)), t.prefix), hint)
		return false
	}
	c.r.ok(t.env, redactToken(t.value(c.cfg)))
	return true
}

// httpMode checks what HTTP mode needs in place of the app token (SlackMode).
func (c *checker) httpMode() {
	const name = "Slack HTTP mode"
	if err := SlackMode(c.cfg); err != nil {
		c.r.fail(name, err.Error(), httpDoc)
		return
	}
	c.r.ok(name, "SLACK_SIGNING_SECRET is set; Slack's request URL is "+RequestURL(c.cfg))
	c.requestURL()
}

// requestURL asks the request URL, unsigned, whether it answers as
// agentbot does: 401 (the signature is checked) proves it reaches a
// running agentbot in HTTP mode; anything else, or no answer, is a
// warning (serve may simply not run yet), with what Slack would see.
func (c *checker) requestURL() {
	const name = "Slack request URL"
	url := RequestURL(c.cfg)
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("{}"))
	if err != nil {
		c.r.fail(name, err.Error(), httpDoc)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	switch {
	case err != nil:
		c.r.warn(name, "no answer from "+url+" ("+err.Error()+")", "Slack sends its requests there: start agentbot serve with AGENTBOT_SLACK_MODE=http, and make AGENTBOT_PUBLIC_URL reach AGENTBOT_LISTEN; "+httpDoc)
		return
	case resp.StatusCode != http.StatusUnauthorized:
		resp.Body.Close()
		c.r.warn(name, fmt.Sprintf("%s answers an unsigned request with %s, not 401: it may not be agentbot", url, resp.Status), httpDoc)
		return
	}
	resp.Body.Close()
	c.r.ok(name, url+" reaches agentbot, which refuses an unsigned request (401)")
}

// slack is the probe of the Slack tokens (slackcheck.Probe).
func (c *checker) slack() slackcheck.Probe {
	return slackcheck.Probe{BotToken: c.cfg.SlackBotToken, AppToken: c.cfg.SlackAppToken, APIURL: c.cfg.SlackAPIURL, Timeout: c.timeout}
}

// slackAuth calls auth.test with the bot token.
func (c *checker) slackAuth(ctx context.Context) {
	const name = "Slack auth.test"
	id, err := c.slack().Auth(ctx)
	if err != nil {
		c.r.fail(name, "SLACK_BOT_TOKEN: "+err.Error(), slackcheck.BotTokenHint)
		return
	}
	c.r.ok(name, fmt.Sprintf("team %q (%s), bot user @%s (%s)", id.Team, id.TeamID, id.User, id.UserID))
}

// socketMode checks the app-level token and that Socket Mode is on.
func (c *checker) socketMode(ctx context.Context) {
	const name = "Slack Socket Mode"
	if err := c.slack().SocketMode(ctx); err != nil {
		c.r.fail(name, "SLACK_APP_TOKEN: "+err.Error(), slackcheck.SocketModeHint(err))
		return
	}
	c.r.ok(name, "apps.connections.open accepted the app token; Socket Mode is on")
}

// apiKey applies serve's and chat's rule to the model's API key (APIKey):
// what they refuse to start with fails here too.
func (c *checker) apiKey() bool {
	const name = "model API key"
	if err := APIKey(c.cfg); err != nil {
		c.r.fail(name, err.Error(), "")
		return false
	}
	if k := strings.TrimSpace(c.cfg.APIKey); k != "" {
		c.r.ok(name, "OPENAI_API_KEY "+redactToken(k))
	} else {
		c.r.ok(name, "none set, as "+endpointName(c.cfg)+" may need none")
	}
	return true
}

// modelEndpoint lists the endpoint's models (an endpoint without a models
// list, 404/405, is fine), then tries the model for real with model.Check.
func (c *checker) modelEndpoint(ctx context.Context) {
	name := "model endpoint " + endpointName(c.cfg)
	lctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	mc, err := c.cfg.NewModel(c.timeout)
	if err != nil {
		c.r.fail(name, err.Error(), "fix AGENTBOT_TEMPERATURE")
		return
	}
	ids, err := mc.ListModels(lctx)
	switch st := httpStatus(err); {
	case err == nil:
		c.r.ok(name, fmt.Sprintf("%d model(s) listed", len(ids)))
		c.modelListed(ids)
	case errors.Is(err, model.ErrConfig):
		c.r.fail(name, err.Error(), "set OPENAI_API_TYPE, OPENAI_BASE_URL, AGENTBOT_MODEL, AGENTBOT_API and AGENTBOT_REASONING_EFFORT; "+modelDoc)
		return
	case st == http.StatusNotFound || st == http.StatusMethodNotAllowed:
		c.r.ok(name, fmt.Sprintf("no models list (HTTP %d); trying %q directly", st, c.cfg.Model))
	default:
		c.r.fail(name, c.modelError(lctx, err), modelHint(err))
		return
	}
	pctx, cancel := context.WithTimeout(ctx, 3*c.timeout)
	defer cancel()
	for _, f := range mc.Check(pctx) {
		switch f.Status {
		case model.CheckOK:
			c.r.ok(f.Name, f.Detail)
		case model.CheckWarn:
			c.r.warn(f.Name, f.Detail, f.Hint)
		default:
			c.r.fail(f.Name, f.Detail, f.Hint+"; "+modelDoc)
		}
	}
}

// modelListed warns when the configured model is not in the endpoint's list.
func (c *checker) modelListed(ids []string) {
	name := "model " + c.cfg.Model
	if slices.Contains(ids, c.cfg.Model) {
		c.r.ok(name, "listed by the endpoint")
		return
	}
	c.r.warn(name, "not in the endpoint's models list",
		"fine if the provider serves it anyway (Azure deployments are not listed); otherwise set AGENTBOT_MODEL to one of: "+summarize(ids, 8))
}

// modelError says what went wrong with a model endpoint call.
func (c *checker) modelError(ctx context.Context, err error) string {
	if st := httpStatus(err); st != 0 {
		return fmt.Sprintf("HTTP %d: %s", st, err.Error())
	}
	if ctx.Err() != nil || isTimeout(err) {
		return fmt.Sprintf("unreachable: no answer within %s", c.timeout)
	}
	return "unreachable: " + err.Error()
}

// modelHint is the hint for a failed model endpoint call.
func modelHint(err error) string {
	if hint := llm.HintOf(err); hint != "" {
		return hint + "; " + modelDoc
	}
	switch st := httpStatus(err); {
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return "check OPENAI_API_KEY (and OPENAI_API_TYPE/OPENAI_API_VERSION for Azure); " + modelDoc
	case st == http.StatusNotFound:
		return "check AGENTBOT_MODEL (the Azure deployment name with azure) and OPENAI_BASE_URL; " + modelDoc
	case st != 0:
		return "the endpoint answered with an error; check OPENAI_BASE_URL and the provider's status; " + modelDoc
	}
	return "check OPENAI_BASE_URL (an OpenAI-compatible base URL, e.g. https://api.openai.com/v1 or http://localhost:11434/v1) and that the server is up; " + modelDoc
}

// endpointName names the model endpoint in the report.
func endpointName(cfg *Config) string {
	if cfg.BaseURL == "" {
		return "(OpenAI default)"
	}
	return cfg.BaseURL
}

// httpStatus is the HTTP status carried by a model error, 0 when there is
// none.
func httpStatus(err error) int {
	var me *llm.Error
	if errors.As(err, &me) {
		return me.Status
	}
	return 0
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// agents loads the catalog: any problem fails the check, and so does an
// empty catalog.
func (c *checker) agents() *catalog.Catalog {
	const name = "agents"
	cat := c.cfg.Catalog()
	var srcs []string
	if len(c.cfg.Bundles) > 0 {
		srcs = append(srcs, "--bundles "+strings.Join(c.cfg.Bundles, ","))
	}
	if len(c.cfg.BMADRoots) > 0 {
		srcs = append(srcs, "--bmad-root "+strings.Join(c.cfg.BMADRoots, ","))
	}
	if c.cfg.Skills != "" {
		srcs = append(srcs, "--skills "+c.cfg.Skills)
	}
	where := strings.Join(srcs, " ")
	if where == "" {
		where = "the sample bundle (no --bundles, --bmad-root or --skills)"
	}
	if len(cat.Agents) == 0 {
		hint := "point AGENTBOT_BUNDLES (--bundles) at a bundle folder or AGENTBOT_BMAD_ROOT (--bmad-root) at a BMAD project; " + agentsDoc
		if len(cat.Problems) > 0 {
			hint = "fix what is listed, or " + hint
		}
		c.r.fail(name, fmt.Sprintf("no agent found in %s%s", where, problemLines(cat.Problems)), hint)
		return cat
	}
	entries := agentIDs(cat.EntryPoints())
	detail := fmt.Sprintf("%d agent(s) in %s; entry points: %s", len(cat.Agents), where, summarize(entries, 12))
	if len(cat.Skills) > 0 {
		detail += fmt.Sprintf("; %d skill(s)", len(cat.Skills))
	}
	switch {
	case len(cat.Problems) > 0:
		c.r.fail(name, detail+problemLines(cat.Problems), "fix or remove what is listed; the other agents still load")
	case len(entries) == 0:
		c.r.warn(name, detail, "mark the agents people should pick with entry_point: true in bundle.yaml")
	default:
		c.r.ok(name, detail)
	}
	return cat
}

// mcpServers checks the MCP config: the file, then each server (all at
// once: connect, list the tools, stop), then the servers agents name.
func (c *checker) mcpServers(ctx context.Context, cat *catalog.Catalog, mc *mcp.Config, probs []mcp.Problem, loadErr error) {
	const name = "MCP config"
	if loadErr != nil {
		c.r.fail(name, loadErr.Error(), "fix the file AGENTBOT_MCP_CONFIG (--mcp-config) names: a YAML mapping with servers: [...]")
		return
	}
	c.r.ok(name, fmt.Sprintf("%d usable server(s) in %s", len(mc.Servers), c.cfg.MCPConfig))
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	counts := map[string]int{}
	for _, rep := range mcp.Check(ctx, mc, probs) {
		counts[rep.Name] = len(rep.Tools)
		label := "MCP server " + rep.Name
		if rep.Name == "" {
			label = name
		}
		if rep.Err != nil {
			c.r.fail(label, rep.Err.Error(), "fix the server's entry in the MCP config, set the variables it names, or start the server; the other servers still work")
			continue
		}
		c.r.ok(label, fmt.Sprintf("%d tool(s): %s", len(rep.Tools), summarize(rep.Tools, 20)))
		for _, p := range rep.Problems {
			c.r.warn(label, p.Reason, "the other tools of the server still work")
		}
	}
	if over := toolOverflow(cat, counts); len(over) > 0 {
		c.r.warn("tools per request", strings.Join(over, "; "), fmt.Sprintf("each turn offers the built-in tools, find_tools and the MCP tools most relevant to the message (a request carries at most %d, OpenAI's limit); narrow the servers' tools with include/exclude in the MCP config to choose them yourself", engine.MaxToolDefinitions))
	}
	var bad []string
	for _, p := range mcptools.AgentServerProblems(cat, mc) {
		bad = append(bad, fmt.Sprintf("agent %s: MCP server %q: %s", p.Agent, p.Server, p.Reason))
	}
	if len(bad) > 0 {
		c.r.warn("MCP servers of agents", strings.Join(bad, "; "), "add the server to the MCP config or remove it from the agent's mcp list in bundle.yaml; the agents run without it")
	}
}

// toolOverflow names the agents whose MCP servers' tools (counts, by
// server), with the built-in tools, are more than a request may carry.
func toolOverflow(cat *catalog.Catalog, counts map[string]int) []string {
	if cat == nil {
		return nil
	}
	builtin := len(engine.ToolDefinitions())
	var out []string
	for _, a := range cat.Agents {
		n := 0
		for _, srv := range a.MCP {
			n += counts[srv]
		}
		if n > 0 && n+builtin > engine.MaxToolDefinitions {
			out = append(out, fmt.Sprintf("agent %s: %d MCP tools (%s) and up to %d built-in ones, over %d",
				a.ID, n, strings.Join(a.MCP, ", "), builtin, engine.MaxToolDefinitions))
		}
	}
	return out
}

// problemLines lists catalog problems, one "path: reason" per line.
func problemLines(problems []catalog.Problem) string {
	if len(problems) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "; %d problem(s):", len(problems))
	for _, p := range problems {
		fmt.Fprintf(&b, "\n    %s: %s", p.Path, p.Reason)
	}
	return b.String()
}

// database connects to PostgreSQL, measures the latency and says which
// migrations the next start would apply, applying none.
func (c *checker) database(ctx context.Context) {
	name := "database (AGENTBOT_DATABASE_URL)"
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	rep, err := postgres.Check(ctx, c.cfg.DatabaseURL)
	if err != nil {
		c.r.fail(name, err.Error(), "check the URL (postgres://user:password@host:5432/db?sslmode=...), that the server is up and reachable, and that this agentbot is not older than the one that last migrated it")
		return
	}
	migrations := "schema up to date"
	if len(rep.Pending) > 0 {
		migrations = fmt.Sprintf("%d migration(s) to apply at the next start: %s", len(rep.Pending), strings.Join(rep.Pending, ", "))
	}
	c.r.ok(name, fmt.Sprintf("connected; schema version %d of %d, %s; round trip %s", rep.Version, rep.Known, migrations, rep.Latency.Round(10*time.Microsecond)))
}

// dataDir opens and closes the store.
func (c *checker) dataDir() {
	name := "data dir " + c.cfg.DataDir
	st, err := bolt.Open(c.cfg.DataDir)
	if err != nil {
		hint := "set AGENTBOT_DATA (--data) to a writable folder"
		if errors.Is(err, bolt.ErrLocked) {
			hint = "stop the agentbot using it (agentbot serve holds the database), or point AGENTBOT_DATA elsewhere"
		}
		c.r.fail(name, err.Error(), hint)
		return
	}
	c.installs(st)
	if err := st.Close(); err != nil {
		c.r.fail(name, "close: "+err.Error(), "set AGENTBOT_DATA (--data) to a writable folder")
		return
	}
	c.r.ok(name, "opened and closed "+bolt.DBName)
}

// installs reports, for a distributed app (SLACK_CLIENT_ID), the
// workspaces agentbot is installed in and whether a rotated token has
// expired (it is refreshed before it does while serve runs). No secret is
// read: the listing needs no key.
func (c *checker) installs(st storage.Credentials) {
	const name = "Slack installations"
	if c.cfg.SlackClientID == "" {
		return
	}
	list, err := st.ListCredentials(context.Background(), credentials.InstallFilter)
	if err != nil {
		c.r.fail(name, err.Error(), "")
		return
	}
	ins := credentials.InstallsOf(list)
	if len(ins) == 0 {
		c.r.warn(name, "none yet", "open AGENTBOT_PUBLIC_URL/slack/install to add agentbot to a workspace; "+slackDoc)
		return
	}
	var expired []string
	for _, in := range ins {
		if !in.Expiry.IsZero() && time.Now().After(in.Expiry) {
			expired = append(expired, in.ID)
		}
	}
	if len(expired) > 0 {
		c.r.warn(name, fmt.Sprintf("%d, of which %d with an expired token: %s", len(ins), len(expired), summarize(expired, 5)),
			"serve refreshes rotated tokens before they expire; one that expired while it was stopped is refreshed at its next start, or install again")
		return
	}
	c.r.ok(name, fmt.Sprintf("%d workspace(s) or organisation(s), tokens valid", len(ins)))
}

// summarize lists at most n items, then how many more there are.
func summarize(items []string, n int) string {
	if len(items) == 0 {
		return "(none listed)"
	}
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// redactToken shows a token's kind only: "xoxb-…(redacted)".
func redactToken(token string) string {
	if i := strings.IndexByte(token, '-'); i >= 3 && i <= 4 && isLower(token[:i]) {
		return token[:i+1] + "…(redacted)"
	}
	return "(redacted)"
}

func isLower(s string) bool {
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// redactor is a writer that replaces every secret it was given by its
// redacted form. Each Write must hold whole secrets (fmt.Fprint* and the
// flag package write a line or more at a time).
type redactor struct {
	w io.Writer
	r *strings.Replacer
}

// newRedactor returns a redactor writing to w. The documentation's own
// examples ("sk-…") are no secret: the messages name them.
func newRedactor(w io.Writer, secrets ...string) *redactor {
	var pairs []string
	for _, s := range secrets {
		if s = strings.TrimSpace(s); len(s) >= 4 && !isExample(s) {
			pairs = append(pairs, s, redactToken(s))
		}
	}
	return &redactor{w: w, r: strings.NewReplacer(pairs...)}
}

// Write writes p with the secrets replaced; it reports len(p) on success.
func (r *redactor) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.r.Replace(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// checkReport prints the lines of agentbot check and counts the results.
type checkReport struct {
	w                     io.Writer
	passed, failed, warns int
}

func (r *checkReport) line(mark, name, detail, hint string) {
	fmt.Fprintf(r.w, "%s %s: %s\n", mark, name, detail)
	if hint != "" {
		fmt.Fprintf(r.w, "    hint: %s\n", hint)
	}
}

// ok reports a passed check.
func (r *checkReport) ok(name, detail string) { r.passed++; r.line("✓", name, detail, "") }

// fail reports a failed check and how to fix it.
func (r *checkReport) fail(name, detail, hint string) { r.failed++; r.line("✗", name, detail, hint) }

// warn reports something worth a look that does not fail the check.
func (r *checkReport) warn(name, detail, hint string) { r.warns++; r.line("!", name, detail, hint) }

// skip reports a check not run because an earlier one failed.
func (r *checkReport) skip(name, why string) { r.line("-", name, "skipped: "+why, "") }

// finish prints the summary and returns the exit code.
func (r *checkReport) finish() int {
	fmt.Fprintln(r.w)
	if r.failed > 0 {
		fmt.Fprintf(r.w, "agentbot check: %d failed, %d ok, %d warning(s)\n", r.failed, r.passed, r.warns)
		return 1
	}
	fmt.Fprintf(r.w, "agentbot check: all %d ok, %d warning(s)\n", r.passed, r.warns)
	return 0
}

// agentIDs lists the ids of agents.
func agentIDs(agents []*catalog.Agent) []string {
	ids := make([]string, 0, len(agents))
	for _, a := range agents {
		ids = append(ids, a.ID)
	}
	return ids
}
