package storage

import "time"

// The checks and id scheme every Backend shares, exported so that
// storage/postgres accepts and produces exactly what the bbolt store does.

// MaxKeyLen bounds caller-given keys (session keys, seen keys, channels).
const MaxKeyLen = maxKeyLen

// CheckKey rejects an empty or oversized caller key; what names it in the
// error.
func CheckKey(what, key string) error { return checkKey(what, key) }

// CheckID accepts only session ids that are safe as one path element.
func CheckID(id string) error { return checkID(id) }

// NewID returns a random session id for which taken is false.
func NewID(taken func(id string) bool) (string, error) { return newID(taken) }

// CheckAdmit validates the arguments of Admit.
func CheckAdmit(keys []string, ttl time.Duration, sessionKey string, payload []byte) error {
	return checkAdmit(keys, ttl, sessionKey, payload)
}

// ChannelKey is a channel's "team/channel" key, after the checks
// ChannelDefault and SetChannelDefault make.
func ChannelKey(team, channel string) (string, error) {
	k, err := channelKey(team, channel)
	return string(k), err
}
