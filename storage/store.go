// Package storage keeps agentbot's state in bbolt: sessions and their
// transcripts, the output index, seen events, inbound queues and channel
// defaults.
package storage
