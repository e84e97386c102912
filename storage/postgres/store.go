// Package postgres is agentbot's PostgreSQL store, for teams that run
// several replicas on one shared database. It meets storage.Backend with
// storage/bolt's semantics: sessions with append-only transcripts (one
// row per message), dedupe marks as unique inserts, one inbound queue that
// every replica shares, channel defaults, daily usage, documents and
// leases on threads under the database's clock.
//
// Open applies the embedded migrations (migrations/NNNN_name.sql) under an
// advisory lock, so replicas that start together do not race, and refuses
// a database whose schema is newer than it knows. Input and output folders
// stay local, under the data directory, named as storage/bolt names them
// (storage.Folders).
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"agentbot/storage"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the pg_advisory_lock key Open holds while it migrates:
// "agentbot" in ASCII.
const migrationLock = 0x6167656e74626f74

// ConnectTimeout bounds how long connecting to the database may take.
const ConnectTimeout = 5 * time.Second

// opTimeout bounds one store operation, so a database that stops
// answering fails calls instead of hanging them.
const opTimeout = 30 * time.Second

// Store is agentbot's PostgreSQL store. It is safe for concurrent use, and
// several Stores (replicas) may share one database.
type Store struct {
	// Now is the clock for session times (Created, Updated). Open sets it
	// to time.Now; tests may replace it before use (SetNow). Leases, dedupe
	// marks and queue times use the database's clock, which replicas share.
	Now func() time.Time
	// shifted is set by SetNow (see shift).
	shifted bool

	pool *pgxpool.Pool
	dir  string

	// counts caches each session's stored message count, so SaveSession
	// sends only new messages in one statement; the database checks it.
	countMu sync.Mutex
	counts  map[string]int

	sweeper storage.Sweeper

	// admitPool is the committer's own connection, so admissions (whose
	// commit an ack waits for) never queue behind the turns' queries.
	admitPool   *pgxpool.Pool
	admitMu     sync.Mutex
	admitClosed bool
	admits      chan *admitReq
	admitDone   chan struct{}
}

// Option changes how Open connects.
type Option func(*pgxpool.Config)

// WithTracer traces every query of the store (benchmarks count round
// trips with it).
func WithTracer(t pgx.QueryTracer) Option {
	return func(c *pgxpool.Config) { c.ConnConfig.Tracer = t }
}

// WithMaxConns bounds the store's connection pool; admissions use one
// connection more, of their own.
func WithMaxConns(n int32) Option {
	return func(c *pgxpool.Config) { c.MaxConns = n }
}

// Open connects to the database at url, brings its schema up to date and
// returns the store; dataDir holds the sessions' local folders. An
// unreachable database fails within ConnectTimeout; errors never show the
// URL's password.
func Open(ctx context.Context, url, dataDir string, opts ...Option) (*Store, error) {
	if dataDir == "" {
		return nil, errors.New("open postgres store: empty data directory")
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("open postgres store: create data directory: %w", err)
	}
	cfg, err := parseConfig(url)
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, scrub(url, fmt.Errorf("open postgres store: %w", err))
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, scrub(url, fmt.Errorf("open postgres store %s: %w", describe(cfg.ConnConfig), err))
	}
	acfg := cfg.Copy()
	acfg.MaxConns, acfg.MinConns = 1, 0
	admitPool, err := pgxpool.NewWithConfig(ctx, acfg)
	if err == nil {
		err = admitPool.Ping(ctx) // connect now: the first ack does not wait for it
		if err != nil {
			admitPool.Close()
		}
	}
	if err != nil {
		pool.Close()
		return nil, scrub(url, fmt.Errorf("open postgres store: %w", err))
	}
	s := &Store{Now: time.Now, pool: pool, admitPool: admitPool, dir: dataDir, counts: map[string]int{},
		admits: make(chan *admitReq, maxAdmitBatch), admitDone: make(chan struct{})}
	go s.committer()
	return s, nil
}

// parseConfig parses url with the store's connect timeout; its error
// never holds the password.
func parseConfig(url string) (*pgxpool.Config, error) {
	if url == "" {
		return nil, errors.New("postgres: empty database URL")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, scrub(url, fmt.Errorf("postgres: bad database URL: %w", err))
	}
	cfg.ConnConfig.ConnectTimeout = ConnectTimeout
	return cfg, nil
}

// describe names a database without its password.
func describe(c *pgx.ConnConfig) string {
	return fmt.Sprintf("%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// scrubError is an error whose text has the password masked; Unwrap still
// reaches the cause, for errors.Is.
type scrubError struct {
	msg string
	err error
}

func (e *scrubError) Error() string { return e.msg }
func (e *scrubError) Unwrap() error { return e.err }

var (
	urlPassword = regexp.MustCompile(`://[^:/@?#]*:([^@/?#]*)@`)
	kvPassword  = regexp.MustCompile(`password\s*=\s*('[^']*'|[^\s]*)`)
)

// scrub masks the passwords that url holds in err's text.
func scrub(rawURL string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, p := range Secrets(rawURL) {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	return &scrubError{msg: msg, err: err}
}

// Secrets returns every form in which a database URL's password could
// show in a message (as written, URL-escaped, in key=value form or as a
// password parameter), so errors and reports can hide it.
func Secrets(rawURL string) []string {
	var secrets []string
	add := func(p ...string) {
		for _, s := range p {
			if s != "" {
				secrets = append(secrets, s)
			}
		}
	}
	if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			add(p, url.QueryEscape(p), url.PathEscape(p))
		}
	}
	for _, m := range urlPassword.FindAllStringSubmatch(rawURL, -1) {
		add(m[1])
	}
	for _, m := range kvPassword.FindAllStringSubmatch(rawURL, -1) {
		add(strings.Trim(m[1], "'"))
	}
	if u, perr := url.Parse(rawURL); perr == nil {
		if p := u.Query().Get("password"); p != "" {
			add(p, url.QueryEscape(p))
		}
	}
	return secrets
}

// migration is one embedded schema change.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order.
func migrations() ([]migration, error) {
	files, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, f := range files {
		base := filepath.Base(f)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", base)
		}
		data, err := migrationFiles.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(data)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.name, i+1)
		}
	}
	return ms, nil
}

// SchemaVersion is the newest schema this package knows.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

const createVersionTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version integer PRIMARY KEY,
	name    text NOT NULL,
	applied timestamptz NOT NULL DEFAULT now()
)`

// querier is what both a connection and a transaction offer.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// currentVersion reads the schema version; a database without the
// version table is at 0.
func currentVersion(ctx context.Context, q querier) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// newerError refuses a schema this binary does not know.
func newerError(have, known int) error {
	return fmt.Errorf("database schema version %d is newer than this agentbot supports (%d); upgrade agentbot", have, known)
}

// migrate applies the pending migrations, each in its own transaction,
// holding the advisory lock so that one replica migrates at a time.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("take the migration lock: %w", err)
	}
	defer func() {
		// A fresh context: the lock must go even when ctx is done.
		uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(uctx, `SELECT pg_advisory_unlock($1)`, int64(migrationLock)); err != nil {
			conn.Conn().Close(uctx) // closing the session releases it
		}
	}()
	if _, err := conn.Exec(ctx, createVersionTable); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	have, err := currentVersion(ctx, conn)
	if err != nil {
		return err
	}
	if have > len(ms) {
		return newerError(have, len(ms))
	}
	for _, m := range ms[have:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("apply migration %s: %w", m.name, err)
		}
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if err := backfillSources(ctx, tx); err != nil { // sources.go
			return err
		}
		return backfillOwners(ctx, tx) // owners.go
	})
}

// CheckReport is what Check found.
type CheckReport struct {
	// Version is the database's schema version (0: none yet).
	Version int
	// Known is the newest version this binary knows.
	Known int
	// Pending names the migrations Open would apply, in order.
	Pending []string
	// Latency is the fastest of a few round trips.
	Latency time.Duration
}

// Check connects to the database at url, measures the round-trip latency
// and reports the schema version and the pending migrations without
// applying any (agentbot check). A schema newer than this binary knows is
// an error; the report is filled in anyway.
func Check(ctx context.Context, url string) (CheckReport, error) {
	rep := CheckReport{Known: SchemaVersion()}
	cfg, err := parseConfig(url)
	if err != nil {
		return rep, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return rep, scrub(url, fmt.Errorf("check postgres store: %w", err))
	}
	defer conn.Close(context.Background())
	for i := range 3 {
		start := time.Now()
		if _, err := conn.Exec(ctx, `SELECT 1`); err != nil {
			return rep, scrub(url, fmt.Errorf("check postgres store %s: %w", describe(cfg.ConnConfig), err))
		}
		if d := time.Since(start); i == 0 || d < rep.Latency {
			rep.Latency = d
		}
	}
	if rep.Version, err = currentVersion(ctx, conn); err != nil {
		return rep, scrub(url, fmt.Errorf("check postgres store %s: %w", describe(cfg.ConnConfig), err))
	}
	if rep.Version > rep.Known {
		return rep, newerError(rep.Version, rep.Known)
	}
	ms, err := migrations()
	if err != nil {
		return rep, err
	}
	for _, m := range ms[rep.Version:] {
		rep.Pending = append(rep.Pending, m.name)
	}
	return rep, nil
}

// SetNow replaces the store's clock (tests move time with it). Dedupe
// marks and queue times follow the database's clock, so for them the test
// clock shifts the database's by its distance from time.Now.
func (s *Store) SetNow(now func() time.Time) {
	s.Now = now
	s.shifted = true
}

// shift is the test shift of the database's clock, in nanoseconds: 0
// unless SetNow was called.
func (s *Store) shift() int64 {
	if !s.shifted {
		return 0
	}
	return int64(s.Now().Sub(time.Now()))
}

// now reads the clock without its monotonic part.
func (s *Store) now() time.Time { return s.Now().Round(0) }

// ctx is the context of one operation: the caller's, so a cancelled turn
// or a shutdown ends the query, bounded by opTimeout.
func (s *Store) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, opTimeout)
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping postgres store: %w", err)
	}
	return nil
}

// Close waits for the admissions already handed over, then closes the
// connections.
func (s *Store) Close() error {
	s.admitMu.Lock()
	if !s.admitClosed {
		s.admitClosed = true
		close(s.admits)
	}
	s.admitMu.Unlock()
	<-s.admitDone
	s.admitPool.Close()
	s.pool.Close()
	return nil
}

// Dir is the data directory of the local folders.
func (s *Store) Dir() string { return s.dir }

// OutputDir returns the session's output folder, dataDir/outputs/<id>,
// creating it if needed.
func (s *Store) OutputDir(id string) (string, error) {
	return s.sessionDir("outputs", id)
}

// InputDir returns the folder for files users shared in the session,
// dataDir/inputs/<id>, creating it if needed.
func (s *Store) InputDir(id string) (string, error) {
	return s.sessionDir("inputs", id)
}

func (s *Store) sessionDir(kind, id string) (string, error) {
	return storage.Folders{Dir: s.dir}.Session(kind, id)
}

// removeSessionDirs deletes a session's outputs and inputs folders.
func (s *Store) removeSessionDirs(id string) error { return storage.Folders{Dir: s.dir}.Remove(id) }

// isUnique reports a unique-constraint violation.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// isForeignKey reports a foreign-key violation.
func isForeignKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}

// Channel returns the channel's settings: its default agent and its MCP
// servers; the zero value when none are set.
func (s *Store) Channel(ctx context.Context, team, channel string) (storage.ChannelSettings, error) {
	key, err := storage.ChannelKey(team, channel)
	if err != nil {
		return storage.ChannelSettings{}, fmt.Errorf("channel settings: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	c, err := channelSettings(ctx, s.pool, team, channel)
	if err != nil {
		return storage.ChannelSettings{}, fmt.Errorf("channel settings %s: %w", key, err)
	}
	return c, nil
}

// EditChannel sets the channel's settings to what edit makes of them, in
// one transaction that holds the channel's advisory lock, so concurrent
// edits of one channel apply one after the other.
func (s *Store) EditChannel(ctx context.Context, team, channel string, edit func(*storage.ChannelSettings) error) error {
	key, err := storage.ChannelKey(team, channel)
	if err != nil {
		return fmt.Errorf("set channel settings: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "agentbot.channel/"+key); err != nil {
			return err
		}
		c, err := channelSettings(ctx, tx, team, channel)
		if err != nil {
			return err
		}
		if err := edit(&c); err != nil {
			return err
		}
		if c, err = storage.CleanChannel(c); err != nil {
			return err
		}
		if c.Agent == "" {
			_, err = tx.Exec(ctx, `DELETE FROM channel_defaults WHERE team = $1 AND channel = $2`, team, channel)
		} else {
			_, err = tx.Exec(ctx, `INSERT INTO channel_defaults (team, channel, agent_id) VALUES ($1, $2, $3)
				ON CONFLICT (team, channel) DO UPDATE SET agent_id = excluded.agent_id`, team, channel, c.Agent)
		}
		if err != nil {
			return err
		}
		if len(c.Tools) == 0 {
			_, err = tx.Exec(ctx, `DELETE FROM channel_tools WHERE team = $1 AND channel = $2`, team, channel)
		} else {
			_, err = tx.Exec(ctx, `INSERT INTO channel_tools (team, channel, servers) VALUES ($1, $2, $3)
				ON CONFLICT (team, channel) DO UPDATE SET servers = excluded.servers`, team, channel, c.Tools)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("set channel settings %s: %w", key, err)
	}
	return nil
}

// channelSettings reads a channel's settings with q.
func channelSettings(ctx context.Context, q querier, team, channel string) (storage.ChannelSettings, error) {
	var c storage.ChannelSettings
	err := q.QueryRow(ctx, `SELECT agent_id FROM channel_defaults WHERE team = $1 AND channel = $2`, team, channel).Scan(&c.Agent)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return c, err
	}
	err = q.QueryRow(ctx, `SELECT servers FROM channel_tools WHERE team = $1 AND channel = $2`, team, channel).Scan(&c.Tools)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return c, err
	}
	if len(c.Tools) == 0 {
		c.Tools = nil
	}
	return c, nil
}

// AddDailyUsage adds tokens to a workspace's day and returns the day's
// total; with no tokens (0 or less) it only reads the total.
func (s *Store) AddDailyUsage(ctx context.Context, team, day string, tokens int) (int, error) {
	if tokens <= 0 {
		return s.dailyUsage(ctx, team, day)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var total int64
	err := s.pool.QueryRow(ctx, `INSERT INTO daily_usage (team, day, tokens) VALUES ($1, $2, $3::bigint)
		ON CONFLICT (team, day) DO UPDATE SET tokens = daily_usage.tokens + excluded.tokens
		RETURNING tokens`, team, day, int64(tokens)).Scan(&total)
	if err != nil {
		return 0, fmt.Errorf("add daily usage: %w", err)
	}
	return int(total), nil
}

// dailyUsage reads a workspace's tokens of a day.
func (s *Store) dailyUsage(ctx context.Context, team, day string) (int, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var total int64
	err := s.pool.QueryRow(ctx, `SELECT tokens FROM daily_usage WHERE team = $1 AND day = $2`, team, day).Scan(&total)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("daily usage: %w", err)
	}
	return int(total), nil
}
