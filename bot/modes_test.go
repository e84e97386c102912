package bot_test

import "testing"

// TestScenariosInBothModes runs a representative set of the end-to-end
// scenarios over Socket Mode and over HTTP (the Events API at a request
// URL, signed): the same tests, the same assertions.
func TestScenariosInBothModes(t *testing.T) {
	for name, f := range map[string]func(*testing.T){
		"greeting, menu pick, streaming and upload": TestMentionPickerGreetingWorkflowStreamAndUpload,
	} {
		t.Run(name, func(t *testing.T) { inModes(t, f) })
	}
}
