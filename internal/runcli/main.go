package runcli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Main executes root over args and returns the process exit code. Every
// message on standard error starts with the path of the command that
// failed ("regionsched run:"); a negative verdict, printed by its
// command, is not printed again. cobra's own errors (an unknown flag, a
// wrong number of arguments) are bad input, with a pointer to --help.
func Main(root *cobra.Command, args []string, stdout, stderr io.Writer) int {
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	c, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	path := root.Name()
	if c != nil {
		path = c.CommandPath()
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Code != ExitNegative { // a verdict is printed once, by its command
			fmt.Fprintf(stderr, "%s: %v\n", path, ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(stderr, "%s: %v\n", path, err)
	fmt.Fprintf(stderr, "run '%s --help' for usage\n", path)
	return ExitBadInput
}
