package fakeslack

import "strings"

// viewsPublish records a published Home tab (the call and its view are in
// Calls).
func (s *Server) viewsPublish(r *apiRequest) (result, string) {
	if r.get("user_id") == "" {
		return nil, "invalid_arguments"
	}
	if r.get("view") == "" {
		return nil, "invalid_arguments"
	}
	return result{"view": map[string]any{"id": "V" + randomHex(4), "type": "home"}}, ""
}

// conversationsOpen opens the DM with a user: its id is "D" and the user
// id without its first letter.
func (s *Server) conversationsOpen(r *apiRequest) (result, string) {
	users := r.get("users")
	if users == "" || strings.Contains(users, ",") {
		return nil, "invalid_arguments"
	}
	return result{"channel": map[string]any{"id": "D" + strings.TrimPrefix(users, "U"), "is_im": true}}, ""
}
