package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Folders are the sessions' local working folders under a data folder:
// Dir/outputs/<id> (working copies of documents) and Dir/inputs/<id>
// (files people shared). The bbolt store and storage/postgres both keep
// them.
type Folders struct{ Dir string }

// Session returns the session's folder of kind ("outputs" or "inputs"),
// creating it if needed.
func (f Folders) Session(kind, id string) (string, error) {
	if err := CheckID(id); err != nil {
		return "", fmt.Errorf("%s folder: %w", kind, err)
	}
	path := filepath.Join(f.Dir, kind, id)
	if err := os.MkdirAll(path, 0o700); err != nil {
		return "", fmt.Errorf("%s folder for session %s: %w", kind, id, err)
	}
	return path, nil
}

// Remove deletes a session's outputs and inputs folders.
func (f Folders) Remove(id string) error {
	var errs []error
	for _, kind := range []string{"outputs", "inputs"} {
		if err := os.RemoveAll(filepath.Join(f.Dir, kind, id)); err != nil {
			errs = append(errs, fmt.Errorf("remove %s folder of session %s: %w", kind, id, err))
		}
	}
	return errors.Join(errs...)
}
