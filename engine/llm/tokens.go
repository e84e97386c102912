package llm

// truncatedBelow is the share of the estimated prompt under which a
// provider's prompt_tokens say it did not read the whole prompt, and
// truncatedMin the least estimate it is judged on (small prompts vary).
const (
	truncatedBelow = 0.5
	truncatedMin   = 2048
)

// PromptTruncated reports whether a provider that counted reported prompt
// tokens for a prompt estimated at estimated tokens most likely cut the
// prompt instead of reading it. Ollama, given a prompt longer than its
// context (4096 tokens by default under 24 GiB of VRAM,
// https://docs.ollama.com/context-length), silently keeps the last
// half of its context and reports that as prompt_eval_count, with status
// 200 (ollama/ollama#17427: "only enough tokens to fill half of the
// buffer are used"; ollama/ollama#17889, #3839). No tokenizer counts half
// of bytes/4 for agentbot's prompts. The engine warns in its log, and
// model.Check warns early.
func PromptTruncated(estimated, reported int) bool {
	return estimated >= truncatedMin && reported > 0 && float64(reported) < truncatedBelow*float64(estimated)
}
