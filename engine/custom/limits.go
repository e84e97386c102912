package custom

import "fmt"

// maxDepth is the deepest key path a layer may build, counting
// table-header segments, dotted-key segments and nested arrays and inline
// tables. BurntSushi/toml's cost grows with the square of this depth (a
// 10,000-deep inline table takes tens of seconds), so deeper layers are
// refused before decoding; real customization files nest a handful of
// levels.
const maxDepth = 64

// depthError scans TOML text the way a lexer would (strings, comments,
// table headers, keys, arrays and inline tables) and returns an *Error
// without Path for the first place deeper than maxDepth, or nil. It never
// rejects anything else: syntax is the decoder's business.
func depthError(data []byte) *Error {
	var (
		line        = 1
		headerDepth = 0     // segments of the current [table] header
		depth       = 0     // depth of the key path being built
		inKey       = false // reading a key (or header) rather than a value
		header      = false // the key is a [table] or [[array]] header
		stmtStart   = true  // at the start of a statement (depth 0, after a newline)
		stack       []frame // open arrays and inline tables
	)
	tooDeep := func() *Error {
		return &Error{Line: line, Msg: fmt.Sprintf("invalid TOML: nesting deeper than %d levels", maxDepth)}
	}
	for i := 0; i < len(data); {
		c := data[i]
		if stmtStart {
			switch c {
			case ' ', '\t', '\r':
				i++
				continue
			case '\n', '#':
			case '[':
				stmtStart, inKey, header, depth = false, true, true, 1
				i++
				if i < len(data) && data[i] == '[' {
					i++
				}
				continue
			default:
				stmtStart, inKey, header, depth = false, true, false, headerDepth+1
			}
		}
		switch {
		case c == '\n':
			line++
			i++
			if len(stack) == 0 {
				stmtStart, inKey, header = true, false, false
			}
			continue
		case c == '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			continue
		case c == '"' || c == '\'':
			i = skipString(data, i, &line)
			continue
		}
		if inKey {
			switch c {
			case '.':
				depth++
				if depth > maxDepth {
					return tooDeep()
				}
			case '=':
				inKey = false
			case ']':
				if header {
					headerDepth = depth
					inKey, header = false, false
				}
			}
			i++
			continue
		}
		switch c {
		case '[', '{':
			stack = append(stack, frame{open: c, depth: depth})
			depth++
			if depth > maxDepth {
				return tooDeep()
			}
			if c == '{' {
				inKey = true
			}
		case ']', '}':
			if n := len(stack); n > 0 {
				depth = stack[n-1].depth
				stack = stack[:n-1]
			}
		case ',':
			if n := len(stack); n > 0 && stack[n-1].open == '{' {
				depth = stack[n-1].depth + 1
				inKey = true
			}
		}
		i++
	}
	return nil
}

// frame is an open array or inline table and the depth before it.
type frame struct {
	open  byte
	depth int
}

// skipString returns the index after the string starting at data[i] (a
// quote), counting newlines in multi-line strings. A single-line string
// stops before a newline, so a broken one cannot swallow the file.
func skipString(data []byte, i int, line *int) int {
	q := data[i]
	n := len(data)
	if i+2 < n && data[i+1] == q && data[i+2] == q { // multi-line
		i += 3
		for i < n {
			switch {
			case data[i] == '\\' && q == '"' && i+1 < n:
				if data[i+1] == '\n' {
					*line++
				}
				i += 2
			case data[i] == '\n':
				*line++
				i++
			case data[i] == q && i+2 < n && data[i+1] == q && data[i+2] == q:
				i += 3
				for k := 0; k < 2 && i < n && data[i] == q; k++ { // quotes just before the closing delimiter
					i++
				}
				return i
			default:
				i++
			}
		}
		return n
	}
	i++
	for i < n {
		switch {
		case data[i] == '\n':
			return i
		case data[i] == '\\' && q == '"' && i+1 < n && data[i+1] != '\n':
			i += 2
		case data[i] == q:
			return i + 1
		default:
			i++
		}
	}
	return n
}
