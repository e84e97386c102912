// Package project keeps the documents a project's threads share: this
// process's working copy of a project (Folder: fetched from the Store,
// with the BMAD root's artifact and knowledge folders as read-only base
// layers), the project's documents as one session's tool calls read, save
// and edit them (Docs), and the state of a project a loaded skill is told
// (Docs.State).
package project
