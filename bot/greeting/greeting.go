// Package greeting tells a message that only says hello ("hi", "good
// morning @agentbot", "👋") from one with something to answer.
package greeting

import (
	"strings"
	"unicode"
)

// greetings are messages that only say hello, in the languages the sample
// bundles and common BMAD configs speak. Matching is on the whole message
// after the mention, punctuation, emoji and the agent's name are removed.
var greetings = map[string]bool{
	// English
	"hi": true, "hii": true, "hey": true, "heya": true, "hello": true, "hallo": true, "hiya": true, "howdy": true,
	"yo": true, "greetings": true, "hi there": true, "hey there": true, "hello there": true, "hello again": true,
	"good morning": true, "good afternoon": true, "good evening": true, "morning": true, "gm": true,
	"hi all": true, "hello all": true, "hey all": true, "hi everyone": true, "hello everyone": true,
	// German
	"guten morgen": true, "guten tag": true, "moin": true, "servus": true, "gruss gott": true, "grüß gott": true,
	// French
	"bonjour": true, "salut": true, "coucou": true, "bonsoir": true,
	// Spanish and Portuguese
	"hola": true, "buenos dias": true, "buenos días": true, "buenas": true, "buenas tardes": true,
	"olá": true, "ola": true, "oi": true, "bom dia": true, "boa tarde": true,
	// Italian and Dutch
	"ciao": true, "buongiorno": true, "goedemorgen": true, "hoi": true,
}

// Only reports whether text only greets: "hi", "hello there!",
// "good morning @agentbot", "👋", "hey John" (agentName: "John"), with
// nothing else to answer.
func Only(text, agentName string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	if t == "" {
		return false
	}
	emoji := false
	var b strings.Builder
	for _, r := range t {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case unicode.IsSpace(r) || unicode.IsPunct(r):
			b.WriteRune(' ')
		case r == '\u200d' || r == '\ufe0f' || unicode.Is(unicode.Sk, r):
		default:
			emoji = true // 👋 🙂 and friends
			b.WriteRune(' ')
		}
	}
	words := strings.Fields(b.String())
	if n := strings.ToLower(strings.TrimSpace(agentName)); n != "" && len(words) > 1 && words[len(words)-1] == n {
		words = words[:len(words)-1] // "hey john"
	}
	if len(words) == 0 {
		return emoji // only emoji: a wave
	}
	if len(words) > 4 {
		return false
	}
	return greetings[strings.Join(words, " ")]
}
