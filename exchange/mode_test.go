package exchange_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
)

func TestParseModeAcceptsEveryNameAndAliasCaseInsensitively(t *testing.T) {
	tests := []struct {
		in   string
		want exchange.Mode
	}{
		{"all-blocking", exchange.AllBlocking},
		{"ALL_EDGES_BLOCKING", exchange.AllBlocking},
		{"ALL_EXCHANGES_BLOCKING", exchange.AllBlocking},
		{"batch", exchange.AllBlocking},
		{"forward-pipelined-only", exchange.ForwardPipelinedOnly},
		{"FORWARD_EDGES_PIPELINED", exchange.ForwardPipelinedOnly},
		{"pointwise-pipelined-only", exchange.PointwisePipelinedOnly},
		{"POINTWISE_EDGES_PIPELINED", exchange.PointwisePipelinedOnly},
		{"all-pipelined", exchange.AllPipelined},
		{"ALL_EDGES_PIPELINED", exchange.AllPipelined},
		{"ALL_EXCHANGES_PIPELINED", exchange.AllPipelined},
		{"pipelined", exchange.AllPipelined},
		{"all-hybrid-full", exchange.AllHybridFull},
		{"ALL_EXCHANGES_HYBRID_FULL", exchange.AllHybridFull},
		{"ALL_EDGES_HYBRID_FULL", exchange.AllHybridFull},
		{"all-hybrid-selective", exchange.AllHybridSelective},
		{"ALL_EXCHANGES_HYBRID_SELECTIVE", exchange.AllHybridSelective},
		{"ALL_EDGES_HYBRID_SELECTIVE", exchange.AllHybridSelective},
	}
	for _, tc := range tests {
		for _, spelling := range []string{tc.in, strings.ToUpper(tc.in), strings.ToLower(tc.in), mixCase(tc.in)} {
			t.Run(spelling, func(t *testing.T) {
				got, err := exchange.ParseMode(spelling)
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
			})
		}
	}
}

// mixCase alternates upper and lower case: "BaTcH".
func mixCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i%2 == 0 {
			b.WriteString(strings.ToUpper(string(r)))
		} else {
			b.WriteString(strings.ToLower(string(r)))
		}
	}
	return b.String()
}

func TestModeNamesAreAllAccepted(t *testing.T) {
	names := exchange.ModeNames()
	require.Len(t, names, 18)
	assert.Equal(t, []string{"all-blocking", "forward-pipelined-only", "pointwise-pipelined-only", "all-pipelined",
		"all-hybrid-full", "all-hybrid-selective"}, names[:6],
		"canonical names come first, in mode order")
	for _, n := range names {
		_, err := exchange.ParseMode(n)
		assert.NoError(t, err, n)
	}
}

func TestParseModeRejectsUnknownWithTypedErrorListingValidValues(t *testing.T) {
	for _, in := range []string{"", "blocking", "all_blocking", "all-blocking-x", "streaming", "pointwise"} {
		t.Run(in, func(t *testing.T) {
			_, err := exchange.ParseMode(in)
			require.Error(t, err)
			assert.ErrorIs(t, err, exchange.ErrUnknownMode)
			assert.NotErrorIs(t, err, exchange.ErrUnknownShipStrategy)
			var pe *exchange.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, in, pe.Value)
			assert.Equal(t, exchange.ModeNames(), pe.Valid)
			msg := err.Error()
			assert.Contains(t, msg, `"`+in+`"`, "the message quotes the rejected value")
			for _, valid := range exchange.ModeNames() {
				assert.Contains(t, msg, valid)
			}
		})
	}
}

// TestParseModeRefusesApproximateRecoveryWithTheReason: Flink's
// ALL_EDGES_PIPELINED_APPROXIMATE has no equivalent in region failover and
// is refused with ErrUnsupportedMode, the reason, the nearest mode and the
// valid values.
func TestParseModeRefusesApproximateRecoveryWithTheReason(t *testing.T) {
	for _, in := range []string{"ALL_EDGES_PIPELINED_APPROXIMATE", "all_edges_pipelined_approximate"} {
		t.Run(in, func(t *testing.T) {
			_, err := exchange.ParseMode(in)
			require.Error(t, err)
			assert.ErrorIs(t, err, exchange.ErrUnsupportedMode)
			assert.NotErrorIs(t, err, exchange.ErrUnknownMode)
			var pe *exchange.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, in, pe.Value)
			assert.NotEmpty(t, pe.Reason)
			msg := err.Error()
			assert.Contains(t, msg, `"`+in+`"`)
			assert.Contains(t, msg, "no equivalent")
			assert.Contains(t, msg, "all-pipelined")
			for _, valid := range exchange.ModeNames() {
				assert.Contains(t, msg, valid)
			}
		})
	}
}

// TestHybridModes: Flink's hybrid shuffle modes (execution.batch-shuffle-mode
// ALL_EXCHANGES_HYBRID_*, and their GlobalStreamExchangeMode names) make
// every edge hybrid, whatever its ship strategy.
func TestHybridModes(t *testing.T) {
	for mode, pt := range map[exchange.Mode]exchange.ResultPartitionType{
		exchange.AllHybridFull: exchange.HybridFull, exchange.AllHybridSelective: exchange.HybridSelective,
	} {
		assert.True(t, mode.IsHybrid(), "%v", mode)
		for _, s := range []exchange.ShipStrategy{exchange.Forward, exchange.Rescale, exchange.Hash, exchange.Rebalance, exchange.Broadcast} {
			got := mode.PartitionType(s)
			assert.Equal(t, pt, got, "%v %v", mode, s)
			assert.True(t, got.IsHybrid())
			assert.False(t, got.IsPipelined(), "a hybrid edge separates regions")
		}
	}
	for _, m := range exchange.Modes()[:4] {
		assert.False(t, m.IsHybrid(), "%v", m)
	}
}

func TestModeStringIsCanonicalAndParsesBack(t *testing.T) {
	want := []string{"all-blocking", "forward-pipelined-only", "pointwise-pipelined-only", "all-pipelined",
		"all-hybrid-full", "all-hybrid-selective"}
	modes := exchange.Modes()
	require.Len(t, modes, len(want))
	for i, m := range modes {
		assert.Equal(t, want[i], m.String())
		back, err := exchange.ParseMode(m.String())
		require.NoError(t, err)
		assert.Equal(t, m, back)
	}
	assert.Equal(t, exchange.AllBlocking, exchange.Mode(0), "the zero value is the default mode")
	assert.Equal(t, "Mode(9)", exchange.Mode(9).String())
}

// TestModePartitionTypeTable is the table of docs/job-file.md:
// mode x ship strategy -> partition type ("pipelined" = pipelined-bounded).
func TestModePartitionTypeTable(t *testing.T) {
	const (
		B = exchange.Blocking
		P = exchange.PipelinedBounded
		H = exchange.HybridFull
		S = exchange.HybridSelective
	)
	strategies := []exchange.ShipStrategy{exchange.Forward, exchange.Rescale, exchange.Hash, exchange.Rebalance, exchange.Broadcast}
	table := map[exchange.Mode][5]exchange.ResultPartitionType{
		//                              forward rescale hash rebalance broadcast
		exchange.AllBlocking:            {B, B, B, B, B},
		exchange.ForwardPipelinedOnly:   {P, B, B, B, B},
		exchange.PointwisePipelinedOnly: {P, P, B, B, B},
		exchange.AllPipelined:           {P, P, P, P, P},
		exchange.AllHybridFull:          {H, H, H, H, H},
		exchange.AllHybridSelective:     {S, S, S, S, S},
	}
	require.Len(t, table, len(exchange.Modes()))
	for m, row := range table {
		for i, s := range strategies {
			assert.Equal(t, row[i], m.PartitionType(s), "mode %v, strategy %v", m, s)
		}
	}
}

func TestModeTextRoundTrip(t *testing.T) {
	for _, m := range exchange.Modes() {
		text, err := m.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, m.String(), string(text))
		var back exchange.Mode
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, m, back)
	}
	var m exchange.Mode
	require.NoError(t, m.UnmarshalText([]byte("BATCH")))
	assert.Equal(t, exchange.AllBlocking, m)

	m = exchange.AllPipelined
	err := m.UnmarshalText([]byte("nope"))
	assert.True(t, errors.Is(err, exchange.ErrUnknownMode))
	assert.Equal(t, exchange.AllPipelined, m, "a failed unmarshal leaves the value alone")
}
