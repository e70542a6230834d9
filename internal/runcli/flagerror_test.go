package runcli_test

import (
	"errors"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/runcli"
)

// FlagError turns a value a flag does not take into bad input naming the
// flag, the value and the valid values (SetValid's, else the type's);
// a flag of its own type without SetValid keeps its parser's message,
// after the flag; other flag errors are bad input as they are.
func TestFlagError(t *testing.T) {
	parse := func(args ...string) error {
		c := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }, SilenceErrors: true, SilenceUsage: true}
		c.SetFlagErrorFunc(runcli.FlagError)
		var (
			n     int
			d     time.Duration
			share float64
			on    bool
		)
		c.Flags().IntVar(&n, "n", 0, "")
		c.Flags().DurationVar(&d, "d", 0, "")
		c.Flags().Float64Var(&share, "share", 0.5, "")
		c.Flags().BoolVar(&on, "on", false, "")
		c.Flags().Var(&choice{}, "choice", "")
		runcli.SetValid(c.Flags(), "share", "a number in 0 ... 1")
		c.SetArgs(args)
		return c.Execute()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--n", "x"}, `--n: invalid value "x" (valid: an integer)`},
		{[]string{"--d", "5"}, `--d: invalid value "5" (valid: a duration such as 90s, 1m30s, 500ms or 0)`},
		{[]string{"--share", "half"}, `--share: invalid value "half" (valid: a number in 0 ... 1)`},
		{[]string{"--on=maybe"}, `--on: invalid value "maybe" (valid: true or false)`},
		{[]string{"--choice", "c"}, `--choice: unknown choice "c" (valid: a, b)`},
		{[]string{"--nope"}, `unknown flag: --nope`},
	} {
		err := parse(tc.args...)
		require.Error(t, err, "%v", tc.args)
		var ee *runcli.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, runcli.ExitBadInput, ee.Code)
		assert.Equal(t, tc.want, ee.Err.Error(), "%v", tc.args)
	}
	var bad *runcli.InvalidValueError
	require.ErrorAs(t, parse("--share", "half"), &bad)
	assert.Equal(t, runcli.InvalidValueError{Flag: "share", Value: "half", Valid: "a number in 0 ... 1", Err: bad.Err}, *bad)
	assert.Panics(t, func() { runcli.SetValid((&cobra.Command{}).Flags(), "missing", "anything") })
}

// choice is a flag value of its own type whose parser lists the valid
// values.
type choice struct{ v string }

func (c *choice) String() string { return c.v }
func (c *choice) Type() string   { return "choice" }
func (c *choice) Set(s string) error {
	if s != "a" && s != "b" {
		return errors.New(`unknown choice "` + s + `" (valid: a, b)`)
	}
	c.v = s
	return nil
}
