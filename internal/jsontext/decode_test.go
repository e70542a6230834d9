package jsontext_test

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/jsontext"
)

type inner struct {
	N int64 `json:"n"`
}

type outer struct {
	ID    string    `json:"id"`
	Inner inner     `json:"inner"`
	Self  *selfKeys `json:"self"`
}

var outerFields = []string{"id", "inner", "self"}

// selfKeys checks its own member names, as resource.Profile does: a
// *KeyError whose Object is "limits" for a repeated limit, and a
// *rangeError for a negative value.
type selfKeys struct{ Max int64 }

type rangeError struct{ Value int64 }

func (e *rangeError) Error() string { return "out of range" }

func (s *selfKeys) UnmarshalJSON(b []byte) error {
	if err := jsontext.CheckKeys(b, "max", "limits"); err != nil {
		return err
	}
	var raw struct {
		Max    int64           `json:"max"`
		Limits json.RawMessage `json:"limits"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw.Limits != nil {
		if err := jsontext.CheckUnique(raw.Limits); err != nil {
			var ke *jsontext.KeyError
			if errors.As(err, &ke) {
				ke.Object = "limits"
			}
			return err
		}
	}
	if raw.Max < 0 {
		return &rangeError{raw.Max}
	}
	s.Max = raw.Max
	return nil
}

func TestDecodeAccepts(t *testing.T) {
	var v outer
	require.NoError(t, jsontext.Decode([]byte(" {\"id\":\"A\",\"inner\":{\"n\":3},\"self\":{\"max\":2}}\n\t "), &v, "", outerFields))
	assert.Equal(t, outer{ID: "A", Inner: inner{N: 3}, Self: &selfKeys{Max: 2}}, v)

	var s selfKeys
	require.NoError(t, jsontext.Decode([]byte(`{"max":5,"limits":{"a":1,"A":2}}`), &s, "x", nil), "nil fields: v checks its own")
	assert.Equal(t, int64(5), s.Max)

	var m map[string]int
	require.NoError(t, jsontext.Decode([]byte(`null`), &m, "", nil))
	assert.Nil(t, m)
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in, path string
		kind           error
		at             string // DecodeError.Path
		detail         string // DecodeError.Detail, exactly
		cause          any    // a pointer to the type of the cause, for errors.As; nil = no cause
	}{
		{"unknown key", `{"id":"A","inr":{}}`, "jobs[0]",
			jsontext.ErrUnknownKey, "jobs[0].inr", "valid fields: id, inner, self", new(*jsontext.KeyError)},
		{"unknown key, wrong case, at the top", `{"ID":"A"}`, "",
			jsontext.ErrUnknownKey, "ID", `field names are case-sensitive, did you mean "id"? valid fields: id, inner, self`, new(*jsontext.KeyError)},
		{"duplicate key", `{"id":"A","inner":{},"id":"B"}`, "p",
			jsontext.ErrDuplicateKey, "p.id", "given more than once (each name may appear only once in an object)", new(*jsontext.KeyError)},
		{"unknown key found by the value itself", `{"self":{"max":1,"Max":2}}`, "p",
			jsontext.ErrUnknownKey, "p.Max", `field names are case-sensitive, did you mean "max"? valid fields: max, limits`, new(*jsontext.KeyError)},
		{"duplicate key found by the value itself, nested", `{"self":{"limits":{"a":1,"a":2}}}`, "p",
			jsontext.ErrDuplicateKey, "p.limits.a", "given more than once (each name may appear only once in an object)", new(*jsontext.KeyError)},
		{"wrong type", `{"inner":{"n":"3"}}`, "p",
			jsontext.ErrType, "p.inner.n", "expected an integer, got JSON string", new(*json.UnmarshalTypeError)},
		{"wrong type at the top", `[1]`, "p",
			jsontext.ErrType, "p", "expected an object, got JSON array", new(*json.UnmarshalTypeError)},
		{"a number that is no integer", `{"inner":{"n":1e30}}`, "",
			jsontext.ErrType, "inner.n", "expected an integer, got JSON number 1e30", new(*json.UnmarshalTypeError)},
		{"an integer out of range", `{"inner":{"n":99999999999999999999}}`, "",
			jsontext.ErrRange, "inner.n", "99999999999999999999 is out of range (valid: an integer in -9223372036854775808 ... 9223372036854775807)",
			new(*json.UnmarshalTypeError)},
		{"a negative integer out of range", `{"inner":{"n":-99999999999999999999}}`, "",
			jsontext.ErrRange, "inner.n", "-99999999999999999999 is out of range (valid: an integer in -9223372036854775808 ... 9223372036854775807)",
			new(*json.UnmarshalTypeError)},
		{"syntax error", `{"id":"A",}`, "p",
			jsontext.ErrMalformed, "p", "invalid character '}' looking for beginning of object key string (at line 1, column 11)", new(*json.SyntaxError)},
		{"syntax error on a later line", "{\n  \"id\": \"A\",\n  }", "p",
			jsontext.ErrMalformed, "p", "invalid character '}' looking for beginning of object key string (at line 3, column 3)", new(*json.SyntaxError)},
		{"syntax error after a wrong-case key: the syntax wins", `{"ID":"A",}`, "",
			jsontext.ErrMalformed, "", "invalid character '}' looking for beginning of object key string (at line 1, column 11)", new(*json.SyntaxError)},
		{"empty", ``, "p", jsontext.ErrMalformed, "p", "unexpected end of input", nil},
		{"truncated", `{"id":`, "p", jsontext.ErrMalformed, "p", "unexpected end of input", nil},
		{"trailing data", `{"id":"A"} {}`, "p", jsontext.ErrTrailing, "p", "unexpected data after the JSON value", nil},
		{"trailing garbage", `{"id":"A"}x`, "", jsontext.ErrTrailing, "", "unexpected data after the JSON value", nil},
		{"refused by UnmarshalJSON", `{"self":{"max":-1}}`, "p",
			jsontext.ErrInvalid, "p", "out of range", new(*rangeError)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v outer
			err := jsontext.Decode([]byte(tc.in), &v, tc.path, outerFields)
			var de *jsontext.DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.kind, de.Kind)
			assert.ErrorIs(t, err, tc.kind)
			assert.Equal(t, tc.at, de.Path)
			assert.Equal(t, tc.detail, de.Detail)
			if tc.cause != nil {
				assert.ErrorAs(t, err, tc.cause)
			}
			if tc.kind == jsontext.ErrTrailing {
				assert.NoError(t, de.Err)
			} else {
				assert.Error(t, de.Err)
			}
		})
	}
}

func TestDecodeEndOfInputKeepsTheCause(t *testing.T) {
	var v outer
	assert.ErrorIs(t, jsontext.Decode([]byte(" "), &v, "", outerFields), io.EOF)
	assert.ErrorIs(t, jsontext.Decode([]byte(`{"id":"A"`), &v, "", outerFields), io.ErrUnexpectedEOF)
}

func TestDecodeWithoutFieldsLeavesUnknownNamesToEncodingJSON(t *testing.T) {
	// Without field names only DisallowUnknownFields is left, which
	// matches case-insensitively: a misspelt name is an ErrInvalid, a
	// wrong case is accepted. Callers give the names.
	var v outer
	err := jsontext.Decode([]byte(`{"idd":"A"}`), &v, "p", nil)
	var de *jsontext.DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, jsontext.ErrInvalid, de.Kind)
	assert.Equal(t, "p", de.Path)
	assert.Equal(t, `json: unknown field "idd"`, de.Detail)
	require.NoError(t, jsontext.Decode([]byte(`{"ID":"A"}`), &v, "", nil))
	assert.Equal(t, "A", v.ID)
}

func TestDecodeErrorMessage(t *testing.T) {
	var v outer
	err := jsontext.Decode([]byte(`{"inner":{"n":true}}`), &v, "jobs[1]", outerFields)
	assert.EqualError(t, err, `field "jobs[1].inner.n": wrong JSON type: expected an integer, got JSON bool`)
	err = jsontext.Decode([]byte(`{"id":"A"}]`), &v, "", outerFields)
	assert.EqualError(t, err, "trailing data: unexpected data after the JSON value")
	assert.EqualError(t, &jsontext.DecodeError{Kind: jsontext.ErrMalformed}, "malformed JSON")
}

func TestJoinPath(t *testing.T) {
	for _, tc := range []struct{ path, field, want string }{
		{"", "", ""},
		{"", "count", "count"},
		{"slots[1]", "", "slots[1]"},
		{"slots[1]", "count", "slots[1].count"},
		{"slots[1]", "resources.extended.gpu", "slots[1].resources.extended.gpu"},
	} {
		assert.Equal(t, tc.want, jsontext.JoinPath(tc.path, tc.field), "%q + %q", tc.path, tc.field)
	}
}

func TestIsNull(t *testing.T) {
	for _, in := range []json.RawMessage{nil, json.RawMessage("null"), json.RawMessage(" \n null\t")} {
		assert.True(t, jsontext.IsNull(in), "%q", in)
	}
	for _, in := range []json.RawMessage{{}, json.RawMessage(`"null"`), json.RawMessage("nul"), json.RawMessage("{}"), json.RawMessage("0")} {
		assert.False(t, jsontext.IsNull(in), "%q", in)
	}
}

func TestMaxMillisIsTheLargestDuration(t *testing.T) {
	d := time.Duration(jsontext.MaxMillis) * time.Millisecond
	assert.Positive(t, d)
	assert.Equal(t, jsontext.MaxMillis, d.Milliseconds())
	assert.Less(t, int64(math.MaxInt64)-int64(d), int64(time.Millisecond), "one more millisecond would not fit")
}

var decodeKinds = []error{jsontext.ErrUnknownKey, jsontext.ErrDuplicateKey, jsontext.ErrNull, jsontext.ErrType,
	jsontext.ErrMalformed, jsontext.ErrTrailing, jsontext.ErrInvalid}

// FuzzDecode: every error is a *DecodeError of a known kind under the
// given path, what Decode accepts is one valid JSON value that
// encoding/json decodes to the same result, and no member of the object
// it accepts is null.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"id":"A","inner":{"n":1},"self":{"max":2,"limits":{"a":1}}}`, `{"ID":1}`, `{"id":"A","id":"B"}`,
		`{"self":{"limits":{"":1,"":2}}}`, `[`, `{} {}`, `null`, `{"inner":{"n":-1.5}}`, `{"self":{"max":-3}}`,
		`{"id":null}`, `{"inner":null,"self":{"max":1}}`, `{"self":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var v outer
		err := jsontext.Decode([]byte(in), &v, "root", outerFields)
		if err != nil {
			var de *jsontext.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("%q: %T %v", in, err, err)
			}
			if !slices.Contains(decodeKinds, de.Kind) || de.Detail == "" {
				t.Fatalf("%q: kind %v, detail %q", in, de.Kind, de.Detail)
			}
			if de.Path != "root" && (len(de.Path) < 5 || de.Path[:5] != "root.") {
				t.Fatalf("%q: path %q is not under root", in, de.Path)
			}
			return
		}
		if !json.Valid([]byte(in)) {
			t.Fatalf("%q: accepted invalid JSON", in)
		}
		var std outer
		if err := json.Unmarshal([]byte(in), &std); err != nil {
			t.Fatalf("%q: accepted, encoding/json says %v", in, err)
		}
		if !equalOuter(v, std) {
			t.Fatalf("%q: %+v, encoding/json %+v", in, v, std)
		}
		if err := jsontext.CheckNull([]byte(in)); err != nil {
			t.Fatalf("%q: accepted with %v", in, err)
		}
	})
}

func equalOuter(a, b outer) bool {
	if a.ID != b.ID || a.Inner != b.Inner || (a.Self == nil) != (b.Self == nil) {
		return false
	}
	return a.Self == nil || *a.Self == *b.Self
}

func TestLineColumn(t *testing.T) {
	data := []byte("ab\ncd\n\nef")
	for _, tc := range []struct {
		offset       int64
		line, column int
	}{{1, 1, 1}, {2, 1, 2}, {3, 1, 3}, {4, 2, 1}, {6, 2, 3}, {7, 3, 1}, {8, 4, 1}, {9, 4, 2}, {0, 1, 1}, {99, 4, 2}} {
		line, column := jsontext.LineColumn(data, tc.offset)
		assert.Equal(t, [2]int{tc.line, tc.column}, [2]int{line, column}, "offset %d", tc.offset)
	}
}

func TestMillisRange(t *testing.T) {
	assert.Equal(t, "0 ... 9223372036854 (about 292 years)", jsontext.MillisRange)
}
