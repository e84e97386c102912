package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
)

// DamagedError is a database file that cannot be used safely: it is empty,
// truncated or corrupt. Opening it with bbolt would panic or fault.
type DamagedError struct {
	Path   string
	Reason string
}

// Error names the file, the damage and how to recover.
func (e *DamagedError) Error() string {
	return fmt.Sprintf("the database %s is damaged (%s). To recover, stop agentbot and restore a backup made with `agentbot backup` "+
		"(copy it over %s), or move the damaged file aside to start with an empty store", e.Path, e.Reason, e.Path)
}

// bbolt's file format: a page header of 16 bytes, then the meta page.
const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	pageHeaderSize = 16
	metaSize       = 64 // magic..checksum
	metaSumOffset  = 56 // the checksum covers the meta's first 56 bytes
	noFreelist     = ^uint64(0)
)

// boltMeta is the part of a bbolt meta page Open checks.
type boltMeta struct {
	pageSize         uint32
	root, free, high uint64
	txid             uint64
}

// checkFile looks at an existing database file before bbolt does: an empty
// file, a file whose meta pages are both invalid, or whose pages lie past
// its end (a truncated file) is a *DamagedError. A missing file is fine.
func checkFile(path string) error {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open store %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return &DamagedError{Path: path, Reason: "not a regular file"}
	}
	size := st.Size()
	if size == 0 {
		return &DamagedError{Path: path, Reason: "the file is empty (0 bytes); it is never re-initialised silently"}
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open store %s: %w", path, err)
	}
	defer f.Close()
	m, err := newestMeta(f, path)
	if err != nil {
		return err
	}
	return checkBounds(path, size, m)
}

// newestMeta reads both meta pages of the database file f at path (the
// second one page size after the first) and returns the valid one with the
// higher transaction id; with neither valid it is a *DamagedError.
func newestMeta(f io.ReaderAt, path string) (boltMeta, error) {
	m0, err0 := readMeta(f, 0)
	ps := int64(os.Getpagesize())
	if err0 == nil {
		ps = int64(m0.pageSize)
	}
	m1, err1 := readMeta(f, ps)
	if err0 != nil && err1 != nil {
		return boltMeta{}, &DamagedError{Path: path, Reason: "no valid meta page (" + err0.Error() + ")"}
	}
	if err0 != nil || (err1 == nil && m1.txid > m0.txid) {
		return m1, nil
	}
	return m0, nil
}

// checkBounds checks meta m against the file at path of size bytes: a page
// size bbolt can use, at least four pages, and every page it points to
// inside the file; else it is a *DamagedError.
func checkBounds(path string, size int64, m boltMeta) error {
	psz := int64(m.pageSize)
	if psz < 512 || psz > 1<<20 || psz&(psz-1) != 0 {
		return &DamagedError{Path: path, Reason: fmt.Sprintf("invalid page size %d", psz)}
	}
	if size < 4*psz {
		return &DamagedError{Path: path, Reason: fmt.Sprintf("the file is truncated (%d bytes, under 4 pages)", size)}
	}
	if int64(m.high)*psz > size {
		return &DamagedError{Path: path, Reason: fmt.Sprintf("the file is truncated (%d bytes; its pages reach %d)", size, int64(m.high)*psz)}
	}
	if m.root >= m.high || (m.free != noFreelist && m.free >= m.high) {
		return &DamagedError{Path: path, Reason: "the meta page points past the end of the data"}
	}
	return nil
}

// readMeta reads and validates the meta page at offset off.
func readMeta(r io.ReaderAt, off int64) (boltMeta, error) {
	buf := make([]byte, pageHeaderSize+metaSize)
	if _, err := r.ReadAt(buf, off); err != nil {
		return boltMeta{}, errors.New("meta page unreadable")
	}
	b := buf[pageHeaderSize:]
	le := binary.LittleEndian
	if le.Uint32(b[0:]) != boltMagic {
		return boltMeta{}, errors.New("not a bbolt file")
	}
	if le.Uint32(b[4:]) != boltVersion {
		return boltMeta{}, fmt.Errorf("bbolt format version %d", le.Uint32(b[4:]))
	}
	h := fnv.New64a()
	_, _ = h.Write(b[:metaSumOffset])
	if h.Sum64() != le.Uint64(b[metaSumOffset:]) {
		return boltMeta{}, errors.New("meta checksum mismatch")
	}
	return boltMeta{pageSize: le.Uint32(b[8:]), root: le.Uint64(b[16:]), free: le.Uint64(b[32:]), high: le.Uint64(b[40:]), txid: le.Uint64(b[48:])}, nil
}

// guard runs fn, turning a panic or a memory fault in bbolt (a corrupt
// page inside the file) into a *DamagedError.
func guard(path string, fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			err = &DamagedError{Path: path, Reason: fmt.Sprintf("corrupt data: %v", r)}
		}
	}()
	return fn()
}
