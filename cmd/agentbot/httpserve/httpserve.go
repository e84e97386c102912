// Package httpserve serves serve's HTTP sides (health and metrics, the
// public side) in the background, and stops them gracefully.
package httpserve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server is one HTTP side being served.
type Server struct {
	srv    *http.Server
	served chan struct{}
	// Addr is the bound address (the setting may use port 0).
	Addr string
}

// Listen serves h on addr (the value of setting, named in errors) in the
// background.
func Listen(setting, addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s %s: %w", setting, addr, err)
	}
	s := &Server{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, served: make(chan struct{}), Addr: ln.Addr().String()}
	go func() { defer close(s.served); _ = s.srv.Serve(ln) }()
	return s, nil
}

// Stop shuts the server down, letting requests in flight finish for up to
// 5 s, then closes it, and returns once it has stopped serving.
func (s *Server) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
	}
	<-s.served
}
