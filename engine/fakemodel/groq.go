package fakemodel

import "encoding/json"

// Groq's tool_use_failed: the model's tool-call generation did not parse
// as a tool call, and Groq answers with an error instead of the
// generation, which it returns as failed_generation. Its shape, from the
// bodies people report (agno-agi/agno#4090, huggingface/smolagents#1119,
// sipeed/picoclaw#748):
//
//	{"error":{"message":"Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.",
//	  "type":"invalid_request_error","code":"tool_use_failed","failed_generation":"..."}}
//
// Without streaming it is the body of a 400. A streamed request has its
// 200 and the stream's first chunk already: the error comes as a data
// event of its own carrying that object, and the stream ends without
// [DONE] (Groq's SDKs read an "error" member of a stream event as an
// error: groq/groq-python#119 and groq/groq-typescript#120, "handle
// streaming error"). The generation is never a tool call or text of the
// answer.

// groqError is Groq's error object.
type groqError struct {
	Error struct {
		Message          string `json:"message"`
		Type             string `json:"type"`
		Code             string `json:"code"`
		FailedGeneration string `json:"failed_generation"`
	} `json:"error"`
}

// groqToolUseFailed is Groq's tool_use_failed error for generation.
func groqToolUseFailed(generation string) groqError {
	var e groqError
	e.Error.Message = "Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details."
	e.Error.Type = "invalid_request_error"
	e.Error.Code = "tool_use_failed"
	e.Error.FailedGeneration = generation
	return e
}

// event is e as a server-sent data event.
func (e groqError) event() []byte {
	body, _ := json.Marshal(e)
	return append(append([]byte("data: "), body...), '\n', '\n')
}
