package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
)

func newCheckCommand(stdin io.Reader, mode *modeFlag) *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "check [--mode M] (--slots N | --cluster CLUSTER) [--format text|json] JOB",
		Short: "Decide statically whether a job can run on a cluster without deadlock",
		Args:  exactArgs(1),
	}
	cluster := addClusterFlags(c)
	c.Flags().StringVar(&format, "format", "text", "output format: text or json (case-insensitive)")
	c.RunE = func(c *cobra.Command, args []string) error {
		format, err := parseChoice("format", "output format", format, "text", "json")
		if err != nil {
			return err
		}
		slots, cf, err := cluster.loadFile(c) // first: a usage error wins over a job error
		if err != nil {
			return err
		}
		job, err := loadJob(args[0], stdin)
		if err != nil {
			return err
		}
		if err := checkJobQueue(cf, cluster.cluster, args[0], job); err != nil {
			return err
		}
		v := region.FromJob(job, mode.mode).Check(slots, resource.FitsEveryDimension)
		out := c.OutOrStdout()
		if format == "json" {
			enc := json.NewEncoder(out)
			enc.SetEscapeHTML(false) // the reason is for people: "cpu>…", not "cpu\u003e…"
			if err := enc.Encode(struct {
				Runnable     bool   `json:"runnable"`
				MinimumSlots int    `json:"minimumSlots"`
				Reason       string `json:"reason"`
			}{v.Runnable, v.MinimumSlots, v.Reason}); err != nil {
				return err
			}
		} else if v.Runnable {
			fmt.Fprintf(out, "deadlock-free: %s\n", v.Reason)
		} else {
			fmt.Fprintf(out, "not runnable: %s\n", v.Reason)
		}
		if !v.Runnable {
			return negative("not runnable: " + v.Reason)
		}
		return nil
	}
	return c
}
