// Package export renders a session for people: its transcript as a
// markdown document (Tools.Markdown), with the runtime's own notes told
// apart from the user's and the agent's words (IsRuntimeNote), and its
// audit trail as a table (AuditTable).
package export
