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

// JournalName is the inbound journal in the data folder: admissions are
// written there before AdmitAsync returns, so a message acked to Slack
// survives a crash of the process (kill -9, out of memory) before its
// commit; the journal is replayed at Open and emptied whenever every
// admission in it is committed. It is written without fsync: it covers a
// crashed process, not a lost machine, and costs microseconds per message.
const JournalName = "inbound.journal"

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

// appendJournal writes one admission as a line. The caller holds admitMu.
func (s *Store) appendJournal(e journalEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if bytes.IndexByte(b, '\n') >= 0 {
		return fmt.Errorf("journal entry holds a line break")
	}
	_, err = s.journal.Write(append(b, '\n'))
	return err
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
		s.commitAdmissions(batch)
		for _, r := range batch {
			if a := <-r.done; a.Err != nil {
				return fmt.Errorf("replay inbound journal: %w", a.Err)
			}
		}
	}
	return s.journal.Truncate(0)
}
