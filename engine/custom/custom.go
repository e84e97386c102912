// Package custom resolves BMAD customization: TOML layers merged with BMAD's
// structural rules, as BMAD-METHOD 6.4+ ("skills format") does in
// _bmad/scripts/config_utils.py.
//
// A skill's customize.toml is the required base; the team file
// _bmad/custom/<skill>.toml and the personal file
// _bmad/custom/<skill>.user.toml are merged over it in that order. The
// central configuration merges _bmad/config.toml (required),
// _bmad/config.user.toml, _bmad/custom/config.toml and
// _bmad/custom/config.user.toml. Tables merge key by key, arrays of tables
// that all carry a "code" (else "id") merge by that key, other arrays
// append, and anything else is replaced by the override. A missing optional
// layer is an empty table; a present layer that cannot be used is an error,
// never silently the defaults.
package custom

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"agentbot/engine/hostfile"
)

// Table is a decoded TOML table. Values are string, int64, float64, bool,
// time.Time (local date/time values carry the toml package's local
// locations), []any and map[string]any.
type Table = map[string]any

// Error is a customization layer that cannot be used.
type Error struct {
	Path string // the file, as given (a host path: for operators, never shown to the model)
	Line int    // 1-based line of a TOML syntax error; 0 when not a syntax error
	Msg  string
}

// Error formats the error as "PATH:LINE: MSG", or "PATH: MSG" when Line is 0.
func (e *Error) Error() string {
	switch {
	case e.Path == "":
		return e.Msg
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	default:
		return e.Path + ": " + e.Msg
	}
}

// MaxFileSize caps a TOML layer (1 MiB).
const MaxFileSize = 1 << 20

// LoadFile reads one TOML layer (load_toml). A missing file is an empty
// table unless required, when it is an *Error "required TOML file not
// found". A path that exists but is not a regular file is an *Error and is
// never opened. A file over MaxFileSize, unreadable, or invalid TOML is an
// *Error, with Line set for syntax errors.
func LoadFile(path string, required bool) (Table, error) {
	info, err := os.Stat(path)
	if err != nil {
		if missing(err) {
			if required {
				return nil, &Error{Path: path, Msg: "required TOML file not found"}
			}
			return Table{}, nil
		}
		return nil, &Error{Path: path, Msg: "failed to read: " + cause(err)}
	}
	if !info.Mode().IsRegular() {
		return nil, &Error{Path: path, Msg: "TOML layer is not a file"}
	}
	if info.Size() > MaxFileSize {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("TOML layer is larger than %d bytes", MaxFileSize)}
	}
	data, err := readRegular(path)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			ce.Path = path
			return nil, ce
		}
		return nil, &Error{Path: path, Msg: "failed to read: " + cause(err)}
	}
	t, perr := parse(data)
	if perr != nil {
		perr.Path = path
		return nil, perr
	}
	return t, nil
}

// missing reports whether a Stat error means the path does not exist, as
// pathlib's Path.exists() treats it.
func missing(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) ||
		errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENAMETOOLONG)
}

// cause strips the path from an *os.PathError, since Error carries it.
func cause(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// readRegular opens path (without blocking, where the platform allows, in
// case it was replaced by a FIFO since the Stat), checks again that it is a
// regular file, and reads at most MaxFileSize bytes.
func readRegular(path string) ([]byte, error) {
	data, err := hostfile.Read(path, MaxFileSize)
	var tl *hostfile.TooLargeError
	switch {
	case errors.Is(err, hostfile.ErrNotRegular):
		return nil, &Error{Msg: "TOML layer is not a file"}
	case errors.As(err, &tl):
		return nil, &Error{Msg: fmt.Sprintf("TOML layer is larger than %d bytes", MaxFileSize)}
	}
	return data, err
}

// parse decodes a TOML document into a Table with every array as []any.
// The returned *Error has no Path.
func parse(data []byte) (t Table, e *Error) {
	defer func() {
		if r := recover(); r != nil {
			t, e = nil, &Error{Msg: fmt.Sprintf("invalid TOML: decoder failure: %v", r)}
		}
	}()
	if e := encodingError(data); e != nil {
		return nil, e
	}
	if e := depthError(data); e != nil {
		return nil, e
	}
	var m map[string]any
	if _, err := toml.Decode(string(data), &m); err != nil {
		return nil, decodeError(data, err)
	}
	if m == nil {
		return Table{}, nil
	}
	return normalize(m).(Table), nil
}

// byteOrderMarks are the UTF-8 and UTF-16 byte order marks.
var byteOrderMarks = [][]byte{[]byte("\xef\xbb\xbf"), []byte("\xff\xfe"), []byte("\xfe\xff")}

// encodingError returns an *Error without Path when data is not what
// tomllib reads: it reads the bytes as UTF-8, byte order mark included,
// where BurntSushi/toml skips a UTF-8 or UTF-16 mark, so a mark is refused
// as Python does; and invalid UTF-8 is refused at the line of its first
// bad byte. It returns nil otherwise.
func encodingError(data []byte) *Error {
	for _, bom := range byteOrderMarks {
		if bytes.HasPrefix(data, bom) {
			return &Error{Line: 1, Msg: "invalid TOML: a byte order mark is not allowed"}
		}
	}
	if utf8.Valid(data) {
		return nil
	}
	i := 0
	for i < len(data) {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		i += size
	}
	return &Error{Line: lineAt(data, i), Msg: "invalid TOML: the file is not valid UTF-8"}
}

// decodeError turns the decoder's error for data into an *Error without
// Path, at tomllib's line for a syntax error.
func decodeError(data []byte, err error) *Error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &Error{Msg: "invalid TOML: " + err.Error()}
	}
	msg := pe.Message
	if msg == "" {
		msg = pe.Error()
	}
	line := pe.Position.Line
	// The parser counts an error on a line's newline as the next
	// line; the byte offset says where it is (tomllib's line).
	if st := pe.Position.Start; st >= 0 && st <= len(data) && lineAt(data, st) <= line {
		line = lineAt(data, st)
	}
	return &Error{Line: line, Msg: "invalid TOML: " + msg}
}

// lineAt is the 1-based line of byte offset i.
func lineAt(data []byte, i int) int {
	return 1 + bytes.Count(data[:i], []byte("\n"))
}

// normalize turns the decoder's []map[string]any (arrays of tables) into
// []any, recursively, so that every array has one type.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			x[k] = normalize(val)
		}
		return x
	case []map[string]any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = normalize(val)
		}
		return out
	case []any:
		for i, val := range x {
			x[i] = normalize(val)
		}
		return x
	default:
		return v
	}
}

// Merge is structural_merge: both tables -> deep merge key by key (result is
// a new map; inputs are never mutated); both arrays -> mergeArrays;
// otherwise override wins.
//
// mergeArrays(b, o): if every item of b++o is a table: if all have "code",
// every "code" must be a non-empty string (else an error, like Python's
// ConfigError), keyed by code; else if all have "id", the same with "id";
// else not keyed. Keyed: b's items are copied in order and indexed by key;
// each o item whose key is present replaces that item whole at its
// position; others append (and are indexed, so a later o item with the same
// key replaces it). Not keyed (or empty, or not all tables): b ++ o.
// Tables copied into keyed results are shallow copies, never an input's map.
func Merge(base, override any) (any, error) {
	if b, ok := base.(map[string]any); ok {
		if o, ok := override.(map[string]any); ok {
			result := make(Table, len(b)+len(o))
			for k, v := range b {
				result[k] = v
			}
			for k, v := range o {
				if old, ok := result[k]; ok {
					merged, err := Merge(old, v)
					if err != nil {
						return nil, err
					}
					result[k] = merged
				} else {
					result[k] = v
				}
			}
			return result, nil
		}
	}
	if b, ok := asList(base); ok {
		if o, ok := asList(override); ok {
			return mergeArrays(b, o)
		}
	}
	return override, nil
}

// asList returns v as []any when it is an array.
func asList(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []map[string]any:
		out := make([]any, len(x))
		for i, m := range x {
			out[i] = m
		}
		return out, true
	}
	return nil, false
}

// keyedMergeFields are the identity fields of arrays of tables, in order.
var keyedMergeFields = [...]string{"code", "id"}

// detectKeyedMergeField is _detect_keyed_merge_field: the field that keys
// items, "" when they are not keyed, or an error for a present but unusable
// identifier.
func detectKeyedMergeField(items []any) (string, error) {
	if len(items) == 0 {
		return "", nil
	}
	for _, item := range items {
		if _, ok := item.(map[string]any); !ok {
			return "", nil
		}
	}
	for _, candidate := range keyedMergeFields {
		all := true
		for _, item := range items {
			if _, ok := item.(map[string]any)[candidate]; !ok {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		for _, item := range items {
			value := item.(map[string]any)[candidate]
			s, ok := value.(string)
			if !ok {
				return "", &Error{Msg: fmt.Sprintf("keyed array identifier `%s` must be a string, got %s", candidate, pyTypeName(value))}
			}
			if s == "" {
				return "", &Error{Msg: fmt.Sprintf("keyed array identifier `%s` must not be empty", candidate)}
			}
		}
		return candidate, nil
	}
	return "", nil
}

// mergeArrays is _merge_arrays.
func mergeArrays(base, override []any) ([]any, error) {
	all := make([]any, 0, len(base)+len(override))
	all = append(all, base...)
	all = append(all, override...)
	field, err := detectKeyedMergeField(all)
	if err != nil {
		return nil, err
	}
	if field == "" {
		return all, nil
	}
	result := make([]any, 0, len(all))
	index := make(map[string]int, len(all))
	for _, item := range base {
		copied := copyTable(item.(map[string]any))
		index[copied[field].(string)] = len(result)
		result = append(result, copied)
	}
	for _, item := range override {
		copied := copyTable(item.(map[string]any))
		key := copied[field].(string)
		if i, ok := index[key]; ok {
			result[i] = copied
		} else {
			index[key] = len(result)
			result = append(result, copied)
		}
	}
	return result, nil
}

// copyTable is Python's dict(item): a shallow copy.
func copyTable(m map[string]any) Table {
	out := make(Table, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// MergeLayers merges layers in order starting from an empty table
// (merge_layers).
func MergeLayers(layers ...Table) (Table, error) {
	merged := Table{}
	for _, layer := range layers {
		if layer == nil {
			layer = Table{}
		}
		m, err := Merge(merged, layer)
		if err != nil {
			return nil, err
		}
		merged = m.(Table)
	}
	return merged, nil
}

// layer is one file of a layered merge.
type layer struct {
	path     string
	required bool
}

// mergeFiles loads and merges the files in order. Errors are *Error naming
// the layer at fault.
func mergeFiles(files []layer) (Table, error) {
	merged := Table{}
	for _, f := range files {
		t, err := LoadFile(f.path, f.required)
		if err != nil {
			return nil, err
		}
		m, err := Merge(merged, t)
		if err != nil {
			e := &Error{Path: f.path, Msg: err.Error()}
			var ce *Error
			if errors.As(err, &ce) {
				e.Msg = ce.Msg
			}
			return nil, e
		}
		merged = m.(Table)
	}
	return merged, nil
}

// Skill merges a skill's three layers (load_customization):
// <skillDir>/customize.toml (required), <projectRoot>/_bmad/custom/<skill>.toml
// and <projectRoot>/_bmad/custom/<skill>.user.toml, where <skill> is
// filepath.Base(skillDir). projectRoot "" means no custom layers. An error
// from a layer, or a merge error, is an *Error naming that layer's path.
func Skill(projectRoot, skillDir string) (Table, error) {
	files := []layer{{path: filepath.Join(skillDir, "customize.toml"), required: true}}
	if projectRoot != "" {
		name := filepath.Base(skillDir)
		dir := filepath.Join(projectRoot, "_bmad", "custom")
		files = append(files,
			layer{path: filepath.Join(dir, name+".toml")},
			layer{path: filepath.Join(dir, name+".user.toml")})
	}
	return mergeFiles(files)
}

// Central merges the four central layers (load_central_config):
// _bmad/config.toml (required), _bmad/config.user.toml,
// _bmad/custom/config.toml and _bmad/custom/config.user.toml.
func Central(projectRoot string) (Table, error) {
	bmad := filepath.Join(projectRoot, "_bmad")
	return mergeFiles([]layer{
		{path: filepath.Join(bmad, "config.toml"), required: true},
		{path: filepath.Join(bmad, "config.user.toml")},
		{path: filepath.Join(bmad, "custom", "config.toml")},
		{path: filepath.Join(bmad, "custom", "config.user.toml")},
	})
}

// Lookup returns the value at a dotted path ("agent.icon",
// "modules.bmm.planning_artifacts"), like resolve_config.py's extract_key.
func Lookup(t Table, dotted string) (any, bool) {
	var current any = t
	for _, part := range strings.Split(dotted, ".") {
		m, ok := current.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok := m[part]
		if !ok {
			return nil, false
		}
		current = v
	}
	return current, true
}
