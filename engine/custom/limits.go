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
	s := depthScanner{data: data, line: 1, mode: modeStatement}
	for s.i < len(s.data) {
		if s.step() {
			return &Error{Line: s.line, Msg: fmt.Sprintf("invalid TOML: nesting deeper than %d levels", maxDepth)}
		}
	}
	return nil
}

// scanMode is where a depthScanner stands in a statement.
type scanMode int

const (
	modeStatement scanMode = iota // before a statement's first character
	modeKey                       // reading a key
	modeHeader                    // reading a [table] or [[array]] header
	modeValue                     // reading a value
)

// depthScanner is the state of depthError's scan.
type depthScanner struct {
	data        []byte
	i           int
	line        int
	mode        scanMode
	headerDepth int     // segments of the current [table] header
	depth       int     // depth of the key path being built
	stack       []frame // open arrays and inline tables
}

// frame is an open array or inline table and the depth before it.
type frame struct {
	open  byte
	depth int
}

// step consumes at least one byte and reports whether the scan went deeper
// than maxDepth. It is the scanner's one transition function: what a byte
// means depends on the mode.
func (s *depthScanner) step() (tooDeep bool) {
	c := s.data[s.i]
	if s.mode == modeStatement && s.startStatement(c) {
		return false
	}
	switch c {
	case '\n':
		s.line++
		s.i++
		if len(s.stack) == 0 {
			s.mode = modeStatement
		}
		return false
	case '#':
		for s.i < len(s.data) && s.data[s.i] != '\n' {
			s.i++
		}
		return false
	case '"', '\'':
		s.i = skipString(s.data, s.i, &s.line)
		return false
	}
	s.i++
	if s.mode == modeValue {
		return s.value(c)
	}
	return s.key(c)
}

// startStatement handles the first bytes of a statement; it reports true
// when it consumed c, false when c is for the mode it switched to.
func (s *depthScanner) startStatement(c byte) bool {
	switch c {
	case ' ', '\t', '\r':
		s.i++
		return true
	case '\n', '#':
		return false
	case '[':
		s.mode, s.depth = modeHeader, 1
		s.i++
		if s.i < len(s.data) && s.data[s.i] == '[' {
			s.i++
		}
		return true
	}
	s.mode, s.depth = modeKey, s.headerDepth+1
	return false
}

// key handles a byte of a key or header.
func (s *depthScanner) key(c byte) bool {
	switch {
	case c == '.':
		s.depth++
		return s.depth > maxDepth
	case c == '=':
		s.mode = modeValue
	case c == ']' && s.mode == modeHeader:
		s.headerDepth = s.depth
		s.mode = modeValue
	}
	return false
}

// value handles a byte of a value: arrays and inline tables nest.
func (s *depthScanner) value(c byte) bool {
	n := len(s.stack)
	switch {
	case c == '[' || c == '{':
		s.stack = append(s.stack, frame{open: c, depth: s.depth})
		s.depth++
		if c == '{' {
			s.mode = modeKey
		}
		return s.depth > maxDepth
	case (c == ']' || c == '}') && n > 0:
		s.depth = s.stack[n-1].depth
		s.stack = s.stack[:n-1]
	case c == ',' && n > 0 && s.stack[n-1].open == '{':
		s.depth = s.stack[n-1].depth + 1
		s.mode = modeKey
	}
	return false
}

// skipString returns the index after the string starting at data[i] (a
// quote), counting newlines in multi-line strings. A single-line string
// stops before a newline, so a broken one cannot swallow the file.
func skipString(data []byte, i int, line *int) int {
	q := data[i]
	if i+2 < len(data) && data[i+1] == q && data[i+2] == q {
		return skipMultiline(data, i+3, q, line)
	}
	for i++; i < len(data); i++ {
		switch {
		case data[i] == '\n':
			return i
		case data[i] == '\\' && q == '"' && i+1 < len(data) && data[i+1] != '\n':
			i++ // the escaped byte
		case data[i] == q:
			return i + 1
		}
	}
	return len(data)
}

// skipMultiline returns the index after a multi-line string whose body
// starts at data[i], counting its newlines.
func skipMultiline(data []byte, i int, q byte, line *int) int {
	n := len(data)
	for ; i < n; i++ {
		switch {
		case data[i] == '\\' && q == '"' && i+1 < n:
			i++ // the escaped byte, a newline included
			if data[i] == '\n' {
				*line++
			}
		case data[i] == '\n':
			*line++
		case data[i] == q && i+2 < n && data[i+1] == q && data[i+2] == q:
			i += 3
			for k := 0; k < 2 && i < n && data[i] == q; k++ { // quotes just before the closing delimiter
				i++
			}
			return i
		}
	}
	return n
}
