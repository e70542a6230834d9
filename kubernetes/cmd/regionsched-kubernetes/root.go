package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/runcli"
)

// run executes the command line and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runcli.Main(newRootCommand(stdin), args, stdout, stderr)
}

func newRootCommand(stdin io.Reader) *cobra.Command {
	root := &cobra.Command{
		Use:   "regionsched-kubernetes",
		Short: "Run regionsched's jobs on Kubernetes, and find what runners that died left there",
		Long: `regionsched-kubernetes runs job files on a Kubernetes cluster (run) and finds and deletes
the pods of runners that died (leftovers). "regionsched run --kubernetes" and
"regionsched leftovers --kubernetes" run it with their arguments.

Exit codes: 0 success, 1 a negative verdict (a job failed, a pod not deleted),
2 bad input or usage, or no API server reachable.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runcli.BadInput(errors.New("a command is missing: run or leftovers (see regionsched-kubernetes --help)"))
		},
	}
	root.SetFlagErrorFunc(runcli.FlagError)
	mode := &modeFlag{mode: exchange.AllBlocking}
	root.PersistentFlags().Var(mode, "mode", "global data exchange mode: "+strings.Join(exchange.ModeNames(), ", ")+" (case-insensitive)")
	// --kubernetes, which regionsched passes on, names the backend this
	// program is.
	root.PersistentFlags().Bool("kubernetes", true, "run on Kubernetes (what this program does; accepted for regionsched's sake)")
	_ = root.PersistentFlags().MarkHidden("kubernetes")
	root.AddCommand(newRunCommand(stdin, mode), newLeftoversCommand())
	return root
}

// modeFlag is the --mode flag of regionsched.
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

// connectError is the error of an API server that cannot be reached.
func connectError(kubeconfig string, err error) error {
	where := "the kubeconfig of $KUBECONFIG or ~/.kube/config"
	if kubeconfig != "" {
		where = kubeconfig
	}
	return fmt.Errorf("no Kubernetes API server reachable with %s: %w", where, err)
}
