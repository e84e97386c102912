package storage

import (
	"encoding/json"
	"fmt"

	"agentbot/engine/transcript"
)

// EncodeMeta is a session's metadata as every Backend stores it: the
// session as JSON without its messages.
func EncodeMeta(sess *transcript.Session) ([]byte, error) {
	meta := *sess
	meta.Messages = nil
	data, err := json.Marshal(&meta)
	if err != nil {
		return nil, fmt.Errorf("encode session: %w", err)
	}
	return data, nil
}

// SetMetaJSON is transcript.Session.SetMeta on a session's metadata as JSON (the form
// a store keeps it in).
func SetMetaJSON(meta []byte, name, value string) ([]byte, error) {
	var sess transcript.Session
	if err := json.Unmarshal(meta, &sess); err != nil {
		return nil, fmt.Errorf("decode session: %w", err)
	}
	sess.SetMeta(name, value)
	return EncodeMeta(&sess)
}
