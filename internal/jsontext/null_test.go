package jsontext_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/jsontext"
)

func TestCheckNull(t *testing.T) {
	tests := []struct {
		name, in string
		nullable []string
		key      string // "" = no error
	}{
		{"no null", `{"a":1,"b":"null","c":{"d":null}}`, nil, ""},
		{"a null member", `{"a":1,"b":null}`, nil, "b"},
		{"the first in document order", `{"b":null,"a":null}`, nil, "b"},
		{"with blanks", "{\"a\" :\n\tnull }", nil, "a"},
		{"nullable", `{"a":null,"b":1}`, []string{"a"}, ""},
		{"nullable, another is not", `{"a":null,"b":null}`, []string{"a"}, "b"},
		{"an array element is not a member", `{"a":[null]}`, nil, ""},
		{"not an object", `null`, nil, ""},
		{"malformed: the decoder reports it", `{"a":null,`, nil, ""},
		{"only the first value", `{"a":1} {"b":null}`, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := jsontext.CheckNull([]byte(tc.in), tc.nullable...)
			if tc.key == "" {
				assert.NoError(t, err)
				return
			}
			var ne *jsontext.NullError
			require.ErrorAs(t, err, &ne)
			assert.ErrorIs(t, err, jsontext.ErrNull)
			assert.Equal(t, tc.key, ne.Key)
			assert.Equal(t, `field "`+tc.key+`": null is not a value; leave the field out for its default`, err.Error())
		})
	}
}

func TestNullErrorField(t *testing.T) {
	e := &jsontext.NullError{Object: "extended", Key: "gpu", Detail: "null is no amount"}
	assert.Equal(t, "extended.gpu", e.Field())
	assert.EqualError(t, e, `field "extended.gpu": null is no amount`)
}

// nullSelf checks its own nulls, as resource.Profile does.
type nullSelf struct{ N int64 }

func (s *nullSelf) UnmarshalJSON(b []byte) error {
	if err := jsontext.CheckNull(b); err != nil {
		err.(*jsontext.NullError).Detail = "null is not an n"
		return err
	}
	var raw struct {
		N int64 `json:"n"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	s.N = raw.N
	return nil
}

type withNulls struct {
	ID   *string         `json:"id"`
	N    *int64          `json:"n"`
	Raw  json.RawMessage `json:"raw"`
	Self *nullSelf       `json:"self"`
}

var withNullsFields = []string{"id", "n", "raw", "self"}

func TestDecodeRefusesNull(t *testing.T) {
	tests := []struct {
		name, in, path string
		nullable       []string
		kind           error
		at, detail     string
	}{
		{"an optional member", `{"id":"A","n":null}`, "jobs[0]", nil,
			jsontext.ErrNull, "jobs[0].n", "null is not a value; leave the field out for its default"},
		{"a raw member", `{"raw":null}`, "", nil,
			jsontext.ErrNull, "raw", "null is not a value; leave the field out for its default"},
		{"an object member", `{"self":null}`, "p", nil,
			jsontext.ErrNull, "p.self", "null is not a value; leave the field out for its default"},
		// as for a *KeyError, the path is the value's own (callers
		// decode such a value on its own, under its path)
		{"found by the value itself", `{"self":{"n":null}}`, "p", nil,
			jsontext.ErrNull, "p.n", "null is not an n"},
		{"an unknown name first", `{"n":null,"iD":"A"}`, "", nil,
			jsontext.ErrUnknownKey, "iD", `field names are case-sensitive, did you mean "id"? valid fields: id, n, raw, self`},
		{"a duplicate first", `{"n":null,"n":1}`, "", nil,
			jsontext.ErrDuplicateKey, "n", "given more than once (each name may appear only once in an object)"},
		{"a null before a wrong type", `{"id":3,"n":null}`, "", nil,
			jsontext.ErrNull, "n", "null is not a value; leave the field out for its default"},
		{"a nullable member, another is not", `{"id":null,"n":null}`, "", []string{"id"},
			jsontext.ErrNull, "n", "null is not a value; leave the field out for its default"},
		{"malformed: the syntax wins", `{"n":null,}`, "", nil,
			jsontext.ErrMalformed, "", "invalid character '}' looking for beginning of object key string (at line 1, column 11)"},
		{"trailing data after a null", `{"n":null} x`, "", nil,
			jsontext.ErrNull, "n", "null is not a value; leave the field out for its default"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v withNulls
			err := jsontext.Decode([]byte(tc.in), &v, tc.path, withNullsFields, tc.nullable...)
			var de *jsontext.DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.kind, de.Kind)
			assert.ErrorIs(t, err, tc.kind)
			assert.Equal(t, tc.at, de.Path)
			assert.Equal(t, tc.detail, de.Detail)
			if tc.kind == jsontext.ErrNull {
				var ne *jsontext.NullError
				assert.ErrorAs(t, err, &ne)
				assert.Equal(t, `field "`+tc.at+`": null value: `+tc.detail, err.Error())
			}
		})
	}
}

func TestDecodeNullable(t *testing.T) {
	var v withNulls
	require.NoError(t, jsontext.Decode([]byte(`{"id":null,"n":1}`), &v, "", withNullsFields, "id"))
	assert.Nil(t, v.ID, "a nullable member given null is left as if absent")
	assert.Equal(t, int64(1), *v.N)

	// Without field names v checks its own nulls; the value itself may
	// be null.
	var self *nullSelf
	require.NoError(t, jsontext.Decode([]byte(`null`), &self, "", nil))
	assert.Nil(t, self)
	var m map[string]*int
	require.NoError(t, jsontext.Decode([]byte(`{"a":null}`), &m, "", nil))
}

// A document (or a line, or an element) that is null where an object is
// expected is refused as such, not read as an object with every member
// absent.
func TestDecodeRefusesNullObject(t *testing.T) {
	var v struct {
		A int `json:"a"`
	}
	err := jsontext.Decode([]byte(" null\n"), &v, "vertices[0]", []string{"a"})
	var de *jsontext.DecodeError
	require.ErrorAs(t, err, &de)
	assert.ErrorIs(t, err, jsontext.ErrType)
	assert.Equal(t, "vertices[0]", de.Path)
	assert.Contains(t, err.Error(), "expected an object, got JSON null")
}
