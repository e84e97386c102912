// Package prompt writes what a session starts with, with no model call:
// the byte-stable system prompt of an agent (System) or of a skill-format
// agent (Skill), the first user-role message of session facts, and the
// greeting with its numbered menu (Greet, GreetSkill).
package prompt
