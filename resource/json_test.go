package resource_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/resource"
)

func TestProfileJSONRoundTrip(t *testing.T) {
	for _, p := range []resource.Profile{
		resource.Unknown,
		resource.New(0, 0),
		resource.New(500, 512),
		resource.New(1000, 2048).WithExtended("gpu", 1).WithExtended("fpga", 4),
	} {
		t.Run(p.String(), func(t *testing.T) {
			data, err := json.Marshal(p)
			require.NoError(t, err)
			var back resource.Profile
			require.NoError(t, json.Unmarshal(data, &back))
			assert.Equal(t, p, back)
		})
	}
}

func TestProfileJSONForm(t *testing.T) {
	data, err := json.Marshal(resource.New(500, 512).WithExtended("gpu", 1))
	require.NoError(t, err)
	assert.JSONEq(t, `{"cpuMillis":500,"memoryMB":512,"extended":{"gpu":1}}`, string(data))

	data, err = json.Marshal(resource.Unknown)
	require.NoError(t, err)
	assert.Equal(t, "null", string(data))

	var p resource.Profile
	require.NoError(t, json.Unmarshal([]byte(`{"cpuMillis":250}`), &p))
	assert.Equal(t, resource.New(250, 0), p, "absent amounts are zero")
	require.NoError(t, json.Unmarshal([]byte(`{}`), &p))
	assert.Equal(t, resource.New(0, 0), p, "an empty object is a known empty profile")
	require.NoError(t, json.Unmarshal([]byte(`{"extended":{"gpu":0}}`), &p))
	assert.Equal(t, resource.New(0, 0), p, "zero extended amounts vanish")
}

func TestProfileJSONRejectsNegativeAmounts(t *testing.T) {
	tests := []struct {
		in    string
		field string
	}{
		{`{"cpuMillis":-1,"memoryMB":1}`, "cpuMillis"},
		{`{"cpuMillis":1,"memoryMB":-5}`, "memoryMB"},
		{`{"extended":{"gpu":-1}}`, "extended.gpu"},
		{`{"extended":{"":1}}`, "extended."},
		{`{"extended":{"a=b":1}}`, "extended.a=b"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var p resource.Profile
			err := json.Unmarshal([]byte(tc.in), &p)
			require.Error(t, err)
			assert.ErrorIs(t, err, resource.ErrInvalidAmount)
			var ae *resource.AmountError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tc.field, ae.Field)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
}

func TestProfileJSONRejectsUnknownFieldsAndBadTypes(t *testing.T) {
	for _, in := range []string{
		`{"cpu":1}`,
		`{"cpuMillis":1,"gpu":1}`,
		`{"cpuMillis":1.5}`,
		`{"memoryMB":"lots"}`,
		`{"extended":{"gpu":"one"}}`,
		`[1,2]`,
		`"big"`,
	} {
		t.Run(in, func(t *testing.T) {
			var p resource.Profile
			assert.Error(t, json.Unmarshal([]byte(in), &p))
		})
	}
	var p resource.Profile
	err := json.Unmarshal([]byte(`{"cpuMilis":1}`), &p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cpuMilis", "the message names the unknown field")
}
