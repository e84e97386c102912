package greeting

import "testing"

func TestIsGreetingOnly(t *testing.T) {
	yes := []string{"hi", "Hello!", "hello there", "Hey John", "good morning", "Good morning!!", "👋", "hi 👋", "hola", "Bonjour", "guten Morgen", "olá", "hey there :)"}
	no := []string{"", "hi, can you write the PRD?", "hello, let's start", "2", "*brief", "PRD", "hey what is a PRD", "thanks", "morning standup notes", "hi hi hi hi hi hi"}
	for _, s := range yes {
		if !Only(s, "John") {
			t.Errorf("%q is a greeting", s)
		}
	}
	for _, s := range no {
		if Only(s, "John") {
			t.Errorf("%q is not only a greeting", s)
		}
	}
}
