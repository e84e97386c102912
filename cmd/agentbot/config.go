package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"agentbot/cmd/agentbot/datadir"
	"agentbot/cmd/agentbot/flagargs"
)

// Config is every setting of agentbot. Each is a flag and an environment
// variable, declared once in the settings table below; a flag wins over the
// environment, and both go through the same parser (the setting's kind)
// and the same range check (validate.go's checks).
type Config struct {
	Bundles   []string
	BMADRoots []string
	Skills    string
	Deny      []string
	CoreRoot  string
	DataDir   string
	// LegacyData is set when DataDir is ./data of the working directory,
	// taken because it holds a store while --data and AGENTBOT_DATA are
	// unset (datadir.Default); the start warns about it.
	LegacyData bool
	// Project is the terminal's project (chat --project; "": the data
	// folder's terminal project). Slack channels have their own.
	Project string
	// MCPConfig is the MCP servers' config file (empty: no MCP tools).
	MCPConfig string
	// DatabaseURL selects PostgreSQL, shared by replicas, instead of bbolt
	// in DataDir; LeaseTTL and ReplicaID govern the work sharing.
	DatabaseURL string
	LeaseTTL    time.Duration
	ReplicaID   string

	APIKey      string
	BaseURL     string
	APIType     string
	APIVersion  string
	Model       string
	Temperature string
	MaxTokens   int
	// API, ModelFamily and ReasoningEffort go to model.Config's API,
	// Family and ReasoningEffort.
	API             string
	ModelFamily     string
	ReasoningEffort string

	MaxIterations int
	TurnTimeout   time.Duration
	CallTimeout   time.Duration
	ContextBudget int
	MaxFileBytes  int64

	SessionTokenBudget int
	DailyTokenBudget   int

	SlackAppToken string
	SlackBotToken string
	// SlackMode is socket (Socket Mode) or http (the Events API at
	// PublicURL/slack/events, verified with SlackSigningSecret).
	SlackMode          string
	SlackSigningSecret string
	// SlackClientID and SlackClientSecret distribute the app: each
	// workspace is answered with its installation's token.
	SlackClientID, SlackClientSecret string
	SlackAPIURL                      string
	MaxTurns                         int
	AllowedUsers                     []string
	AllowedChannels                  []string
	Admins                           []string
	// ApprovalTimeout is how long a tool call waits for approval in Slack
	// before it is denied.
	ApprovalTimeout time.Duration
	MaxUploadBytes  int64
	NoStreaming     bool

	LogFormat  string
	LogLevel   string
	HTTPAddr   string
	SessionTTL time.Duration

	// PublicURL is the address people and MCP authorization servers reach
	// agentbot at (empty: no public side); Listen is the address its
	// public side listens on.
	PublicURL string
	Listen    string
}

// setting declares one flag and its environment variable.
type setting struct {
	flag, env, usage string
	bind             binder
	def              string
}

// binder binds a setting's flag, with its default, to its Config field.
type binder = func(fs *flag.FlagSet, c *Config, name, def, usage string)

// secrets are the settings whose values must never be printed: their flags
// show no default (the usage text would print the environment's value).
var secrets = map[string]bool{"SLACK_APP_TOKEN": true, "SLACK_BOT_TOKEN": true, "SLACK_SIGNING_SECRET": true, "SLACK_CLIENT_SECRET": true, "OPENAI_API_KEY": true, "AGENTBOT_DATABASE_URL": true}

func str(p func(*Config) *string) binder {
	return func(fs *flag.FlagSet, c *Config, name, def, usage string) { fs.StringVar(p(c), name, def, usage) }
}

func list(p func(*Config) *[]string) binder {
	return func(fs *flag.FlagSet, c *Config, name, def, usage string) {
		l := &flagargs.List{Dst: p(c)}
		*l.Dst = flagargs.SplitList(def)
		fs.Var(l, name, usage+" (repeatable)")
	}
}

// parsed is the kind of a setting whose value parse reads, shown with its
// default in the usage; a value it cannot read is refused with bad.
func parsed[T any](parse func(string) (T, error), bad error) func(p func(*Config) *T) binder {
	return func(p func(*Config) *T) binder {
		return func(fs *flag.FlagSet, c *Config, name, def, usage string) {
			dst := p(c)
			*dst, _ = parse(def)
			fs.Func(name, usage+" (default "+def+")", func(v string) error {
				x, err := parse(strings.TrimSpace(v))
				if err != nil {
					return bad
				}
				*dst = x
				return nil
			})
		}
	}
}

// The parsed kinds: whole numbers, sizes in bytes and durations.
var (
	num  = parsed(strconv.Atoi, errInt)
	size = parsed(func(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) }, errors.New("want a number of bytes, such as 1048576"))
	dur  = parsed(time.ParseDuration, errDuration)
)

func boolean(p func(*Config) *bool) binder {
	return func(fs *flag.FlagSet, c *Config, name, def, usage string) {
		dst := p(c)
		*dst, _ = strconv.ParseBool(def)
		fs.BoolFunc(name, usage, func(v string) error {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return errBool
			}
			*dst = b
			return nil
		})
	}
}

// settings is the table of every setting: flag, env var, default, meaning.
var settings = []setting{
	{"bundles", "AGENTBOT_BUNDLES", "folder of bundles, or one bundle (none named, with no BMAD root or skills folder: the sample bundle)", list(func(c *Config) *[]string { return &c.Bundles }), ""},
	{"bmad-root", "AGENTBOT_BMAD_ROOT", "BMAD project root, source tree or v4 tree", list(func(c *Config) *[]string { return &c.BMADRoots }), ""},
	{"skills", "AGENTBOT_SKILLS", "folder of Agent Skills (SKILL.md folders) every agent may use", str(func(c *Config) *string { return &c.Skills }), ""},
	{"deny", "AGENTBOT_DENY", "file patterns agents may never read, added to the built-in secrets list (.env, *.pem, .git/, ...)", list(func(c *Config) *[]string { return &c.Deny }), ""},
	{"core-root", "AGENTBOT_CORE_ROOT", "folder replacing the embedded core for bundles", str(func(c *Config) *string { return &c.CoreRoot }), ""},
	{"mcp-config", "AGENTBOT_MCP_CONFIG", "MCP servers config file (YAML) whose tools agents may use (empty: none)", str(func(c *Config) *string { return &c.MCPConfig }), ""},
	{"data", "AGENTBOT_DATA", "data folder: agentbot.db and session folders (empty: $XDG_STATE_HOME/agentbot, else ~/.local/state/agentbot; ./data where it holds agentbot.db already)", str(func(c *Config) *string { return &c.DataDir }), ""},
	{"database-url", "AGENTBOT_DATABASE_URL", "PostgreSQL URL shared by replicas (empty: bbolt in the data folder)", str(func(c *Config) *string { return &c.DatabaseURL }), ""},
	{"lease-ttl", "AGENTBOT_LEASE_TTL", "how long a replica's hold on a thread lasts without renewal; a dead replica's threads move after it", dur(func(c *Config) *time.Duration { return &c.LeaseTTL }), "15s"},
	{"replica-id", "AGENTBOT_REPLICA_ID", "this replica's name in leases and logs (empty: host-pid-random)", str(func(c *Config) *string { return &c.ReplicaID }), ""},
	{"api-key", "OPENAI_API_KEY", "API key of the model endpoint", str(func(c *Config) *string { return &c.APIKey }), ""},
	{"base-url", "OPENAI_BASE_URL", "OpenAI-compatible base URL (empty: OpenAI)", str(func(c *Config) *string { return &c.BaseURL }), ""},
	{"api-type", "OPENAI_API_TYPE", "openai or azure", str(func(c *Config) *string { return &c.APIType }), "openai"},
	{"api-version", "OPENAI_API_VERSION", "API version (azure)", str(func(c *Config) *string { return &c.APIVersion }), ""},
	{"model", "AGENTBOT_MODEL", "model name (Azure: deployment)", str(func(c *Config) *string { return &c.Model }), "gpt-4.1"},
	{"api", "AGENTBOT_API", "wire API: auto (the Responses API for OpenAI's and Azure's reasoning models, Chat Completions otherwise), chat or responses", str(func(c *Config) *string { return &c.API }), "auto"},
	{"model-family", "AGENTBOT_MODEL_FAMILY", "the model's family when its name does not say it, as with an Azure deployment (gpt-5.6, o3, gpt-4.1); it picks the API, the max tokens field and the reasoning effort", str(func(c *Config) *string { return &c.ModelFamily }), ""},
	{"reasoning-effort", "AGENTBOT_REASONING_EFFORT", "none, minimal, low, medium, high or xhigh, sent to models that take it (empty: the model's default that lets tools work)", str(func(c *Config) *string { return &c.ReasoningEffort }), ""},
	{"temperature", "AGENTBOT_TEMPERATURE", "sampling temperature, 0 included (empty: provider default)", str(func(c *Config) *string { return &c.Temperature }), ""},
	{"max-tokens", "AGENTBOT_MAX_TOKENS", "max output tokens per call, sent as max_tokens, max_completion_tokens or max_output_tokens as the model requires (0: provider default)", num(func(c *Config) *int { return &c.MaxTokens }), "0"},
	{"max-iterations", "AGENTBOT_MAX_ITERATIONS", "model calls per turn at most", num(func(c *Config) *int { return &c.MaxIterations }), "50"},
	{"turn-timeout", "AGENTBOT_TURN_TIMEOUT", "time limit of one turn", dur(func(c *Config) *time.Duration { return &c.TurnTimeout }), "15m"},
	{"call-timeout", "AGENTBOT_CALL_TIMEOUT", "time limit of one model call", dur(func(c *Config) *time.Duration { return &c.CallTimeout }), "2m"},
	{"context-tokens", "AGENTBOT_CONTEXT_TOKENS", "the model's context window in tokens; requests stay under it", num(func(c *Config) *int { return &c.ContextBudget }), "128000"},
	{"session-token-budget", "AGENTBOT_SESSION_TOKEN_BUDGET", "tokens one session may use (0: no cap)", num(func(c *Config) *int { return &c.SessionTokenBudget }), "0"},
	{"daily-token-budget", "AGENTBOT_DAILY_TOKEN_BUDGET", "tokens a workspace may use per UTC day (0: no cap)", num(func(c *Config) *int { return &c.DailyTokenBudget }), "0"},
	{"max-file-bytes", "AGENTBOT_MAX_FILE_BYTES", "largest file the tools read or write", size(func(c *Config) *int64 { return &c.MaxFileBytes }), "1048576"},
	{"slack-app-token", "SLACK_APP_TOKEN", "Slack app-level token (xapp-, connections:write)", str(func(c *Config) *string { return &c.SlackAppToken }), ""},
	{"slack-bot-token", "SLACK_BOT_TOKEN", "Slack bot token (xoxb-) of the one workspace (unset with SLACK_CLIENT_ID)", str(func(c *Config) *string { return &c.SlackBotToken }), ""},
	{"slack-mode", "AGENTBOT_SLACK_MODE", "how Slack's events arrive: socket (Socket Mode, with SLACK_APP_TOKEN) or http (signed requests to AGENTBOT_PUBLIC_URL/slack/events, served on AGENTBOT_LISTEN, with SLACK_SIGNING_SECRET)", str(func(c *Config) *string { return &c.SlackMode }), "socket"},
	{"slack-signing-secret", "SLACK_SIGNING_SECRET", "Slack app signing secret ('Basic Information'): verifies the requests of AGENTBOT_SLACK_MODE=http", str(func(c *Config) *string { return &c.SlackSigningSecret }), ""},
	{"slack-client-id", "SLACK_CLIENT_ID", "Slack app's client id: install into other workspaces at AGENTBOT_PUBLIC_URL/slack/install, each answered with its own token", str(func(c *Config) *string { return &c.SlackClientID }), ""},
	{"slack-client-secret", "SLACK_CLIENT_SECRET", "Slack app's client secret (with SLACK_CLIENT_ID)", str(func(c *Config) *string { return &c.SlackClientSecret }), ""},
	{"slack-api-url", "SLACK_API_URL", "Slack Web API URL (tests)", str(func(c *Config) *string { return &c.SlackAPIURL }), ""},
	{"max-concurrent-turns", "AGENTBOT_MAX_CONCURRENT_TURNS", "threads whose turns run at once", num(func(c *Config) *int { return &c.MaxTurns }), "8"},
	{"allowed-users", "AGENTBOT_ALLOWED_USERS", "Slack user ids allowed (empty: everyone; TEAM:ID: in that workspace only)", list(func(c *Config) *[]string { return &c.AllowedUsers }), ""},
	{"allowed-channels", "AGENTBOT_ALLOWED_CHANNELS", "Slack channel ids allowed (empty: all)", list(func(c *Config) *[]string { return &c.AllowedChannels }), ""},
	{"admins", "AGENTBOT_ADMINS", "Slack user ids who may /agent reload and /agent tools (besides workspace admins) and approve any tool call (TEAM:ID: in that workspace only)", list(func(c *Config) *[]string { return &c.Admins }), ""},
	{"approval-timeout", "AGENTBOT_APPROVAL_TIMEOUT", "how long a tool call waits for approval in Slack before it is denied", dur(func(c *Config) *time.Duration { return &c.ApprovalTimeout }), "15m"},
	{"no-streaming", "AGENTBOT_NO_STREAMING", "show progress by updating a message instead of chat.startStream", boolean(func(c *Config) *bool { return &c.NoStreaming }), "false"},
	{"max-upload-bytes", "AGENTBOT_MAX_UPLOAD_BYTES", "largest user file downloaded into a session", size(func(c *Config) *int64 { return &c.MaxUploadBytes }), "10485760"},
	{"log-format", "AGENTBOT_LOG_FORMAT", "text or json", str(func(c *Config) *string { return &c.LogFormat }), "text"},
	{"log-level", "AGENTBOT_LOG_LEVEL", "debug, info, warn or error", str(func(c *Config) *string { return &c.LogLevel }), "info"},
	{"http-addr", "AGENTBOT_HTTP_ADDR", "address of /healthz and /metrics (empty: off)", str(func(c *Config) *string { return &c.HTTPAddr }), ""},
	{"public-url", "AGENTBOT_PUBLIC_URL", "address people and MCP authorization servers reach agentbot at, for OAuth redirects and its client ID metadata document (empty: no public side; needed by MCP servers with identity user or service)", str(func(c *Config) *string { return &c.PublicURL }), ""},
	{"listen", "AGENTBOT_LISTEN", "address the public side listens on when a public URL is set (not the health and metrics address)", str(func(c *Config) *string { return &c.Listen }), ":8080"},
	{"session-ttl", "AGENTBOT_SESSION_TTL", "remove sessions inactive this long (0: keep forever)", dur(func(c *Config) *time.Duration { return &c.SessionTTL }), "0"},
}

// groups sorts the settings by what they configure. A command names the
// groups it uses (its entry in commands, main.go): its flags, its -h and
// the environment it reads are those groups' settings, and no other. Every
// setting is in exactly one group (TestEverySettingInOneGroup): a new
// setting goes into one here.
var groups = map[string][]string{
	"agents":    {"bundles", "bmad-root", "skills", "mcp-config"},
	"store":     {"data", "database-url"},
	"replicas":  {"lease-ttl", "replica-id"},
	"model":     {"api-key", "base-url", "api-type", "api-version", "api", "model", "model-family", "reasoning-effort", "temperature", "max-tokens", "call-timeout", "context-tokens"},
	"turns":     {"deny", "core-root", "max-iterations", "turn-timeout", "max-file-bytes", "session-token-budget", "daily-token-budget"},
	"slack":     {"slack-mode", "slack-app-token", "slack-bot-token", "slack-signing-secret", "slack-client-id", "slack-client-secret", "slack-api-url", "max-concurrent-turns", "allowed-users", "allowed-channels", "admins", "approval-timeout", "no-streaming", "max-upload-bytes"},
	"logs":      {"log-format", "log-level"},
	"http":      {"http-addr"},
	"web":       {"public-url", "listen"},
	"retention": {"session-ttl"},
}

// settingsOf returns the settings of the named groups (or of a setting
// named alone, by its flag), in the settings table's order.
func settingsOf(names []string) []setting {
	in := map[string]bool{}
	for _, g := range names {
		in[g] = groups[g] == nil // a setting named alone
		for _, f := range groups[g] {
			in[f] = true
		}
	}
	var out []setting
	for _, s := range settings {
		if in[s.flag] {
			out = append(out, s)
		}
	}
	return out
}

// newFlags returns a flag set holding the settings of the named groups
// with their built-in defaults; every other field of the Config holds its
// default too, untouched by flags and environment. Call the returned
// function after parsing the command line: it applies the environment to
// every setting of the set no flag set, through the flag's own parser, so
// "$AGENTBOT_TURN_TIMEOUT=15" fails exactly as "--turn-timeout=15" does;
// then it checks every such setting's range. Its error names each bad
// setting by where its value came from, the value and the expected form:
// `$AGENTBOT_TURN_TIMEOUT="15": want ...` or `--turn-timeout=-1s: want ...`,
// one per line (errors.Join).
func newFlags(name string, use []string, getenv func(string) string) (*flag.FlagSet, *Config, func() error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	rest := flag.NewFlagSet(name, flag.ContinueOnError) // defaults only
	c := &Config{}
	own := settingsOf(use)
	mine := map[string]bool{}
	for _, s := range own {
		mine[s.flag] = true
	}
	for _, s := range settings {
		def := s.def
		if secrets[s.env] {
			def = ""
		}
		target := rest
		if mine[s.flag] {
			target = fs
		}
		s.bind(target, c, s.flag, def, fmt.Sprintf("%s [$%s]", s.usage, s.env))
	}
	return fs, c, func() error {
		byFlag := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { byFlag[f.Name] = true })
		var errs []error
		for _, s := range own {
			if byFlag[s.flag] {
				if err := checkSetting(s.flag, c); err != nil {
					errs = append(errs, fmt.Errorf("--%s=%s: %v", s.flag, shown(s, bare(err.value)), err.want))
				}
				continue
			}
			v, ok := lookup(getenv, s.env)
			if !ok {
				continue
			}
			if err := fs.Set(s.flag, v); err != nil {
				errs = append(errs, fmt.Errorf("$%s=%s: %v", s.env, shown(s, strconv.Quote(v)), reasonOf(err)))
			} else if err := checkSetting(s.flag, c); err != nil {
				errs = append(errs, fmt.Errorf("$%s=%s: %v", s.env, shown(s, strconv.Quote(v)), err.want))
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		if strings.TrimSpace(c.DataDir) == "" {
			c.DataDir, c.LegacyData = datadir.Default(envOf(getenv))
		}
		return validate(c, mine) // the defaults too
	}
}

// outOfRange is a setting's value out of its range: the value as shown
// and the expected form ("want ...").
type outOfRange struct{ value, want string }

// checkSetting runs the range check of the setting named flag, if it has
// one (see checks).
func checkSetting(flag string, c *Config) *outOfRange {
	for _, ch := range checks {
		if ch.Flag != flag {
			continue
		}
		if v, want, bad := ch.Bad(c); bad {
			return &outOfRange{value: v, want: "want " + want}
		}
	}
	return nil
}

// shown is v as an error message may show it: "(hidden)" for a secret.
func shown(s setting, v string) string {
	if secrets[s.env] {
		return "(hidden)"
	}
	return v
}

// bare unquotes a quoted value that reads the same without quotes, as a
// flag is written: --log-level=verbose, but --model="" and --model="a b".
func bare(v string) string {
	u, err := strconv.Unquote(v)
	if err != nil || u == "" || strings.ContainsAny(u, " \t\n\"'\\") || strconv.Quote(u) != v {
		return v
	}
	return u
}

// flagError matches the flag package's parse errors ("invalid value "15"
// for flag -turn-timeout: ..."), so they can name the setting as agentbot's
// other messages do: --turn-timeout=15: want ...
var flagError = regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-(\S+): (.*)$`)

// describeFlagError rewrites a flag package error in agentbot's form; other
// errors (an unknown flag, a missing value) are returned as they are.
func describeFlagError(err error) string {
	m := flagError.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	value := bare(m[1])
	for _, s := range settings {
		if s.flag == m[2] {
			value = shown(s, value)
		}
	}
	return fmt.Sprintf("--%s=%s: %s", m[2], value, m[3])
}

// reasonOf shortens the flag package's parse errors.
func reasonOf(err error) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "parse error") {
		return after
	}
	return msg
}

// envOf is getenv, or the process's environment when it is nil.
func envOf(getenv func(string) string) func(string) string {
	if getenv == nil {
		return os.Getenv
	}
	return getenv
}

func lookup(getenv func(string) string, key string) (string, bool) {
	if getenv == nil {
		return os.LookupEnv(key)
	}
	v := getenv(key)
	return v, v != ""
}

// setting kinds: parsers of the flag package, with errors that say the
// expected form.
var (
	errDuration = errors.New("want a duration with a unit, such as 90s, 15m or 2h")
	errInt      = errors.New("want a whole number")
	errBool     = errors.New("want true or false")
)

// flagSet lets a command add its own flags next to the shared settings.
type flagSet struct{ *flag.FlagSet }
