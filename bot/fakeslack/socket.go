package fakeslack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack/slacktest"
)

const (
	linkPath     = "/link/" // websocket URLs handed out by apps.connections.open
	writeTimeout = 5 * time.Second
)

type wsConn struct {
	id   int
	c    *websocket.Conn
	done chan struct{} // closed when the reader has exited
}

// serveSocket upgrades a dial of a URL from apps.connections.open. Each
// ticket is good for one connection.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	valid := s.tickets[ticket]
	delete(s.tickets, ticket)
	s.mu.Unlock()
	if !valid {
		http.Error(w, "invalid or used ticket", http.StatusUnauthorized)
		return
	}
	s.sock.Lock()
	if s.sockDown {
		s.sock.Unlock()
		http.Error(w, "server closing", http.StatusServiceUnavailable)
		return
	}
	s.connWG.Add(1)
	s.sock.Unlock()
	defer s.connWG.Done()
	slacktest.Websocket(s.runSocket)(w, r)
}

// runSocket says hello, delivers pending envelopes, pings, and reads acks
// until the connection ends.
func (s *Server) runSocket(c *websocket.Conn) {
	s.sock.Lock()
	if s.sockDown {
		s.sock.Unlock()
		return
	}
	s.connSeq++
	wc := &wsConn{id: s.connSeq, c: c, done: make(chan struct{})}
	hello, _ := json.Marshal(map[string]any{
		"type":            "hello",
		"num_connections": len(s.conns) + 1,
		"debug_info": map[string]any{
			"host": fmt.Sprintf("applink-fake-%d", wc.id), "build_number": 1, "approximate_connection_time": 18060,
		},
		"connection_info": map[string]any{"app_id": s.cfg.appID},
	})
	_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := c.WriteMessage(websocket.TextMessage, hello); err != nil {
		s.sock.Unlock()
		return
	}
	s.conns = append(s.conns, wc)
	s.flushLocked()
	s.sock.Unlock()
	s.notify()

	s.connWG.Go(func() { s.ping(wc) })
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			break
		}
		s.handleInbound(data)
	}
	s.sock.Lock()
	s.removeConnLocked(wc)
	s.sock.Unlock()
	close(wc.done)
	_ = c.Close()
	s.notify()
}

// ping sends websocket pings; slack-go's socketmode client reconnects when
// they stop.
func (s *Server) ping(wc *wsConn) {
	t := time.NewTicker(s.cfg.pingInterval)
	defer t.Stop()
	for {
		select {
		case <-wc.done:
			return
		case <-t.C:
			if wc.c.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(writeTimeout)) != nil {
				return
			}
		}
	}
}

// handleInbound records an ack ({"envelope_id": ..., "payload": ...}).
// Anything else the bot writes is ignored.
func (s *Server) handleInbound(data []byte) {
	var msg struct {
		EnvelopeID string          `json:"envelope_id"`
		Payload    json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(data, &msg) != nil || msg.EnvelopeID == "" {
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	a := Ack{EnvelopeID: msg.EnvelopeID, Time: now}
	if len(msg.Payload) > 0 && string(msg.Payload) != "null" {
		a.Payload = msg.Payload
	}
	if e, ok := s.envIdx[msg.EnvelopeID]; ok {
		a.Known = true
		if !e.Sent.IsZero() {
			a.Latency = now.Sub(e.Sent)
		}
	}
	s.acks = append(s.acks, a)
	s.notifyLocked()
}

// enqueue records e and delivers it (or keeps it until a websocket connects).
func (s *Server) enqueue(e *Envelope) {
	s.mu.Lock()
	e.Queued = time.Now()
	s.envs = append(s.envs, e)
	if e.ID != "" {
		s.envIdx[e.ID] = e
	}
	s.notifyLocked()
	s.mu.Unlock()

	s.sock.Lock()
	if h := s.httpOut; h != nil {
		s.sock.Unlock()
		h.send(s, e)
		return
	}
	s.pending = append(s.pending, e)
	s.flushLocked()
	s.sock.Unlock()
}

// flushLocked writes pending envelopes, round-robin over the live
// websockets, as Slack spreads events over an app's connections; an
// envelope for a given websocket (EventOptions.Conn) waits for it. s.sock
// must be held.
func (s *Server) flushLocked() {
	var waiting []*Envelope // for a websocket that is not connected
	for len(s.pending) > 0 && len(s.conns) > 0 {
		e := s.pending[0]
		wc := s.connForLocked(e)
		if wc == nil {
			waiting = append(waiting, e)
			s.pending = s.pending[1:]
			continue
		}
		s.mu.Lock()
		e.Sent, e.Conn = time.Now(), wc.id
		s.mu.Unlock()
		_ = wc.c.SetWriteDeadline(time.Now().Add(writeTimeout))
		if err := wc.c.WriteMessage(websocket.TextMessage, e.JSON); err != nil {
			s.mu.Lock()
			e.Sent, e.Conn = time.Time{}, 0
			s.mu.Unlock()
			s.removeConnLocked(wc)
			_ = wc.c.Close()
			continue
		}
		s.pending = s.pending[1:]
		s.notify()
	}
	s.pending = append(waiting, s.pending...)
}

// connForLocked picks the websocket for e: its target, or the next one
// round-robin; nil when its target is not connected. s.sock must be held.
func (s *Server) connForLocked(e *Envelope) *wsConn {
	if e.target != 0 {
		for _, wc := range s.conns {
			if wc.id == e.target {
				return wc
			}
		}
		return nil
	}
	wc := s.conns[s.rr%len(s.conns)]
	s.rr++
	return wc
}

func (s *Server) removeConnLocked(wc *wsConn) {
	s.conns = slices.DeleteFunc(s.conns, func(x *wsConn) bool { return x == wc })
}

// Connected is the number of live Socket Mode websockets.
func (s *Server) Connected() int {
	s.sock.Lock()
	defer s.sock.Unlock()
	return len(s.conns)
}

// ConnIDs lists the ids of the live websockets, oldest first: a
// socketmode client's websocket is the one that appeared when it connected.
func (s *Server) ConnIDs() []int {
	s.sock.Lock()
	defer s.sock.Unlock()
	ids := make([]int, len(s.conns))
	for i, wc := range s.conns {
		ids[i] = wc.id
	}
	return ids
}

// TotalConnections is the number of websockets accepted so far.
func (s *Server) TotalConnections() int {
	s.sock.Lock()
	defer s.sock.Unlock()
	return s.connSeq
}

// Pending is the number of envelopes waiting for a websocket.
func (s *Server) Pending() int {
	s.sock.Lock()
	defer s.sock.Unlock()
	return len(s.pending)
}

// DropConnections closes every websocket abruptly, as a network failure
// would, and returns once the fake has let go of them. The socketmode client
// then reconnects through apps.connections.open.
func (s *Server) DropConnections() {
	s.sock.Lock()
	conns := s.conns
	s.conns = nil
	s.sock.Unlock()
	for _, wc := range conns {
		_ = wc.c.Close()
	}
	for _, wc := range conns {
		<-wc.done
	}
	s.notify()
}

// Disconnect sends Slack's {"type":"disconnect"} message with the given
// reason (e.g. "refresh_requested", "warning") on every websocket; the client
// opens a new connection and closes the old one itself.
func (s *Server) Disconnect(reason string) {
	msg, _ := json.Marshal(map[string]any{
		"type": "disconnect", "reason": reason,
		"debug_info": map[string]any{"host": "applink-fake"},
	})
	s.sock.Lock()
	defer s.sock.Unlock()
	for _, wc := range s.conns {
		_ = wc.c.SetWriteDeadline(time.Now().Add(writeTimeout))
		_ = wc.c.WriteMessage(websocket.TextMessage, msg)
	}
}

// WaitAck waits for the bot's ack of an envelope and returns the time from
// sending the envelope to the ack's arrival.
func (s *Server) WaitAck(envelopeID string, timeout time.Duration) (time.Duration, error) {
	s.mu.Lock()
	_, known := s.envIdx[envelopeID]
	s.mu.Unlock()
	if !known {
		return 0, fmt.Errorf("fakeslack: WaitAck: unknown envelope %q", envelopeID)
	}
	var latency time.Duration
	err := s.WaitFor(func() bool {
		for _, a := range s.Acks() {
			if a.EnvelopeID == envelopeID {
				latency = a.Latency
				return true
			}
		}
		return false
	}, timeout)
	if err != nil {
		return 0, fmt.Errorf("envelope %s not acked: %w", envelopeID, err)
	}
	return latency, nil
}
