package fakemodel

import (
	"fmt"
	"net/http"
)

// validateResponses checks a Responses request as OpenAI does and returns
// the first refusal, or nil.
func (s *Server) validateResponses(wr wireResponsesRequest, items []wireRespInItem) *respError {
	bad := func(param, format string, args ...any) *respError {
		return &respError{status: http.StatusBadRequest, param: param, message: fmt.Sprintf(format, args...)}
	}
	if wr.Model == "" {
		return bad("model", "Missing required parameter: 'model'.")
	}
	// Function tools are flat in the Responses API: a tool without a name
	// (the Chat Completions shape, nested under "function") is refused
	// (https://platform.openai.com/docs/api-reference/responses/create#responses-create-tools).
	for i, t := range wr.Tools {
		if t.Type == "function" && t.Name == "" {
			return bad(fmt.Sprintf("tools[%d].name", i), "Missing required parameter: 'tools[%d].name'.", i)
		}
	}
	fam := openAIFamilyOf(wr.Model)
	effort := ""
	if wr.Reasoning != nil {
		effort = wr.Reasoning.Effort
	}
	if err := fam.checkEffort(wr.Model, effort, "reasoning.effort"); err != nil {
		return err
	}
	if err := fam.checkSampling(effort, wr.Temperature != nil); err != nil {
		return err
	}
	if err := checkPairs(items); err != nil {
		return err
	}
	return s.responses().checkReasoning(wr, items)
}

// checkPairs checks roles and that function calls and their outputs pair
// up by call_id: "No tool call found for function call output with call_id
// <id>." (continuedev/continue#10092, vercel/ai#8216) and "No tool output
// found for function call <id>." (anomalyco/opencode#16717).
func checkPairs(items []wireRespInItem) *respError {
	calls, outputs := map[string]bool{}, map[string]bool{}
	for i, it := range items {
		switch it.Type {
		case "", "message":
			switch it.Role {
			case "user", "assistant", "system", "developer":
			default:
				return &respError{status: http.StatusBadRequest, param: fmt.Sprintf("input[%d].role", i), message: fmt.Sprintf(
					"Invalid value: '%s'. Supported values are: 'assistant', 'system', 'developer', and 'user'.", it.Role)}
			}
		case "function_call":
			calls[it.CallID] = true
		case "function_call_output":
			if !calls[it.CallID] {
				return &respError{status: http.StatusBadRequest, param: "input",
					message: fmt.Sprintf("No tool call found for function call output with call_id %s.", it.CallID)}
			}
			outputs[it.CallID] = true
		case "reasoning":
		default:
			return &respError{status: http.StatusBadRequest, param: fmt.Sprintf("input[%d].type", i),
				message: fmt.Sprintf("Invalid value: '%s'.", it.Type)}
		}
	}
	for i, it := range items {
		if it.Type == "function_call" && !outputs[it.CallID] {
			return &respError{status: http.StatusBadRequest, param: fmt.Sprintf("input[%d]", i),
				message: fmt.Sprintf("No tool output found for function call %s.", it.CallID)}
		}
	}
	return nil
}

// checkReasoning checks the reasoning items of a stateless conversation:
//   - with store false, a reasoning item must carry its encrypted content,
//     else it is looked up and not found (404 "Item with id 'rs_...' not
//     found. Items are not persisted when `store` is set to false. ...",
//     can1357/oh-my-pi#41);
//   - its encrypted content must be the server's, byte for byte (400
//     invalid_encrypted_content "The encrypted content gAAA... could not
//     be verified.", openai/codex#8145);
//   - it must be followed by the item it led to ("Item 'rs_...' of type
//     'reasoning' was provided without its required following item.",
//     continuedev/continue#8933);
//   - for a reasoning model, a function call the model made after a
//     reasoning item must come after that item ("Item 'fc_...' of type
//     'function_call' was provided without its required 'reasoning' item:
//     'rs_...'.", cline/cline#12242, continuedev/continue#10018).
func (st *responsesState) checkReasoning(wr wireResponsesRequest, items []wireRespInItem) *respError {
	stateless := wr.Store != nil && !*wr.Store
	st.mu.Lock()
	defer st.mu.Unlock()
	run := map[string]bool{} // reasoning items of the current assistant run
	for i, it := range items {
		switch {
		case it.Type == "reasoning":
			if err := st.checkReasoningItem(it, stateless); err != nil {
				return err
			}
			if i+1 >= len(items) || !followsReasoning(items[i+1]) {
				return &respError{status: http.StatusBadRequest, param: "input",
					message: fmt.Sprintf("Item '%s' of type 'reasoning' was provided without its required following item.", it.ID)}
			}
			run[it.ID] = true
		case it.Type == "function_call":
			ids, issued := st.callRS[it.CallID]
			if issued && st.reasonerLocked(wr.Model) && !run[ids[1]] {
				return &respError{status: http.StatusBadRequest, param: "input", message: fmt.Sprintf(
					"Item '%s' of type 'function_call' was provided without its required 'reasoning' item: '%s'.", ids[0], ids[1])}
			}
		case it.Type == "message" && it.Role == "assistant":
		default:
			run = map[string]bool{} // a user message or a tool output ends the run
		}
	}
	return nil
}

// checkReasoningItem checks one reasoning item's id and content.
func (st *responsesState) checkReasoningItem(it wireRespInItem, stateless bool) *respError {
	if it.EncryptedContent == nil {
		if stateless {
			return &respError{status: http.StatusNotFound, param: "input", message: fmt.Sprintf(
				"Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", it.ID)}
		}
		return nil
	}
	if want, ok := st.issued[it.ID]; !ok || want != *it.EncryptedContent {
		enc := *it.EncryptedContent
		if len(enc) > 8 {
			enc = enc[:4] + "..." + enc[len(enc)-4:]
		}
		return &respError{status: http.StatusBadRequest, code: "invalid_encrypted_content",
			message: fmt.Sprintf("The encrypted content %s could not be verified.", enc)}
	}
	return nil
}

// followsReasoning reports whether an item may follow a reasoning item:
// what the model produced after reasoning (a function call, its message,
// or more reasoning).
func followsReasoning(it wireRespInItem) bool {
	return it.Type == "function_call" || it.Type == "reasoning" ||
		((it.Type == "message" || it.Type == "") && it.Role == "assistant")
}

// reasonerLocked is reasons with st.mu held.
func (st *responsesState) reasonerLocked(model string) bool {
	return st.reasoners[model] || openAIFamilyOf(model).reasoning
}
