package argtext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"agentbot/engine/sandbox"
	"agentbot/engine/text"
)

// Render renders a call's arguments (JSON text) for a person asked to
// approve it, in at most about max bytes (no cap when max <= 0). It is the
// one rendering of arguments: Slack's approval message and the terminal's
// prompt both show it.
//
// The text is JSON, pretty-printed, so it reads the same everywhere:
//   - the keys that say where or what (path, url, uri, name, id, title,
//     command, query…, or a key ending in one: file_path, pageId) come
//     first, the others after them in name order, at every depth;
//   - a short string is shown in full, a long one cut, ending with its
//     size ("… [12.0 KiB in all, 11.8 KiB not shown]"); a long list shows
//     its first items and how many more there are;
//   - the value of a secret key is masked: a key that is, or ends in, a
//     secret's name (token, password, secret, api_key, authorization,
//     cookie, credential…), in any case or spelling (apiKey, X-Api-Key),
//     never a key that only contains one (keywords, sort_key, monkey and
//     max_tokens stay visible); so is a string that looks like a
//     credential whatever its key (Bearer …, sk-…, xoxb-…, ghp_…).
//
// When the whole is still over max, the last lines are cut with a note of
// the bytes not shown, so the leading keys are always seen. Arguments that
// are not JSON are not shown, only their size.
func Render(args string, max int) string {
	var v any
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Sprintf("(arguments that are not JSON, %s)", sandbox.SizeText(int64(len(args))))
	}
	var b bytes.Buffer
	writeArg(&b, v, false, 0)
	out := b.String()
	if max > 0 && len(out) > max {
		cut := CutUTF8(out, max)
		if i := strings.LastIndexByte(cut, '\n'); i > 0 {
			cut = cut[:i]
		}
		out = cut + fmt.Sprintf("\n… (%s more bytes not shown)", strconv.Itoa(len(out)-len(cut)))
	}
	return out
}

// Limits of Render on one value.
const (
	shownString = 300 // bytes of a string shown
	shownItems  = 20  // items of a list shown
)

// masked replaces a secret value in Render.
const masked = "[masked]"

// secretSuffixes are the names of secrets: a key that is one, or ends in
// one, once lower-cased with everything but letters and digits removed
// (apiKey, X-Api-Key and api_key are all "apikey").
var secretSuffixes = []string{
	"token", "password", "passwd", "passphrase", "secret", "secrets",
	"authorization", "auth", "cookie", "cookies", "credential", "credentials",
	"apikey", "privatekey", "accesskey", "secretkey", "signingkey", "sessionkey",
	"encryptionkey", "clientsecret",
}

// secretValue matches values that look like credentials whatever their key.
var secretValue = regexp.MustCompile(`(?i)^(bearer\s|basic\s|sk-|xox[abpr]-|xapp-|ghp_|gho_|github_pat_|glpat-|AKIA)`)

// leadKeys say where or what a call acts on; a key that is one or ends in
// one comes first, in this order.
var leadKeys = []string{"path", "paths", "file", "files", "filename", "uri", "url", "repo", "repository",
	"branch", "name", "id", "title", "key", "command", "query", "source", "destination", "target"}

// compactKey is key lower-cased with only its letters and digits.
func compactKey(key string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, key)
}

// secretKey reports whether the value of key is never shown.
func secretKey(key string) bool {
	k := compactKey(key)
	for _, s := range secretSuffixes {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

// leadRank is the place of key among leadKeys, or len(leadKeys).
func leadRank(key string) int {
	k := compactKey(key)
	for i, l := range leadKeys {
		if k == l || (strings.HasSuffix(k, l) && len(k) > len(l) && hasWordEnd(key, l)) {
			return i
		}
	}
	return len(leadKeys)
}

// hasWordEnd reports whether key ends in the word w as its own word
// (file_path, filePath, file-path), not inside another (xpath is not path).
func hasWordEnd(key, w string) bool {
	if len(key) <= len(w) {
		return false
	}
	head := key[:len(key)-len(w)]
	last := rune(head[len(head)-1])
	first := rune(key[len(key)-len(w)])
	return !unicode.IsLetter(last) || unicode.IsUpper(first)
}

// orderKeys sorts the keys of an object: lead keys first, then by name.
func orderKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := leadRank(keys[i]), leadRank(keys[j])
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// writeArg writes v as indented JSON at depth, masked when secret.
func writeArg(b *bytes.Buffer, v any, secret bool, depth int) {
	indent := strings.Repeat("  ", depth+1)
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{")
		for i, k := range orderKeys(x) {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + indent)
			writeJSONString(b, k)
			b.WriteString(": ")
			writeArg(b, x[k], secret || secretKey(k), depth+1)
		}
		b.WriteString("\n" + indent[2:] + "}")
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[")
		for i, item := range x {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + indent)
			if i == shownItems {
				writeJSONString(b, fmt.Sprintf("… %d more items", len(x)-i))
				break
			}
			writeArg(b, item, secret, depth+1)
		}
		b.WriteString("\n" + indent[2:] + "]")
	case string:
		writeShown(b, x, secret)
	case nil:
		b.WriteString("null")
	default: // numbers and booleans
		if secret {
			writeJSONString(b, masked)
			return
		}
		data, _ := json.Marshal(x)
		b.Write(data)
	}
}

// writeShown writes a string value: masked when secret or when it looks
// like a credential, cut with its size when long.
func writeShown(b *bytes.Buffer, x string, secret bool) {
	switch {
	case secret || secretValue.MatchString(strings.TrimSpace(x)):
		writeJSONString(b, masked)
	case len(x) > shownString:
		shown := CutUTF8(x, shownString)
		writeJSONString(b, shown+fmt.Sprintf("… [%s in all, %s not shown]",
			sandbox.SizeText(int64(len(x))), sandbox.SizeText(int64(len(x)-len(shown)))))
	default:
		writeJSONString(b, x)
	}
}

// writeJSONString writes s as a JSON string, HTML characters unescaped.
func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}

// CutUTF8 cuts s to at most n bytes without splitting a character.
func CutUTF8(s string, n int) string { return text.CutBytes(s, n, "") }
