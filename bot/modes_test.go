package bot_test

import "testing"

// TestScenariosInBothModes runs a representative set of the end-to-end
// scenarios over Socket Mode and over HTTP (the Events API at a request
// URL, signed): the same tests, the same assertions.
func TestScenariosInBothModes(t *testing.T) {
	for _, sc := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"greeting, menu pick, streaming and upload", TestMentionPickerGreetingWorkflowStreamAndUpload},
		{"menu buttons", TestHelpShowsMenuButtons},
		{"channel default and a queued reply", TestChannelDefaultAndQueuedMessage},
		{"direct message", TestDirectMessage},
		{"redelivery deduplicated", TestDedupeAcrossRetriesAndRestart},
		{"acked only once persisted", TestAckAfterPersistence},
		{"upload from the store", TestUploadsComeFromStore},
		{"approval approved", TestApprovalApprove},
		{"approval denied", TestApprovalDeny},
		{"stop while streaming", TestStopWhileStreaming},
		{"stop between model calls", TestStopBetweenModelCalls},
		{"projects chain across threads", TestProjectChainAcrossThreadsInSlack},
	} {
		t.Run(sc.name, func(t *testing.T) { inModes(t, sc.f) })
	}
}
