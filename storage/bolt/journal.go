package bolt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"agentbot/storage"
)

// JournalName is the inbound journal in the data folder: an admission is
// written there and fsynced before it is reported journaled (and the bot
// acks the message to Slack), so an acked message survives a crash of the
// process or of the machine before its commit. Admissions waiting together
// share one write and one fsync (group commit), which keeps the ack fast
// under load. The journal is replayed at Open, and emptied only when every
// admission in it is committed: a commit that fails keeps its entries,
// retried until the store recovers or replayed at the next start.
const JournalName = "inbound.journal"

// retryEvery is how long the committer waits before it retries a batch
// whose commit failed.
const retryEvery = 250 * time.Millisecond

// journalEntry is one line of the journal.
type journalEntry struct {
	Keys    []string        `json:"keys,omitempty"`
	TTL     time.Duration   `json:"ttl,omitempty"`
	Key     string          `json:"key"`
	Order   int64           `json:"order,omitempty"`
	Payload json.RawMessage `json:"payload"`
}

// openJournal opens the journal for appending.
func openJournal(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, JournalName), os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open inbound journal: %w", err)
	}
	return f, nil
}

// readJournal returns the journal's complete entries; a torn last line (a
// crash mid-write, which was never acked) is dropped.
func readJournal(f *os.File) ([]journalEntry, error) {
	if _, err := f.Seek(0, 0); err != nil {
		return nil, err
	}
	var out []journalEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e journalEntry
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Key != "" {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// journaler writes waiting admissions to the journal, as many as wait,
// with one fsync, then reports each journaled and hands it to the
// committer, in call order, until jreqs is closed.
func (s *Store) journaler() {
	defer close(s.admits)
	for first := range s.jreqs {
		batch := storage.Batch(first, s.jreqs, maxAdmitBatch)
		if err := s.appendJournal(batch); err != nil {
			err = fmt.Errorf("journal: %w", err)
			for _, r := range batch {
				r.journaled <- err
				r.done <- storage.Admission{Err: fmt.Errorf("admit %q: %w", r.sessionKey, err)}
			}
			continue
		}
		for _, r := range batch {
			r.journaled <- nil
			s.admits <- r
		}
	}
}

// appendJournal writes a batch of admissions as lines and fsyncs them. A
// write that fails is cut off again, so a torn entry never sits before
// later ones; entries written before stay.
func (s *Store) appendJournal(batch []*admitReq) error {
	var buf bytes.Buffer
	for _, r := range batch {
		b, err := json.Marshal(journalEntry{Keys: r.keys, TTL: r.ttl, Key: r.sessionKey, Order: r.order, Payload: r.payload})
		if err != nil {
			return err
		}
		if bytes.IndexByte(b, '\n') >= 0 {
			return fmt.Errorf("journal entry holds a line break")
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	s.jmu.Lock()
	defer s.jmu.Unlock()
	n, err := s.journal.Write(buf.Bytes())
	if err == nil {
		err = s.journal.Sync()
	}
	if err != nil {
		if n > 0 {
			_ = s.journal.Truncate(s.jsize) // the entries before stay
		}
		return err
	}
	s.jsize += int64(n)
	s.pendingAdmits += len(batch)
	return nil
}

// committed counts n journaled admissions as committed and empties the
// journal when nothing in it waits any more.
func (s *Store) committed(n int) {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	s.pendingAdmits -= n
	if s.pendingAdmits == 0 && s.journal.Truncate(0) == nil {
		s.jsize = 0
	}
}

// replayJournal admits what the journal holds (a crash came before the
// commit); entries already committed are recognised by their dedupe keys.
// It empties the journal afterwards.
func (s *Store) replayJournal() error {
	entries, err := readJournal(s.journal)
	if err != nil {
		return fmt.Errorf("read inbound journal: %w", err)
	}
	if len(entries) > 0 {
		batch := make([]*admitReq, len(entries))
		for i, e := range entries {
			batch[i] = &admitReq{keys: e.Keys, ttl: e.TTL, sessionKey: e.Key, order: e.Order, payload: e.Payload, done: make(chan storage.Admission, 1)}
		}
		if err := s.commitAdmissions(batch); err != nil {
			return fmt.Errorf("replay inbound journal: %w", err)
		}
	}
	return s.journal.Truncate(0)
}
