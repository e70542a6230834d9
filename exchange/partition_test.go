package exchange_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
)

func TestParsePartitionType(t *testing.T) {
	tests := []struct {
		in        string
		want      exchange.ResultPartitionType
		pipelined bool
	}{
		{"blocking", exchange.Blocking, false},
		{"pipelined", exchange.Pipelined, true},
		{"pipelined-bounded", exchange.PipelinedBounded, true},
		{"BLOCKING", exchange.Blocking, false},
		{"Pipelined-Bounded", exchange.PipelinedBounded, true},
		{"hybrid-full", exchange.HybridFull, false},
		{"hybrid", exchange.HybridFull, false},
		{"HYBRID", exchange.HybridFull, false},
		{"Hybrid-Selective", exchange.HybridSelective, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := exchange.ParsePartitionType(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.pipelined, got.IsPipelined())
		})
	}
}

func TestParsePartitionTypeRejectsUnknown(t *testing.T) {
	for _, in := range []string{"", "batch", "pipelined_bounded", "streaming", "hybrid_full", "hybrid-"} {
		t.Run(in, func(t *testing.T) {
			_, err := exchange.ParsePartitionType(in)
			require.Error(t, err)
			assert.ErrorIs(t, err, exchange.ErrUnknownPartitionType)
			var pe *exchange.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, in, pe.Value)
			assert.ElementsMatch(t, []string{"blocking", "pipelined", "pipelined-bounded", "hybrid-full", "hybrid-selective", "hybrid"}, pe.Valid)
			for _, v := range pe.Valid {
				assert.Contains(t, err.Error(), v)
			}
		})
	}
}

func TestPartitionTypeZeroValueAndStrings(t *testing.T) {
	assert.Equal(t, exchange.Blocking, exchange.ResultPartitionType(0))
	assert.Equal(t, "blocking", exchange.Blocking.String())
	assert.Equal(t, "pipelined", exchange.Pipelined.String())
	assert.Equal(t, "pipelined-bounded", exchange.PipelinedBounded.String())
	assert.Equal(t, "hybrid-full", exchange.HybridFull.String())
	assert.Equal(t, "hybrid-selective", exchange.HybridSelective.String())
	assert.Equal(t, "ResultPartitionType(7)", exchange.ResultPartitionType(7).String())
	assert.False(t, exchange.ResultPartitionType(7).IsPipelined())
	assert.False(t, exchange.ResultPartitionType(7).IsHybrid())
	for _, pt := range []exchange.ResultPartitionType{exchange.Blocking, exchange.Pipelined, exchange.PipelinedBounded} {
		assert.False(t, pt.IsHybrid(), "%v", pt)
	}
}

func TestPartitionTypeTextRoundTrip(t *testing.T) {
	for _, pt := range []exchange.ResultPartitionType{exchange.Blocking, exchange.Pipelined, exchange.PipelinedBounded,
		exchange.HybridFull, exchange.HybridSelective} {
		text, err := pt.MarshalText()
		require.NoError(t, err)
		var back exchange.ResultPartitionType
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, pt, back)
	}
	back := exchange.Pipelined
	assert.ErrorIs(t, back.UnmarshalText([]byte("bogus")), exchange.ErrUnknownPartitionType)
	assert.Equal(t, exchange.Pipelined, back, "a failed unmarshal leaves the value alone")
}
