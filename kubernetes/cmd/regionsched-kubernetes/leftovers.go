package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/internal/runcli"
	rsk8s "github.com/regionsched/regionsched/kubernetes"
)

// The leftovers command finds the pods a run of "run" left behind (a
// runner killed with SIGKILL, a lost machine) by the label every pod
// carries, and deletes them.

func newLeftoversCommand() *cobra.Command {
	var (
		kubeconfig, namespace, run string
		deleteThem, force          bool
	)
	c := &cobra.Command{
		Use:   "leftovers [--kubeconfig F] [--namespace N] [--run ID] [--delete [--force]]",
		Short: "List (and delete) the pods runs of run --kubernetes left behind",
		Long: `leftovers lists the pods of runs of "regionsched run --kubernetes" in a namespace (every
pod of a run is labelled regionsched.io/run=ID), run by run, and whether each run's runner
is still alive (a run id is HOST-PID-TIME: a runner on this host is alive while its
process is). With --delete it deletes the pods of every run whose runner is gone (with
--run ID, of that run only; a live runner's pods only with --force). A runner killed with
SIGKILL leaves its pods; this deletes them.

Exit codes: 0 done (nothing left, or everything asked deleted), 1 some pod could not be
deleted, 2 bad input or no API server reachable.`,
		Args: cobra.NoArgs,
	}
	c.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG, else ~/.kube/config)")
	c.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace of the runs' pods")
	c.Flags().StringVar(&run, "run", "", "only the run of this id (as run printed it)")
	c.Flags().BoolVar(&deleteThem, "delete", false, "delete the pods of the runs whose runner is gone")
	c.Flags().BoolVar(&force, "force", false, "with --delete: delete the pods of live runners too")
	c.RunE = func(c *cobra.Command, _ []string) error {
		if err := checkNamespace(namespace); err != nil {
			return runcli.BadInput(err)
		}
		if run != "" {
			if err := rsk8s.CheckRun(run); err != nil {
				return runcli.BadInput(fmt.Errorf("--run: %w", err))
			}
		}
		ctx, cancel := context.WithTimeout(c.Context(), 2*time.Minute)
		defer cancel()
		client, err := rsk8s.NewClient(kubeconfig, 200)
		if err != nil {
			return runcli.BadInput(connectError(kubeconfig, err))
		}
		left, err := rsk8s.Leftovers(ctx, client, namespace, run)
		if err != nil {
			return runcli.BadInput(connectError(kubeconfig, err))
		}
		return printLeftovers(ctx, c.OutOrStdout(), client, namespace, left, deleteThem, force)
	}
	return c
}

// printLeftovers prints the leftovers run by run and deletes those asked
// for; it returns a negative verdict if a delete failed.
func printLeftovers(ctx context.Context, w io.Writer, c kubernetes.Interface, ns string, left []rsk8s.Leftover, deleteThem, force bool) error {
	if len(left) == 0 {
		fmt.Fprintf(w, "no pod of a regionsched run is left in namespace %s\n", ns)
		return nil
	}
	var failed []string
	for i := 0; i < len(left); {
		run := left[i].Ref.Run
		j := i
		for j < len(left) && left[j].Ref.Run == run {
			j++
		}
		pods := left[i:j]
		alive, where := rsk8s.RunnerAlive(run)
		fmt.Fprintf(w, "run %s: %s, runner %s\n", run, plural.Count(len(pods), "pod"), where)
		for _, l := range pods {
			node := l.Node
			if node == "" {
				node = "(not bound)"
			}
			fmt.Fprintf(w, "  %s job %s task %d attempt %d on %s: %s\n", l.Pod, l.Ref.Job, l.Ref.Task, l.Ref.Attempt, node, l.Phase)
		}
		if deleteThem && (!alive || force) {
			n := 0
			for _, l := range pods {
				if err := rsk8s.DeletePod(ctx, c, ns, l.Pod); err != nil {
					failed = append(failed, l.Pod)
					fmt.Fprintf(w, "  deleting %s: %v\n", l.Pod, err)
					continue
				}
				n++
			}
			fmt.Fprintf(w, "  deleted %s\n", plural.Count(n, "pod"))
		}
		i = j
	}
	if len(failed) > 0 {
		verdict := "not deleted: " + strings.Join(failed, ", ")
		fmt.Fprintln(w, verdict)
		return runcli.Negative(verdict)
	}
	return nil
}

// checkNamespace refuses a --namespace that is not a Kubernetes
// namespace name (a DNS-1123 label), before the API server is asked
// anything.
func checkNamespace(ns string) error {
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("--namespace %q is not a namespace name: %s", ns, strings.Join(errs, "; "))
	}
	return nil
}
