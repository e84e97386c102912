package bolt

import (
	"context"
	"testing"

	"agentbot/storage"
)

func mustDefault(t *testing.T, s *Store, team, channel, want string) {
	ctx := context.Background()
	t.Helper()
	got, err := storage.ChannelDefault(ctx, s, team, channel)
	if err != nil {
		t.Fatalf("ChannelDefault(%s, %s): %v", team, channel, err)
	}
	if got != want {
		t.Fatalf("ChannelDefault(%s, %s) = %q, want %q", team, channel, got, want)
	}
}

func TestChannelDefaults(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir(), nil)
	mustDefault(t, s, "T1", "C1", "")
	if err := storage.SetChannelDefault(ctx, s, "T1", "C1", "pm"); err != nil {
		t.Fatal(err)
	}
	if err := storage.SetChannelDefault(ctx, s, "T2", "C1", "analyst"); err != nil {
		t.Fatal(err)
	}
	if err := storage.SetChannelDefault(ctx, s, "", "D1", "cis/storyteller"); err != nil {
		t.Fatal(err)
	}
	mustDefault(t, s, "T1", "C1", "pm")
	mustDefault(t, s, "T2", "C1", "analyst")
	mustDefault(t, s, "T1", "C2", "")
	mustDefault(t, s, "", "D1", "cis/storyteller")

	if err := storage.SetChannelDefault(ctx, s, "T1", "C1", "architect"); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, nil)
	mustDefault(t, s, "T1", "C1", "architect")

	if err := storage.SetChannelDefault(ctx, s, "T1", "C1", ""); err != nil {
		t.Fatal(err)
	}
	mustDefault(t, s, "T1", "C1", "")
	mustDefault(t, s, "T2", "C1", "analyst")
}

func TestChannelDefaultsBadInput(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir(), nil)
	for _, tc := range [][2]string{{"T1", ""}, {"T/1", "C1"}, {"T1", "C/1"}} {
		if err := storage.SetChannelDefault(ctx, s, tc[0], tc[1], "pm"); err == nil {
			t.Errorf("SetChannelDefault(%q, %q): want error", tc[0], tc[1])
		}
		if _, err := storage.ChannelDefault(ctx, s, tc[0], tc[1]); err == nil {
			t.Errorf("ChannelDefault(%q, %q): want error", tc[0], tc[1])
		}
	}
	if err := storage.SetChannelDefault(ctx, s, "T1", "C1", string(make([]byte, storage.MaxKeyLen+1))); err == nil {
		t.Error("SetChannelDefault with an oversized agent id: want error")
	}
}
