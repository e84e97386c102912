package bolt_test

import (
	"os"
	"path/filepath"
	"testing"

	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/storetest"
)

// TestContract runs the storage contract on a fresh bbolt store per
// behaviour; storage/postgres runs the same table on PostgreSQL.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storage.Backend {
		s, err := bolt.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// BenchmarkInboundMessage is the store's cost of one inbound message on
// bbolt, beside storage/postgres's benchmark of the same name.
func BenchmarkInboundMessage(b *testing.B) {
	s, err := bolt.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchInbound(b, s, nil)
}

// BenchmarkAdmitParallel is the ack latency on bbolt under 200 busy
// admitters, beside storage/postgres's.
func BenchmarkAdmitParallel(b *testing.B) {
	s, err := bolt.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchAdmitParallel(b, s, 100)
}

// BenchmarkDocumentContention is 50 threads appending to one document at
// once on bbolt (see storetest.BenchDocumentContention).
func BenchmarkDocumentContention(b *testing.B) {
	s, err := bolt.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchDocumentContention(b, s, 50)
}

// TestNoPlaintextAtRest: the bbolt file holds no token, client secret,
// PKCE verifier or state in clear (storetest.NoPlaintextAtRest).
func TestNoPlaintextAtRest(t *testing.T) {
	dir := t.TempDir()
	s, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.NoPlaintextAtRest(t, s, func(t *testing.T) []byte {
		data, err := os.ReadFile(filepath.Join(dir, bolt.DBName))
		if err != nil {
			t.Fatal(err)
		}
		return data
	})
}
