package fakeslack

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Pseudo-methods: requests that are not Web API methods but are recorded as
// Calls and accept injected faults under these names.
const (
	MethodUpload      = "upload"       // POST of file bytes to an upload_url
	MethodDownload    = "download"     // GET of a url_private(_download)
	MethodResponseURL = "response_url" // POST to a slash command's response_url
)

type fault struct {
	status     int           // HTTP status; 200 with slackErr for a Slack error
	slackErr   string        // Slack error code when status is 200
	retryAfter time.Duration // 429 only
}

// RateLimitNext makes the next n requests to method answer HTTP 429 with a
// Retry-After header of retryAfter rounded up to whole seconds (Slack's unit;
// slack-go reports it as (*slack.RateLimitedError).RetryAfter). Faults queue
// up per method in the order they were added.
func (s *Server) RateLimitNext(method string, n int, retryAfter time.Duration) {
	s.addFaults(method, n, fault{status: http.StatusTooManyRequests, retryAfter: retryAfter})
}

// FailNext makes the next request to method answer {"ok":false,"error":slackError}
// (for pseudo-methods: HTTP 400 with the error as body).
func (s *Server) FailNext(method, slackError string) {
	s.addFaults(method, 1, fault{status: http.StatusOK, slackErr: slackError})
}

// FailHTTPNext makes the next request to method answer the given HTTP status
// (e.g. 500 or 503) with a short text body.
func (s *Server) FailHTTPNext(method string, status int) {
	s.addFaults(method, 1, fault{status: status})
}

func (s *Server) addFaults(method string, n int, f fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults[method] = append(s.faults[method], f)
	}
}

// takeFaultLocked pops the next fault queued for method.
func (s *Server) takeFaultLocked(method string) (fault, bool) {
	q := s.faults[method]
	if len(q) == 0 {
		return fault{}, false
	}
	s.faults[method] = q[1:]
	return q[0], true
}

// faultResult is the HTTP status and Slack error a fault answers with.
func faultResult(f fault, apiStyle bool) (status int, slackErr string) {
	switch {
	case f.status == http.StatusTooManyRequests:
		return f.status, "ratelimited"
	case f.status == http.StatusOK && apiStyle:
		return http.StatusOK, f.slackErr
	case f.status == http.StatusOK:
		return http.StatusBadRequest, f.slackErr
	default:
		return f.status, ""
	}
}

// writeFault answers the request with f. apiStyle selects a Slack JSON error
// body for Slack-error faults.
func writeFault(w http.ResponseWriter, f fault, apiStyle bool) {
	status, slackErr := faultResult(f, apiStyle)
	switch {
	case status == http.StatusTooManyRequests:
		secs := int64((f.retryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		http.Error(w, "rate limited", status)
	case status == http.StatusOK:
		writeJSONStatus(w, status, errorBody(slackErr))
	case slackErr != "":
		http.Error(w, slackErr, status)
	default:
		http.Error(w, fmt.Sprintf("injected HTTP %d", status), status)
	}
}
