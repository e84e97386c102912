package view

import (
	"fmt"
	"strings"
	"time"

	"agentbot/storage"
)

// Connections is /agent connections' answer: the person's own connections
// (mine) and the service identities everyone acting through a server acts
// as (service: the caller passes them to admins only). It shows no secret:
// a CredentialInfo holds none.
func Connections(mine, service []storage.CredentialInfo, now time.Time) string {
	var b strings.Builder
	if len(mine) == 0 {
		b.WriteString("You have no connections to MCP servers.")
	} else {
		b.WriteString("*Your connections*")
		for _, c := range mine {
			b.WriteString("\n• " + connectionLine(c, now))
		}
		b.WriteString("\nEnd one with `/agent disconnect <server>`.")
	}
	if len(service) > 0 {
		b.WriteString("\n*Service identities* (everyone using these servers acts as them)")
		for _, c := range service {
			b.WriteString("\n• " + connectionLine(c, now))
		}
		b.WriteString("\nEnd one with `/agent disconnect <server> --service`.")
	}
	return b.String()
}

// connectionLine is one connection: server, account where known, scopes
// and expiry.
func connectionLine(c storage.CredentialInfo, now time.Time) string {
	s := "`" + c.Server + "`"
	if c.Account != "" {
		s += " as " + c.Account
	}
	if len(c.Scopes) > 0 {
		s += " — scopes " + strings.Join(c.Scopes, ", ")
	}
	switch {
	case c.Expiry.IsZero():
	case c.Expiry.Before(now):
		s += " — expired " + c.Expiry.UTC().Format("2006-01-02 15:04 UTC")
	default:
		s += " — expires " + c.Expiry.UTC().Format("2006-01-02 15:04 UTC")
	}
	return s
}

// Disconnected is /agent disconnect's answer once the connection to server
// (the service identity's, for service) is forgotten: revoked says whether
// the server confirmed the revocation, timedOut whether it did not answer
// in time.
func Disconnected(server string, service, revoked, timedOut bool) string {
	msg := fmt.Sprintf("Disconnected from `%s`: I no longer hold a token for you there.", server)
	if service {
		msg = fmt.Sprintf("Ended the service identity at `%s`: I no longer hold its token.", server)
	}
	switch {
	case revoked:
		msg += " The server revoked it too."
	case timedOut:
		msg += " The server did not answer my revocation in time; you can also end agentbot's access in the account's settings there."
	default:
		msg += " The server did not revoke it (it may not offer revocation); you can also end agentbot's access in the account's settings there."
	}
	return msg
}
