// Package storage is agentbot's storage contract: the roles a store plays
// (Sessions, SessionList, Retention, Dedupe, Inbound, Leases, Fenced,
// Channels, Usage, Outputs, Projects, Credentials; Backend is all of
// them), each method taking the caller's context first, the types they
// hand over, their errors, the functions made of the roles (Session,
// Lookup, Next, ...), and the argument checks and id scheme every store
// applies, so that all stores accept and produce exactly the same.
// Credentials hold secrets only sealed: storage/secretbox seals them and
// storage/credentials (the Vault) is the one place that opens them.
//
// The stores live in their own packages: storage/bolt, the embedded bbolt
// default that one process holds, and storage/postgres, shared by
// replicas. storage/storetest is the contract suite both run. Consumers
// depend on the roles they use (bot.Store composes them), never on a
// store's package; only cmd/agentbot picks one.
package storage
