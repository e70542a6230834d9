package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/topology"
)

// Exit codes of SPEC.md section 4.
const (
	exitOK       = 0
	exitNegative = 1
	exitBadInput = 2
)

// exitError carries the exit code a command ends with.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func badInput(err error) error { return &exitError{code: exitBadInput, err: err} }

// negative reports a negative verdict; its one-line explanation (already
// printed on standard output) is repeated on standard error as it is.
func negative(verdict string) error { return &exitError{code: exitNegative, err: errors.New(verdict)} }

// run executes the command line and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommand(stdin)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.code == exitNegative {
			fmt.Fprintln(stderr, ee.err)
		} else {
			fmt.Fprintln(stderr, "regionsched:", ee.err)
		}
		return ee.code
	}
	// cobra's own errors: unknown command or flag, wrong argument count.
	fmt.Fprintln(stderr, "regionsched:", err)
	fmt.Fprintln(stderr, "run 'regionsched --help' for usage")
	return exitBadInput
}

func newRootCommand(stdin io.Reader) *cobra.Command {
	root := &cobra.Command{
		Use:           "regionsched",
		Short:         "Pipelined-region scheduling for dataflow jobs: regions, deadlock checks, simulation",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return badInput(fmt.Errorf("a command is missing: regions, check or simulate (see regionsched --help)"))
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return badInput(fmt.Errorf("%s: %w", c.CommandPath(), err))
	})
	// --mode is common to every command; as a persistent flag it may come
	// before or after the command name.
	mode := &modeFlag{mode: exchange.AllBlocking}
	root.PersistentFlags().Var(mode, "mode", "global data exchange mode: all-blocking, forward-pipelined-only, pointwise-pipelined-only, all-pipelined (or the FLIP-119 aliases)")
	root.AddCommand(newRegionsCommand(stdin, mode), newCheckCommand(stdin, mode), newSimulateCommand(stdin, mode))
	return root
}

// exactArgs is cobra.ExactArgs with a bad-input exit code.
func exactArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return badInput(fmt.Errorf("%s: expected %d job file argument (a path or - for standard input), got %d", c.CommandPath(), n, len(args)))
		}
		return nil
	}
}

// loadJob reads and validates a job file; "-" is standard input.
func loadJob(path string, stdin io.Reader) (*topology.JobGraph, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, badInput(fmt.Errorf("job file: %w", err))
		}
		defer f.Close()
		r = f
	}
	g, err := topology.Decode(r)
	if err != nil {
		return nil, badInput(fmt.Errorf("%s: %w", path, err))
	}
	return g, nil
}

// modeFlag is the --mode flag shared by every command.
type modeFlag struct{ mode exchange.Mode }

func (m *modeFlag) String() string { return m.mode.String() }
func (m *modeFlag) Type() string   { return "mode" }
func (m *modeFlag) Set(s string) error {
	v, err := exchange.ParseMode(s)
	if err != nil {
		return err
	}
	m.mode = v
	return nil
}
