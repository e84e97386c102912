// Package window is the engine's context management: it keeps every
// request under the model's context window (elision of bulky content, then
// compaction by one model call), learns how the provider counts tokens
// (Calibrate), and puts requests in the one form every provider accepts
// (ProviderForm, WireCallID). The stored transcript never changes: what it
// builds are views.
package window
