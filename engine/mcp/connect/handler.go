package connect

import (
	"errors"
	"html/template"
	"net/http"

	"agentbot/engine/mcp/oauth"
)

// Handler is the public side: GET /oauth/callback finishes a flow begun
// by ConnectURL (on any replica: the flow is in the store) and GET
// /oauth/client.json serves agentbot's client ID metadata document.
// Everything else is 404.
func (c *Connector) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+CallbackPath, c.callback)
	mux.HandleFunc("GET "+ClientPath, c.clientDocument)
	return mux
}

func (c *Connector) clientDocument(w http.ResponseWriter, r *http.Request) {
	doc, err := c.document()
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(doc)
}

// callback finishes the flow of the redirect's state: the state is taken
// from the store (so it serves once; a forged, replayed or expired one
// finds nothing), oauth.Finish checks the rest and exchanges the code,
// and the token is stored for the team, person and server the flow was
// bound to. The page says connected, or why not; it never shows the
// code, the state or a token.
func (c *Connector) callback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	state := oauth.StateOf(q)
	if state == "" {
		c.page(w, http.StatusBadRequest, "", "This link carries no authorization state. Start again from Slack.")
		return
	}
	f, err := c.Store.TakeFlow(ctx, state)
	if err != nil {
		if c.NotFound != nil && errors.Is(err, c.NotFound) {
			c.log().InfoContext(ctx, "mcp connect refused: unknown, used or expired state")
			c.page(w, http.StatusBadRequest, "", "This link has expired or was already used. Start again from Slack.")
			return
		}
		c.log().WarnContext(ctx, "mcp connect: reading the flow failed", "err", err)
		c.page(w, http.StatusInternalServerError, "", "The connection could not be completed. Start again from Slack.")
		return
	}
	team, user, server := f.Caller[callerTeam], f.Caller[callerUser], f.Caller[callerServer]
	log := c.log().With("server", server, "team", team, "user", user)
	if server == "" || user == "" {
		log.WarnContext(ctx, "mcp connect refused: the flow names no server or person", "flow", f)
		c.page(w, http.StatusBadRequest, "", "This link is not one agentbot made.")
		return
	}
	cl, err := c.Store.Client(ctx, server)
	if err != nil {
		log.WarnContext(ctx, "mcp connect: the registered client", "err", err)
		c.page(w, http.StatusInternalServerError, server, "The connection could not be completed. Start again from Slack.")
		return
	}
	t, err := oauth.Finish(ctx, c.client(), cl, f, q)
	if err != nil {
		log.InfoContext(ctx, "mcp connect not completed", "err", err)
		status, why := http.StatusBadRequest, "The connection could not be completed. Start again from Slack."
		switch {
		case errors.Is(err, oauth.ErrDenied):
			why = "Access was not granted. Nothing was connected."
		case errors.Is(err, oauth.ErrExpired):
			why = "This link has expired. Start again from Slack."
		case errors.Is(err, oauth.ErrState), errors.Is(err, oauth.ErrIssuer):
			why = "This answer does not come from the server the link was made for, and was refused."
		default:
			status = http.StatusBadGateway
		}
		c.page(w, status, server, why)
		return
	}
	if err := c.Store.PutToken(ctx, team, user, server, "", t); err != nil {
		log.WarnContext(ctx, "mcp connect: storing the token failed", "err", err)
		c.page(w, http.StatusInternalServerError, server, "The connection could not be saved. Start again from Slack.")
		return
	}
	log.InfoContext(ctx, "mcp connected", "token", t)
	if c.OnConnected != nil {
		c.OnConnected(Connected{Team: team, User: user, Server: server, From: f.Caller[callerFrom]})
	}
	c.page(w, http.StatusOK, server, "Connected. You can close this tab and go back to Slack.")
}

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>agentbot{{with .Server}}: {{.}}{{end}}</title></head>
<body><h1>agentbot{{with .Server}}: {{.}}{{end}}</h1><p>{{.Message}}</p></body></html>
`))

// page writes the small HTML answer of the callback.
func (c *Connector) page(w http.ResponseWriter, status int, server, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'")
	w.WriteHeader(status)
	_ = pageTmpl.Execute(w, struct{ Server, Message string }{server, msg})
}
