package custom

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Text renders a value for substitution into prompt text: strings as is;
// integers, floats and bools in TOML/Python-like form ("3", "1.5", "1.0",
// "1e+20", "inf", "nan", "true"); time values in RFC 3339 / TOML form
// ("1979-05-27T07:32:00Z", "1979-05-27", "07:32:00"); arrays and tables as
// compact JSON with tables' keys sorted, HTML characters unescaped, numbers
// as above and non-finite floats and times as JSON strings. The output is
// deterministic byte for byte. nil is "".
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return formatFloat(x)
	case float32:
		return formatFloat(float64(x))
	case time.Time:
		return formatTime(x)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(jsonable(v)); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// jsonable rewrites a value so that encoding/json renders it as Text wants:
// floats in Python form, non-finite floats and times as strings.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = jsonable(val)
		}
		return out
	case []any, []map[string]any:
		items, _ := asList(x)
		return jsonableList(items)
	case float64:
		return jsonFloat(x)
	case float32:
		return jsonFloat(float64(x))
	case time.Time:
		return formatTime(x)
	case nil, string, bool, int64, int:
		return v
	}
	return jsonableReflect(v)
}

// jsonableList rewrites each item of an array with jsonable.
func jsonableList(items []any) []any {
	out := make([]any, len(items))
	for i, val := range items {
		out[i] = jsonable(val)
	}
	return out
}

// jsonFloat is a float for encoding/json: a number in Python form, or the
// string "inf", "-inf" or "nan" for one JSON cannot hold.
func jsonFloat(f float64) any {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return formatFloat(f)
	}
	return json.Number(formatFloat(f))
}

// jsonableReflect rewrites the other slices, arrays and string-keyed maps
// (not produced by the decoder) by reflection, so that their elements get
// jsonable's treatment; any other value is returned as is.
func jsonableReflect(v any) any {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = jsonable(rv.Index(i).Interface())
		}
		return out
	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String {
			out := make(map[string]any, rv.Len())
			it := rv.MapRange()
			for it.Next() {
				out[it.Key().String()] = jsonable(it.Value().Interface())
			}
			return out
		}
	}
	return v
}

// formatFloat renders a float as Python's repr does (which TOML accepts):
// shortest round-trip digits, ".0" on integral values, exponent form below
// 1e-4 and from 1e16.
func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	i := strings.LastIndexByte(e, 'e')
	exp, err := strconv.Atoi(e[i+1:])
	if err == nil && f != 0 && (exp < -4 || exp >= 16) {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// formatTime renders a time in TOML form: offset date-times in RFC 3339,
// local date-times, dates and times without an offset.
func formatTime(t time.Time) string {
	switch t.Location().String() {
	case "datetime-local":
		return t.Format("2006-01-02T15:04:05.999999999")
	case "date-local":
		return t.Format("2006-01-02")
	case "time-local":
		return t.Format("15:04:05.999999999")
	}
	return t.Format(time.RFC3339Nano)
}

// pyTypeName names a value's type as Python's type(value).__name__ would
// for the value tomllib decodes.
func pyTypeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case string:
		return "str"
	case bool:
		return "bool"
	case int64, int:
		return "int"
	case float64, float32:
		return "float"
	case []any, []map[string]any:
		return "list"
	case map[string]any:
		return "dict"
	case time.Time:
		switch x.Location().String() {
		case "date-local":
			return "date"
		case "time-local":
			return "time"
		}
		return "datetime"
	}
	return fmt.Sprintf("%T", v)
}
