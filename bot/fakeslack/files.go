package fakeslack

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

const (
	uploadPath = "/upload/"    // + file id: where upload_url points
	filesPath  = "/files-pri/" // + team-file/name or team-file/download/name
	signinPath = "/signin"     // where a download without a valid token lands
	maxUpload  = 64 << 20
)

type storedFile struct {
	file    slack.File
	content []byte
}

// AddFile stores a file as if a user had shared it and returns its metadata,
// ready to put in a message event's "files". url_private and
// url_private_download point at the fake, which serves the bytes only to
// requests carrying the bot token (as "Authorization: Bearer"); others are
// redirected to a sign-in page, like files.slack.com does.
func (s *Server) AddFile(name string, content []byte) slack.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.newFileLocked(s.nextIDLocked("F"), name, name, "U0FAKEUSER", content, time.Now())
	s.files[f.ID] = &storedFile{file: f, content: append([]byte(nil), content...)}
	s.notifyLocked()
	return f
}

func (s *Server) newFileLocked(id, name, title, user string, content []byte, now time.Time) slack.File {
	ext := strings.TrimPrefix(path.Ext(name), ".")
	mt := mime.TypeByExtension(path.Ext(name))
	if mt == "" {
		mt = "application/octet-stream"
	}
	if ext == "" {
		ext = "binary"
	}
	base := s.base + filesPath + s.cfg.teamID + "-" + id + "/"
	esc := url.PathEscape(name)
	return slack.File{
		ID: id, Created: slack.JSONTime(now.Unix()), Timestamp: slack.JSONTime(now.Unix()),
		Name: name, Title: title, Mimetype: mt, Filetype: ext, PrettyType: strings.ToUpper(ext),
		User: user, Mode: "hosted", Size: len(content),
		URLPrivate: base + esc, URLPrivateDownload: base + "download/" + esc,
		Permalink: "https://fake.slack.com/files/" + user + "/" + id + "/" + esc,
	}
}

func (s *Server) filesGetUploadURL(r *apiRequest) (result, string) {
	name := r.get("filename")
	length, err := strconv.Atoi(r.get("length"))
	if name == "" || err != nil || length <= 0 {
		return nil, "invalid_arguments"
	}
	id := s.nextIDLocked("F")
	s.pendingUp[id] = &Upload{FileID: id, Filename: name, Length: length,
		AltText: r.get("alt_txt"), SnippetType: r.get("snippet_type")}
	return result{"upload_url": s.base + uploadPath + id, "file_id": id}, ""
}

// serveUpload takes the bytes POSTed to an upload_url (multipart field
// "file", or the raw body).
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	id := strings.TrimPrefix(r.URL.Path, uploadPath)
	call := Call{Method: MethodUpload, Form: url.Values{"file_id": {id}}, Time: now, Status: http.StatusOK}
	call.Token, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")

	s.mu.Lock()
	f, faulty := s.takeFaultLocked(MethodUpload)
	up, known := s.pendingUp[id]
	s.mu.Unlock()
	var (
		content []byte
		err     error
	)
	switch {
	case faulty:
		call.Status, call.Error = faultResult(f, false)
	case !known || r.Method != http.MethodPost:
		call.Status, call.Error = http.StatusNotFound, "file_not_found"
	default:
		var filename string
		content, filename, err = readUploadBody(r)
		if err != nil {
			call.Status, call.Error = http.StatusBadRequest, err.Error()
		}
		call.Form.Set("filename", filename)
	}

	s.mu.Lock()
	if call.Status == http.StatusOK {
		up.Content = content
	}
	s.calls = append(s.calls, call)
	s.notifyLocked()
	s.mu.Unlock()

	switch {
	case faulty:
		writeFault(w, f, false)
	case call.Status != http.StatusOK:
		http.Error(w, call.Error, call.Status)
	default:
		w.Header().Set("Content-Type", "text/plain")
		_, _ = fmt.Fprintf(w, "OK - %d", len(content))
	}
}

func readUploadBody(r *http.Request) (content []byte, filename string, err error) {
	ctype, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ctype != "multipart/form-data" {
		content, err = io.ReadAll(io.LimitReader(r.Body, maxUpload))
		if err != nil {
			return nil, "", fmt.Errorf("read upload body: %w", err)
		}
		return content, "", nil
	}
	if err := r.ParseMultipartForm(maxUpload); err != nil {
		return nil, "", fmt.Errorf("parse multipart upload: %w", err)
	}
	part, hdr, err := r.FormFile("file")
	if err != nil {
		return nil, "", fmt.Errorf("multipart upload has no file field: %w", err)
	}
	defer part.Close()
	content, err = io.ReadAll(part)
	if err != nil {
		return nil, "", fmt.Errorf("read upload part: %w", err)
	}
	return content, hdr.Filename, nil
}

func (s *Server) filesCompleteUpload(r *apiRequest) (result, string) {
	var files []slack.FileSummary
	if err := json.Unmarshal([]byte(r.get("files")), &files); err != nil || len(files) == 0 {
		return nil, "invalid_arguments"
	}
	for _, f := range files {
		up, ok := s.pendingUp[f.ID]
		if !ok || up.Content == nil {
			return nil, "file_not_found"
		}
	}
	out := make([]slack.FileSummary, 0, len(files))
	for _, f := range files {
		up := s.pendingUp[f.ID]
		delete(s.pendingUp, f.ID)
		up.Title = f.Title
		if up.Title == "" {
			up.Title = up.Filename
		}
		up.ChannelID, up.Channels = r.get("channel_id"), r.get("channels")
		up.ThreadTS, up.InitialComment = r.get("thread_ts"), r.get("initial_comment")
		up.Blocks, up.Time = rawOrNil(r.get("blocks")), r.now
		s.uploads = append(s.uploads, *up)
		file := s.newFileLocked(up.FileID, up.Filename, up.Title, s.cfg.botUserID, up.Content, r.now)
		s.files[up.FileID] = &storedFile{file: file, content: up.Content}
		out = append(out, slack.FileSummary{ID: up.FileID, Title: up.Title})
	}
	return result{"files": out}, ""
}

func (s *Server) filesInfo(r *apiRequest) (result, string) {
	f, ok := s.files[r.get("file")]
	if !ok {
		return nil, "file_not_found"
	}
	return result{"file": f.file, "comments": []any{},
		"paging": map[string]int{"count": 100, "total": 1, "page": 1, "pages": 1}}, ""
}

// serveDownload serves /files-pri/<team>-<file id>/[download/]<name> to
// requests with the bot token.
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, filesPath), "/")
	id := strings.TrimPrefix(first, s.cfg.teamID+"-")
	call := Call{Method: MethodDownload, Form: url.Values{"file": {id}}, Time: now, Status: http.StatusOK}
	call.Token, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")

	s.mu.Lock()
	fault, faulty := s.takeFaultLocked(MethodDownload)
	f, ok := s.files[id]
	switch {
	case faulty:
		call.Status, call.Error = faultResult(fault, false)
	case call.Token != s.cfg.botToken && !s.installTokenOKLocked(call.Token, now):
		call.Status, call.Error = http.StatusFound, "not_authed"
	case !ok:
		call.Status, call.Error = http.StatusNotFound, "file_not_found"
	}
	s.calls = append(s.calls, call)
	s.notifyLocked()
	s.mu.Unlock()

	switch {
	case faulty:
		writeFault(w, fault, false)
	case call.Status == http.StatusFound:
		http.Redirect(w, r, signinPath+"?redir="+url.QueryEscape(r.URL.Path), http.StatusFound)
	case call.Status != http.StatusOK:
		http.Error(w, "file not found", call.Status)
	default:
		w.Header().Set("Content-Type", f.file.Mimetype)
		w.Header().Set("Content-Length", strconv.Itoa(len(f.content)))
		_, _ = w.Write(f.content)
	}
}

func serveSignin(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.WriteString(w, "<!DOCTYPE html><html><body>Sign in to Fake Team</body></html>")
}
