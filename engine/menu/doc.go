// Package menu reads a user's message against an agent's menu: the item
// it picks by number, *command, code or trigger (Match), the item a first
// message clearly names inside a sentence (Intent), and the note that
// tells the model which item the user chose (PickNote).
package menu
