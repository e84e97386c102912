package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The argument checks every store applies (with CheckKey and CheckID), so
// that storage/bolt and storage/postgres accept and refuse alike.

// ChannelKey is a channel's "team/channel" key: team may be empty, channel
// may not, and neither may hold '/'. Every store's channel settings
// (ChannelDefault, ChannelTools) check and key channels with it.
func ChannelKey(team, channel string) (string, error) {
	if err := CheckKey("channel", channel); err != nil {
		return "", err
	}
	if strings.Contains(team, "/") || strings.Contains(channel, "/") {
		return "", fmt.Errorf("team %q or channel %q contains '/'", team, channel)
	}
	if len(team) > MaxKeyLen {
		return "", fmt.Errorf("team too long (%d bytes, max %d)", len(team), MaxKeyLen)
	}
	return team + "/" + channel, nil
}

// CheckSeen validates Seen's key and ttl (positive); every store's Seen
// checks them with it.
func CheckSeen(key string, ttl time.Duration) error {
	if err := CheckKey("seen key", key); err != nil {
		return fmt.Errorf("seen: %w", err)
	}
	if ttl <= 0 {
		return fmt.Errorf("seen %q: ttl must be positive, got %s", key, ttl)
	}
	return nil
}

// CheckAdmit validates the arguments of Admit, for every Backend.
func CheckAdmit(keys []string, ttl time.Duration, sessionKey string, payload []byte) error {
	for _, k := range keys {
		if err := CheckKey("seen key", k); err != nil {
			return fmt.Errorf("admit: %w", err)
		}
	}
	if err := CheckKey("session key", sessionKey); err != nil {
		return fmt.Errorf("admit: %w", err)
	}
	if len(keys) > 0 && ttl <= 0 {
		return fmt.Errorf("admit %q: ttl must be positive, got %s", sessionKey, ttl)
	}
	if !json.Valid(payload) {
		return fmt.Errorf("admit %q: payload is not valid JSON", sessionKey)
	}
	return nil
}

// CheckOutputPath refuses a document path a store cannot key: empty,
// oversized or holding a NUL byte. Every Backend's PutOutput and
// OutputData check paths with it.
func CheckOutputPath(path string) error {
	if path == "" {
		return errors.New("empty document path")
	}
	if len(path) > MaxKeyLen {
		return fmt.Errorf("document path too long (%d bytes, max %d)", len(path), MaxKeyLen)
	}
	if strings.IndexByte(path, 0) >= 0 {
		return fmt.Errorf("document path %q contains a NUL byte", path)
	}
	return nil
}

// CheckLease validates a lease's key and holder (neither empty nor
// oversized); every Backend's Lease and ReleaseLease check them with it.
func CheckLease(key, holder string) error {
	if err := CheckKey("lease key", key); err != nil {
		return err
	}
	return CheckKey("lease holder", holder)
}

// CleanChannel checks a channel's settings as EditChannel stores them:
// the agent id's length, and the tools cleaned (CleanChannelTools).
func CleanChannel(c ChannelSettings) (ChannelSettings, error) {
	if len(c.Agent) > MaxKeyLen {
		return c, fmt.Errorf("agent id too long (%d bytes, max %d)", len(c.Agent), MaxKeyLen)
	}
	tools, err := CleanChannelTools(c.Tools)
	if err != nil {
		return c, err
	}
	if len(tools) == 0 {
		tools = nil
	}
	c.Tools = tools
	return c, nil
}

// maxChannelTools bounds the servers one channel may add.
const maxChannelTools = 64

// CleanChannelTools checks a channel's server names (none empty or
// oversized, at most 64) and returns them sorted without duplicates; every
// Backend stores exactly this.
func CleanChannelTools(servers []string) ([]string, error) {
	out := slices.Clone(servers)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > maxChannelTools {
		return nil, fmt.Errorf("too many servers (%d, max %d)", len(out), maxChannelTools)
	}
	for _, name := range out {
		if err := CheckKey("server name", name); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// OrderOf turns a Slack message ts ("1700000000.000100") into a queue
// order: microseconds since the epoch. It returns 0 (order by admission)
// for "" or a ts it cannot read.
func OrderOf(ts string) int64 {
	sec, frac, ok := strings.Cut(ts, ".")
	if !ok || sec == "" || len(frac) > 6 {
		return 0
	}
	frac += strings.Repeat("0", 6-len(frac))
	s, err1 := strconv.ParseInt(sec, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || s <= 0 || f < 0 || s > 1<<40 {
		return 0
	}
	return s*1_000_000 + f
}

// checkLeaseTTL refuses a lease time that is not positive.
func checkLeaseTTL(key string, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("lease %q: ttl must be positive, got %s", key, ttl)
	}
	return nil
}

// CheckTakeLease checks what every Backend's TakeLease is given: the key,
// the holder and a positive lease time.
func CheckTakeLease(key, holder string, ttl time.Duration) error {
	if err := CheckLease(key, holder); err != nil {
		return fmt.Errorf("lease: %w", err)
	}
	return checkLeaseTTL(key, ttl)
}

// CheckRenewLease checks what every Backend's RenewLease is given: the
// fence and a positive lease time.
func CheckRenewLease(f Fence, ttl time.Duration) error {
	if err := CheckFence(f); err != nil {
		return fmt.Errorf("renew lease: %w", err)
	}
	return checkLeaseTTL(f.Key, ttl)
}

// CheckFence validates a fence's key and holder; every Backend's fenced
// writes check them with it.
func CheckFence(f Fence) error {
	if err := CheckLease(f.Key, f.Holder); err != nil {
		return fmt.Errorf("fence: %w", err)
	}
	if f.Token == 0 {
		return fmt.Errorf("fence %q: no token", f.Key)
	}
	return nil
}

// UnixNano is t in Unix nanoseconds, 0 for the zero time: how both stores
// keep the times of a credential.
func UnixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// FromUnixNano is the time of n Unix nanoseconds in UTC, the zero time
// for 0 (UnixNano's inverse).
func FromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
