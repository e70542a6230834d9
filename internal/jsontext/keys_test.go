package jsontext_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/jsontext"
)

func TestKeys(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`{}`, nil},
		{` {"a": 1, "b": {"a": [1, {"c": 2}]}, "a": null} `, []string{"a", "b", "a"}},
		{`{"\u0069d": "x", "Id": 1}`, []string{"id", "Id"}}, // escapes resolved, case kept
		{`{"a": 1} {"b": 2}`, []string{"a"}},                // only the first value
	}
	for _, tc := range tests {
		got, err := jsontext.Keys([]byte(tc.in))
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	for _, in := range []string{`[1]`, `null`, `"x"`, `3`} {
		_, err := jsontext.Keys([]byte(in))
		assert.ErrorIs(t, err, jsontext.ErrNotObject, in)
	}
	for _, in := range []string{``, `{`, `{"a"}`, `{"a":1,}`, `{"a":1 "b":2}`, `{1:2}`, `{"a":tru}`} {
		_, err := jsontext.Keys([]byte(in))
		assert.Error(t, err, in)
		assert.NotErrorIs(t, err, jsontext.ErrNotObject, in)
	}
}

func TestCheckKeys(t *testing.T) {
	allowed := []string{"id", "parallelism"}
	tests := []struct {
		name, in  string
		key       string // "" = no error
		duplicate bool
		detail    string
	}{
		{"exact", `{"id":"A","parallelism":1}`, "", false, ""},
		{"empty", `{}`, "", false, ""},
		{"unknown", `{"id":"A","paralelism":1}`, "paralelism", false, "valid fields: id, parallelism"},
		{"wrong case", `{"id":"A","Parallelism":3}`, "Parallelism", false, `did you mean "parallelism"? valid fields: id, parallelism`},
		{"all caps", `{"ID":"A"}`, "ID", false, `did you mean "id"?`},
		{"duplicate", `{"id":"A","parallelism":1,"parallelism":3}`, "parallelism", true, "more than once"},
		{"duplicate via escape", `{"id":"A","\u0069d":"B"}`, "id", true, "more than once"},
		{"wrong case and duplicate: the first problem", `{"id":"A","Parallelism":1,"parallelism":3}`, "Parallelism", false, "case-sensitive"},
		{"not an object", `[1]`, "", false, ""},
		{"malformed: the decoder reports it", `{"id":"A","id":`, "", false, ""},
		{"malformed after a bad key", `{"ID":"A",}`, "", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := jsontext.CheckKeys([]byte(tc.in), allowed...)
			if tc.key == "" {
				assert.NoError(t, err)
				return
			}
			var ke *jsontext.KeyError
			require.ErrorAs(t, err, &ke)
			assert.Equal(t, tc.key, ke.Key)
			assert.Equal(t, tc.duplicate, ke.Duplicate)
			assert.Contains(t, ke.Detail(), tc.detail)
			assert.Contains(t, err.Error(), `"`+tc.key+`"`)
			if tc.duplicate {
				assert.ErrorIs(t, err, jsontext.ErrDuplicateKey)
			} else {
				assert.ErrorIs(t, err, jsontext.ErrUnknownKey)
			}
		})
	}
}

func TestCheckUnique(t *testing.T) {
	assert.NoError(t, jsontext.CheckUnique([]byte(`{"gpu":1,"GPU":2,"":3}`)), "any names, case-sensitive")
	err := jsontext.CheckUnique([]byte(`{"gpu":1,"fpga":2,"gpu":3}`))
	var ke *jsontext.KeyError
	require.ErrorAs(t, err, &ke)
	assert.True(t, ke.Duplicate)
	ke.Object = "extended"
	assert.Equal(t, "extended.gpu", ke.Field())
	assert.Contains(t, ke.Error(), `duplicate field "extended.gpu"`)
}

func TestKindNamesJSONNotGoTypes(t *testing.T) {
	var p *int64
	for _, tc := range []struct {
		v    any
		want string
	}{
		{struct{}{}, "an object"}, {map[string]int{}, "an object"}, {[]int{}, "an array"}, {"", "a string"},
		{true, "a boolean"}, {0, "an integer"}, {uint8(0), "an integer"}, {1.5, "a number"}, {p, "an integer"},
		{json.RawMessage{}, "an array"}, {make(chan int), "a different value"},
	} {
		assert.Equal(t, tc.want, jsontext.Kind(reflect.TypeOf(tc.v)), "%T", tc.v)
	}
	assert.Equal(t, "a different value", jsontext.Kind(nil))
}
