package exchange_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
)

func TestParseShipStrategy(t *testing.T) {
	tests := []struct {
		in      string
		want    exchange.ShipStrategy
		pattern exchange.DistributionPattern
	}{
		{"forward", exchange.Forward, exchange.Pointwise},
		{"rescale", exchange.Rescale, exchange.Pointwise},
		{"hash", exchange.Hash, exchange.AllToAll},
		{"rebalance", exchange.Rebalance, exchange.AllToAll},
		{"broadcast", exchange.Broadcast, exchange.AllToAll},
		{"FORWARD", exchange.Forward, exchange.Pointwise},
		{"ReScale", exchange.Rescale, exchange.Pointwise},
		{"HASH", exchange.Hash, exchange.AllToAll},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := exchange.ParseShipStrategy(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, strings.ToLower(tc.in), got.String())
			assert.Equal(t, tc.pattern, got.Pattern())
		})
	}
}

func TestParseShipStrategyRejectsUnknown(t *testing.T) {
	for _, in := range []string{"", "shuffle", "all-to-all", "forward ", "keyBy"} {
		t.Run(in, func(t *testing.T) {
			_, err := exchange.ParseShipStrategy(in)
			require.Error(t, err)
			assert.ErrorIs(t, err, exchange.ErrUnknownShipStrategy)
			var pe *exchange.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, in, pe.Value)
			for _, valid := range []string{"forward", "rescale", "hash", "rebalance", "broadcast"} {
				assert.Contains(t, err.Error(), valid)
			}
		})
	}
}

func TestShipStrategyNamesIsACopy(t *testing.T) {
	names := exchange.ShipStrategyNames()
	require.Equal(t, []string{"forward", "rescale", "hash", "rebalance", "broadcast"}, names)
	names[0] = "mutated"
	assert.Equal(t, "forward", exchange.ShipStrategyNames()[0])
	assert.Equal(t, "forward", exchange.Forward.String())
}

func TestDistributionPatternString(t *testing.T) {
	assert.Equal(t, "pointwise", exchange.Pointwise.String())
	assert.Equal(t, "all-to-all", exchange.AllToAll.String())
}

func TestShipStrategyOutOfRangeString(t *testing.T) {
	assert.Equal(t, "ShipStrategy(7)", exchange.ShipStrategy(7).String())
}

func TestShipStrategyTextRoundTripThroughJSON(t *testing.T) {
	type edge struct {
		Ship exchange.ShipStrategy `json:"ship"`
	}
	for _, s := range []exchange.ShipStrategy{exchange.Forward, exchange.Rescale, exchange.Hash, exchange.Rebalance, exchange.Broadcast} {
		data, err := json.Marshal(edge{Ship: s})
		require.NoError(t, err)
		assert.JSONEq(t, `{"ship":"`+s.String()+`"}`, string(data))
		var back edge
		require.NoError(t, json.Unmarshal(data, &back))
		assert.Equal(t, s, back.Ship)
	}
	var back edge
	err := json.Unmarshal([]byte(`{"ship":"zigzag"}`), &back)
	assert.ErrorIs(t, err, exchange.ErrUnknownShipStrategy)
}
