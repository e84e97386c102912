// Package render shows one turn of an agent in its Slack thread.
//
// A Reply receives the engine's events and renders them: the answer as a
// stream (chat.startStream, appendStream with markdown text and one
// task_update chunk per tool call, stopStream), or, when streaming is off
// or Slack refuses it, as a status message that is updated and then
// replaced by the answer. The final answer carries the feedback buttons,
// and every document the turn saved is uploaded once, at the end.
//
// A reply is in one mode at a time (start, streaming, overflowed,
// fallback, stopped, done); next is the one transition function, and
// Finish has one path per mode. A reply talks to Slack only through a
// Poster, the few Web API calls it makes; Slack is the Poster over
// slack-go, which waits out rate limits as Slack asks (Retry-After).
package render
