package resource_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/jsontext"
	"github.com/regionsched/regionsched/resource"
)

// TestProfileJSONFieldNamesAreExact: encoding/json would match "CPUMILLIS"
// to cpuMillis and let the last of two "memoryMB" win; a profile document
// must not be read differently from how it is written.
func TestProfileJSONFieldNamesAreExact(t *testing.T) {
	tests := []struct {
		in       string
		contains []string
	}{
		{`{"CPUMillis":500}`, []string{`"CPUMillis"`, `did you mean "cpuMillis"`, "cpuMillis, memoryMB, extended"}},
		{`{"cpumillis":500}`, []string{`"cpumillis"`, `did you mean "cpuMillis"`}},
		{`{"memoryMb":512}`, []string{`"memoryMb"`, `did you mean "memoryMB"`}},
		{`{"Extended":{"gpu":1}}`, []string{`"Extended"`, `did you mean "extended"`}},
		{`{"cpuMillis":1,"cpuMillis":1000}`, []string{"duplicate", `"cpuMillis"`}},
		{`{"memoryMB":1,"extended":{},"memoryMB":2}`, []string{"duplicate", `"memoryMB"`}},
		{`{"extended":{},"extended":{"gpu":4}}`, []string{"duplicate", `"extended"`}},
		{`{"extended":{"gpu":1,"fpga":2,"gpu":8}}`, []string{"duplicate", `"extended.gpu"`}},
		{`{"extended":{"gpu":1,"\u0067pu":8}}`, []string{"duplicate", `"extended.gpu"`}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var p resource.Profile
			err := json.Unmarshal([]byte(tc.in), &p)
			require.Error(t, err)
			for _, c := range tc.contains {
				assert.Contains(t, err.Error(), c)
			}
		})
	}
	// names of extended resources are free and case-sensitive: "gpu" and
	// "GPU" are two resources
	var p resource.Profile
	require.NoError(t, json.Unmarshal([]byte(`{"extended":{"gpu":1,"GPU":2}}`), &p))
	assert.Equal(t, map[string]int64{"gpu": 1, "GPU": 2}, p.Extended())
	// escapes in field names are resolved, as encoding/json does
	require.NoError(t, json.Unmarshal([]byte(`{"cpu\u004dillis":7}`), &p))
	assert.Equal(t, resource.New(7, 0), p)
}

// TestProfileJSONExplainsBadExtendedNames: an empty or malformed name is a
// name problem, not an amount problem.
func TestProfileJSONExplainsBadExtendedNames(t *testing.T) {
	tests := []struct {
		in, field string
		contains  []string
	}{
		{`{"extended":{"":1}}`, "extended.", []string{"name", `""`, "is empty", "'='", "';'"}},
		{`{"extended":{"a=b":1}}`, "extended.a=b", []string{"name", `"a=b"`, "contains '=' or ';'"}},
		{`{"extended":{"a;b":0}}`, "extended.a;b", []string{"name", `"a;b"`}},
		{`{"extended":{"":-1}}`, "extended.", []string{"is empty"}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var p resource.Profile
			err := json.Unmarshal([]byte(tc.in), &p)
			require.Error(t, err)
			var ae *resource.AmountError
			require.ErrorAs(t, err, &ae)
			assert.True(t, ae.InvalidName)
			assert.Equal(t, tc.field, ae.Field)
			assert.ErrorIs(t, err, resource.ErrInvalidAmount, "still the documented sentinel")
			for _, c := range tc.contains {
				assert.Contains(t, err.Error(), c)
			}
			assert.NotContains(t, err.Error(), "non-negative integer", "the amount is not the problem")
		})
	}
	// a bad amount under a good name is still an amount problem
	var p resource.Profile
	err := json.Unmarshal([]byte(`{"extended":{"gpu":-1}}`), &p)
	var ae *resource.AmountError
	require.True(t, errors.As(err, &ae))
	assert.False(t, ae.InvalidName)
	assert.Contains(t, err.Error(), "extended.gpu = -1 (must be a non-negative integer)")
}

// TestProfileJSONExtendedTypeErrorsNameTheResource: a bad amount in
// extended is reported at "extended.<name>", not just "extended".
func TestProfileJSONExtendedTypeErrorsNameTheResource(t *testing.T) {
	tests := []struct{ in, field, value string }{
		{`{"extended":{"gpu":1,"fpga":0.5}}`, "extended.fpga", "number 0.5"},
		{`{"extended":{"gpu":"one"}}`, "extended.gpu", "string"},
		{`{"extended":{"gpu":99999999999999999999}}`, "extended.gpu", "number 99999999999999999999"},
		{`{"extended":[1]}`, "extended", "array"},
		{`{"extended":"gpu"}`, "extended", "string"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var p resource.Profile
			err := json.Unmarshal([]byte(tc.in), &p)
			var te *json.UnmarshalTypeError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, tc.field, te.Field)
			assert.Equal(t, tc.value, te.Value)
		})
	}
}

// TestProfileJSONRefusesNullMembers: null is no amount: a field or an
// extended resource given null is a *jsontext.NullError naming it (not a
// known zero), while a whole profile given null is still Unknown.
func TestProfileJSONRefusesNullMembers(t *testing.T) {
	tests := []struct{ in, field, detail string }{
		{`{"cpuMillis":null}`, "cpuMillis", "null is not an amount of CPU (a non-negative integer, in thousandths of a core); leave the field out for its default (0)"},
		{`{"cpuMillis":1,"memoryMB":null}`, "memoryMB", "null is not an amount of memory (a non-negative integer, in MB); leave the field out for its default (0)"},
		{`{"extended":null}`, "extended", "null is not a map of extended resources; leave the field out for its default (none)"},
		{`{"extended":{"gpu":null}}`, "extended.gpu", `null is not an amount of resource "gpu" (a non-negative integer); leave the resource out if there is none`},
		{`{"extended":{"gpu":1,"a\"b":null}}`, `extended.a"b`, `null is not an amount of resource "a\"b" (a non-negative integer); leave the resource out if there is none`},
		{`{"memoryMB":1,"extended":{"gpu":null},"cpuMillis":null}`, "cpuMillis", "null is not an amount of CPU (a non-negative integer, in thousandths of a core); leave the field out for its default (0)"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var p resource.Profile
			err := json.Unmarshal([]byte(tc.in), &p)
			var ne *jsontext.NullError
			require.ErrorAs(t, err, &ne)
			assert.ErrorIs(t, err, jsontext.ErrNull)
			assert.Equal(t, tc.field, ne.Field())
			assert.Equal(t, tc.detail, ne.Detail)
		})
	}
	var p resource.Profile
	require.NoError(t, json.Unmarshal([]byte(` null `), &p))
	assert.True(t, p.IsUnknown(), "a whole profile given null is unknown, as MarshalJSON writes it")
	require.NoError(t, json.Unmarshal([]byte(`{"extended":{}}`), &p))
	assert.Equal(t, resource.New(0, 0), p)
}
