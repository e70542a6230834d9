package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/slurm"
)

// The leftovers command finds the Slurm jobs a run of "run --slurm" left
// behind (a runner killed with SIGKILL, a lost machine) by the tag every
// allocation carries, and cancels them.

func newLeftoversCommand() *cobra.Command {
	var (
		useSlurm    bool
		conf, run   string
		cancelThem  bool
		cancelAlive bool
	)
	c := &cobra.Command{
		Use:   "leftovers (--slurm | --kubernetes) [--run ID] [--cancel]",
		Short: "List (and cancel) the Slurm allocations runs of run --slurm left behind",
		Long: `leftovers lists the live Slurm jobs tagged by runs of "regionsched run --slurm" (sbatch
--comment=regionsched-run=ID), run by run, and whether each run's runner is still alive (a
run id is HOST-PID-TIME: a runner on this host is alive while its process is). With
--cancel it cancels the jobs of every run whose runner is gone (with --run ID, of that
run only; a live runner's jobs only with --force). A runner killed with SIGKILL leaves its
allocations until their time limit (run --time-limit); this ends them at once.

Exit codes: 0 done (nothing left, or everything asked cancelled), 1 some job could not be
cancelled, 2 bad input or no Slurm reachable.`,
		Args: cobra.NoArgs,
	}
	c.Flags().BoolVar(&useSlurm, "slurm", false, "look in Slurm (this or --kubernetes is required)")
	c.Flags().Bool("kubernetes", false, "look in Kubernetes: runs "+kubernetesProgram+" (beside this program, or on PATH) with the same arguments; see its leftovers --help")
	c.Flags().StringVar(&conf, "slurm-conf", "", "slurm.conf of the cluster (default: $SLURM_CONF, or Slurm's own default)")
	c.Flags().StringVar(&run, "run", "", "only the run of this id (as run --slurm printed it)")
	c.Flags().BoolVar(&cancelThem, "cancel", false, "cancel the jobs of the runs whose runner is gone")
	c.Flags().BoolVar(&cancelAlive, "force", false, "with --cancel: cancel the jobs of live runners too")
	c.RunE = func(c *cobra.Command, _ []string) error {
		if !useSlurm {
			return badInput(errors.New("leftovers needs a backend: --slurm or --kubernetes"))
		}
		if conf != "" {
			if _, err := os.Stat(conf); err != nil {
				return badInput(fmt.Errorf("--slurm-conf: %w", err))
			}
		}
		ctx, cancel := context.WithTimeout(c.Context(), 2*time.Minute)
		defer cancel()
		cl := &slurm.ExecClient{Conf: conf}
		left, err := cl.Leftovers(ctx, run)
		if err != nil {
			return badInput(fmt.Errorf("no Slurm reachable: %w", err))
		}
		return printLeftovers(ctx, c.OutOrStdout(), cl, left, cancelThem, cancelAlive)
	}
	return c
}

// printLeftovers prints the leftovers run by run and cancels those asked
// for; it returns a negative verdict if a cancel failed.
func printLeftovers(ctx context.Context, w io.Writer, cl *slurm.ExecClient, left []slurm.Leftover, cancelThem, force bool) error {
	if len(left) == 0 {
		fmt.Fprintln(w, "no Slurm job of a regionsched run is left")
		return nil
	}
	var failed []string
	for i := 0; i < len(left); {
		run := left[i].Run
		j := i
		for j < len(left) && left[j].Run == run {
			j++
		}
		jobs := left[i:j]
		alive, where := slurm.RunnerAlive(run)
		fmt.Fprintf(w, "run %s: %s, runner %s\n", run, count(len(jobs), "Slurm job"), where)
		for _, l := range jobs {
			fmt.Fprintf(w, "  %d %s %s (user %s)\n", l.Job, l.Name, l.State, l.User)
		}
		if cancelThem && (!alive || force) {
			n := 0
			for _, l := range jobs {
				if err := cl.Cancel(ctx, l.Name, l.Job); err != nil {
					failed = append(failed, strconv.FormatInt(int64(l.Job), 10))
					fmt.Fprintf(w, "  cancelling %d: %v\n", l.Job, err)
					continue
				}
				n++
			}
			fmt.Fprintf(w, "  cancelled %s\n", count(n, "Slurm job"))
		}
		i = j
	}
	if len(failed) > 0 {
		verdict := "not cancelled: " + strings.Join(failed, ", ")
		fmt.Fprintln(w, verdict)
		return negative(verdict)
	}
	return nil
}
