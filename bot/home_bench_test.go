package bot_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/bot/threadstate"
	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// benchStores are the data folders BenchmarkHomeTab built, by size, kept
// for the benchmark's runs in this process.
var (
	benchStoresMu sync.Mutex
	benchStores   = map[int]string{}
)

// benchPerson is the person with 500 sessions in a benchmark store.
const benchPerson = "U0BUSY"

// benchStore returns a data folder holding total sessions of channel
// threads, 500 of them benchPerson's and the rest spread over 1000 other
// people, each with a short transcript and a document. It is built once
// per size and process, in /dev/shm when there is one (bbolt commits each
// session; on a disk that takes minutes).
func benchStore(b *testing.B, total int) string {
	benchStoresMu.Lock()
	defer benchStoresMu.Unlock()
	if dir, ok := benchStores[total]; ok {
		return dir
	}
	parent := ""
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		parent = "/dev/shm"
	}
	root, err := os.MkdirTemp(parent, "agentbot-home-bench-")
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(root, "data")
	st, err := bolt.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	system := strings.Repeat("You are Maren, Product Lead. ", 60)
	var wg sync.WaitGroup
	work := make(chan int)
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				owner := fmt.Sprintf("U0P%04d", i%1000)
				if i%(total/500) == 0 {
					owner = benchPerson
				}
				s, err := st.NewSession(ctx, fmt.Sprintf("T0FAKETEAM/%s/1700000000.%06d", channel, i))
				if err != nil {
					errs <- err
					return
				}
				s.AgentID, s.Owner = "product-lead", owner
				s.Agent = &transcript.AgentSnapshot{ID: "product-lead", Name: "Maren", Icon: "🧭"}
				threadstate.Put(s, threadstate.State{Owner: owner})
				s.Messages = []transcript.Message{{Role: transcript.RoleSystem, Content: system},
					{Role: transcript.RoleUser, Content: "Write the PRD for the reorder button."},
					{Role: transcript.RoleAssistant, Content: "Here is the PRD: goals, users, scope and open questions."}}
				s.Outputs = []transcript.Output{{Path: fmt.Sprintf("prd-%d.md", i), Version: 1}}
				if err := st.SaveSession(ctx, s); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range total {
		select {
		case work <- i:
		case err := <-errs:
			b.Fatal(err)
		}
	}
	close(work)
	wg.Wait()
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	benchStores[total] = dir
	return dir
}

// BenchmarkHomeTab measures the Home tab of a person with no sessions and
// of one with 500, in a store of 10k and of 50k sessions, through the
// real bot: from app_home_opened to views.publish (home-ms), and the ack
// of a message sent right behind the app_home_opened (ack-ms), which must
// not wait for the view.
func BenchmarkHomeTab(b *testing.B) {
	b.Cleanup(func() {
		benchStoresMu.Lock()
		defer benchStoresMu.Unlock()
		for total, dir := range benchStores {
			_ = os.RemoveAll(filepath.Dir(dir))
			delete(benchStores, total)
		}
	})
	for _, total := range []int{10_000, 50_000} {
		for _, person := range []string{"U0NOBODY", benchPerson} {
			name := fmt.Sprintf("store=%dk/sessions=%d", total/1000, map[string]int{"U0NOBODY": 0, benchPerson: 500}[person])
			b.Run(name, func(b *testing.B) { benchHome(b, benchStore(b, total), person) })
		}
	}
}

func benchHome(b *testing.B, dir, person string) {
	r := newRig(b, rigOpts{data: dir})
	r.slack.SetMembers(channel, person, user)
	other := "C0BENCH"
	if err := storage.SetChannelDefault(context.Background(), r.st, r.slack.TeamID(), other, "product-lead"); err != nil {
		b.Fatal(err)
	}
	var homes, acks []time.Duration
	for b.Loop() {
		published := len(r.slack.CallsTo("views.publish"))
		sent := time.Now()
		r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": person, "tab": "home"})
		env := r.slack.SendEvent(map[string]any{"type": "app_mention", "user": user, "channel": other, "ts": r.slack.NextTS(),
			"text": "<@" + r.slack.BotUserID() + "> hello"})
		ack, err := r.slack.WaitAck(env, 30*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		acks = append(acks, ack)
		var at time.Time
		r.waitFor("the home tab", func() bool {
			calls := r.slack.CallsTo("views.publish")
			for _, c := range calls[min(published, len(calls)):] {
				if strings.Contains(string(c.JSON), person) {
					at = c.Time
					return true
				}
			}
			return false
		})
		homes = append(homes, at.Sub(sent))
	}
	b.StopTimer()
	report := func(ds []time.Duration, unit string) {
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2])/1e6, unit+"-p50-ms")
		b.ReportMetric(float64(ds[len(ds)-1])/1e6, unit+"-max-ms")
	}
	report(homes, "home")
	report(acks, "ack")
}
