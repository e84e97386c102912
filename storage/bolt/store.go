// Package bolt is agentbot's embedded store, in bbolt: it plays every role
// of the storage contract (storage.Backend) for one process. It keeps
// sessions and their transcripts, documents, dedupe marks, the inbound
// queue with its journal, leases, channel settings and daily usage; it
// migrates older schemas on open, serves other agentbot commands on a
// control socket, writes backups, and migrates its data to another store
// (Migrate).
//
// One data directory holds agentbot.db and, per session, outputs/<id>/ and
// inputs/<id>/. Only one process may use a data directory at a time.
package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bbolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"agentbot/storage"
)

// DBName is the database file inside the data directory.
const DBName = "agentbot.db"

// lockTimeout is how long Open waits for another process to release the
// database before it gives up with ErrLocked.
const lockTimeout = time.Second

// schemaVersion is the layout this package writes; Open refuses newer ones.
const schemaVersion = 7

// Root bucket names.
var (
	bucketMeta     = []byte("meta")
	bucketSessions = []byte("sessions")
	bucketKeys     = []byte("keys")
	bucketSeen     = []byte("seen")
	bucketChannels = []byte("channels")
	bucketQueue    = []byte("queue")
)

// Store plays every role of the storage contract, and journals its
// admissions before it acks them.
var (
	_ storage.Backend = (*Store)(nil)
)

// ErrLocked means another process holds the data directory's database.
var ErrLocked = errors.New("agentbot.db is locked")

// lockedError names the busy data directory and matches ErrLocked.
type lockedError struct{ dir string }

func (e *lockedError) Error() string {
	return fmt.Sprintf("data directory %s is in use by another agentbot process (%s is locked)", e.dir, DBName)
}

func (e *lockedError) Is(target error) bool { return target == ErrLocked }

// Store is agentbot's bbolt store. It is safe for concurrent use.
type Store struct {
	// Now is the clock used for Created, Updated, Seen expiry and queue
	// times. Open sets it to time.Now; tests may replace it before use.
	Now func() time.Time

	dir string
	db  *bbolt.DB

	sweeper storage.Sweeper

	// jreqs feeds the journaler, which writes admissions to the journal
	// in groups, one fsync each, then hands them to the committer (admits),
	// which groups them into commits.
	admitMu     sync.Mutex
	admitClosed bool
	jreqs       chan *admitReq
	admits      chan *admitReq
	admitDone   chan struct{}

	// jmu guards the journal file, its size and pendingAdmits.
	jmu           sync.Mutex
	journal       *os.File // see JournalName
	jsize         int64    // bytes of complete entries in the journal
	pendingAdmits int      // journaled, not yet committed

	// commitFault, set by tests before use, fails admission commits
	// while it returns an error (a disk that refuses writes).
	commitFault func() error
}

// Open opens (creating if needed) the data directory dir and its database.
// When another process holds the database, Open fails within about a second
// with an error matching ErrLocked.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("open store: empty data directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open store: create data directory: %w", err)
	}
	path := filepath.Join(dir, DBName)
	if err := checkFile(path); err != nil {
		return nil, err
	}
	db, err := openDB(dir, path)
	if err != nil {
		return nil, err
	}
	if db, err = prepareDB(db, dir, path); err != nil {
		return nil, err
	}
	s := &Store{Now: time.Now, dir: dir, db: db, jreqs: make(chan *admitReq, maxAdmitBatch),
		admits: make(chan *admitReq, maxAdmitBatch), admitDone: make(chan struct{})}
	if s.journal, err = openJournal(dir); err == nil {
		err = s.replayJournal()
	}
	if err != nil {
		if s.journal != nil {
			s.journal.Close()
		}
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	go s.journaler()
	go s.committer()
	return s, nil
}

// openDB opens the database file at path (in the data directory dir) with
// bbolt. Another process holding it past lockTimeout is a *lockedError; a
// file bbolt finds invalid, or panics or faults on, is a *DamagedError.
func openDB(dir, path string) (*bbolt.DB, error) {
	var db *bbolt.DB
	err := guard(path, func() error {
		var err error
		db, err = bbolt.Open(path, 0o600, &bbolt.Options{Timeout: lockTimeout})
		if err == nil {
			db.MaxBatchDelay = maxBatchDelay
		}
		return err
	})
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, &lockedError{dir: dir}
	}
	var damaged *DamagedError
	if errors.As(err, &damaged) {
		return nil, err
	}
	if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) {
		return nil, &DamagedError{Path: path, Reason: err.Error()}
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return db, nil
}

// prepareDB readies the open database db at path for use: it creates the
// root buckets and migrates an older schema (initBuckets), then compacts the
// file after a migration and returns the database to use. On failure db is
// closed; corrupt data is a *DamagedError.
func prepareDB(db *bbolt.DB, dir, path string) (*bbolt.DB, error) {
	var migrated bool
	if err := guard(path, func() error {
		return db.Update(func(tx *bbolt.Tx) (err error) { migrated, err = initBuckets(tx, dir); return err })
	}); err != nil {
		_ = db.Close()
		var damaged *DamagedError
		if errors.As(err, &damaged) {
			return nil, err
		}
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if !migrated {
		return db, nil
	}
	db, err := compact(path, db) // compact closes db when it fails
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return db, nil
}

// initBuckets creates the root buckets, checks the schema version and
// migrates an older one (dir is the data directory, for documents kept
// only as files); migrated reports a migration.
func initBuckets(tx *bbolt.Tx, dir string) (migrated bool, err error) {
	if err := createBuckets(tx, bucketMeta, bucketSessions, bucketKeys, bucketSeen, bucketChannels, bucketQueue, bucketOutputs, bucketLeases, bucketChannelTools, bucketWaiting, bucketProjects, bucketProjectChannels, bucketCredentials, bucketFlows, bucketPeople, bucketPersonOf); err != nil {
		return false, err
	}
	if err := clearLeases(tx); err != nil { // leases.go
		return false, err
	}
	meta := tx.Bucket(bucketMeta)
	v := meta.Get([]byte("version"))
	if v == nil {
		return false, meta.Put([]byte("version"), u64Key(schemaVersion))
	}
	if len(v) != 8 {
		return false, fmt.Errorf("bad schema version record (%d bytes)", len(v))
	}
	got := be64(v)
	if got > schemaVersion {
		return false, fmt.Errorf("database schema version %d is newer than this agentbot supports (%d)", got, schemaVersion)
	}
	if got == schemaVersion {
		// A compaction after a migration that did not finish runs again.
		return meta.Get(keyNeedsCompact) != nil, nil
	}
	for _, m := range migrations {
		if got > m.from {
			continue
		}
		if err := m.run(tx, dir); err != nil {
			return false, fmt.Errorf("migrate schema %d to %d: %w", got, schemaVersion, err)
		}
	}
	if err := meta.Put(keyNeedsCompact, []byte{1}); err != nil {
		return false, err
	}
	return true, meta.Put([]byte("version"), u64Key(schemaVersion))
}

// createBuckets creates the root buckets names that do not exist yet.
func createBuckets(tx *bbolt.Tx, names ...[]byte) error {
	for _, name := range names {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// migrations are the steps from an older schema, in order: each runs on a
// store whose version is at most from.
var migrations = []struct {
	from uint64
	run  func(tx *bbolt.Tx, dir string) error
}{
	{schemaV1, func(tx *bbolt.Tx, _ string) error { return migrateV1(tx) }},
	{schemaV2, migrateProjects}, // projectsmigrate.go
	{schemaV3, func(tx *bbolt.Tx, _ string) error { return migrateQueueOrder(tx) }},
	{schemaV4, func(tx *bbolt.Tx, _ string) error { return migrateSources(tx) }}, // projectsources.go
	{schemaV5, func(tx *bbolt.Tx, _ string) error { return createBuckets(tx, bucketCredentials, bucketFlows) }},
	{schemaV6, func(tx *bbolt.Tx, _ string) error { return migrateOwners(tx) }}, // people.go
}

// Close closes the database and releases the data directory.
func (s *Store) Close() error {
	s.admitMu.Lock()
	if !s.admitClosed {
		s.admitClosed = true
		close(s.jreqs)
	}
	s.admitMu.Unlock()
	<-s.admitDone // admissions already queued are committed first
	s.journal.Close()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close store %s: %w", s.dir, err)
	}
	return nil
}

// Dir is the data directory.
func (s *Store) Dir() string { return s.dir }

// OutputDir returns the session's output folder, dir/outputs/<id>,
// creating it if needed.
func (s *Store) OutputDir(id string) (string, error) {
	return s.sessionDir("outputs", id)
}

// InputDir returns the folder for files users shared in the session,
// dir/inputs/<id>, creating it if needed.
func (s *Store) InputDir(id string) (string, error) {
	return s.sessionDir("inputs", id)
}

func (s *Store) sessionDir(kind, id string) (string, error) {
	return storage.Folders{Dir: s.dir}.Session(kind, id)
}

// removeSessionDirs deletes a session's outputs and inputs folders.
func (s *Store) removeSessionDirs(id string) error { return storage.Folders{Dir: s.dir}.Remove(id) }

// now reads the clock without its monotonic part, so stored and in-memory
// times compare alike.
func (s *Store) now() time.Time { return s.Now().Round(0) }

// Ping reports whether the database is open and readable.
func (s *Store) Ping(ctx context.Context) error {
	return s.view(ctx, func(*bbolt.Tx) error { return nil })
}

// SetNow replaces the store's clock (tests move time with it).
func (s *Store) SetNow(now func() time.Time) { s.Now = now }

// maxBatchDelay is how long a write waits for others to share its commit
// (bbolt's default is 10 ms). Concurrent writers still share commits; a
// lone write is not held back long.
const maxBatchDelay = 2 * time.Millisecond

// u64Key encodes n big-endian, so byte order is numeric order.
func u64Key(n uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), n)
}

// be64 decodes an 8-byte big-endian number.
func be64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

// update, view and batch run fn in a read-write, read-only or batched
// transaction, unless ctx is done already: a cancelled turn or a shutdown
// starts no new transaction (one begun runs to its end; bbolt's are short).
func (s *Store) update(ctx context.Context, fn func(*bbolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.Update(fn)
}

func (s *Store) view(ctx context.Context, fn func(*bbolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.View(fn)
}

func (s *Store) batch(ctx context.Context, fn func(*bbolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.Batch(fn)
}
