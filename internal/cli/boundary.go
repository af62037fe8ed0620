package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/internal/analysis"
)

// BoundaryOptions are the inputs of `nsysphase boundary`.
type BoundaryOptions struct {
	AnalysisFlags
	Phases []string
	Format string
	OutputFlags
}

// NewCmdBoundary builds `nsysphase boundary`; runF replaces the action in tests.
func NewCmdBoundary(runF func(*BoundaryOptions) error) *cobra.Command {
	o := &BoundaryOptions{}
	cmd := &cobra.Command{
		Use:   "boundary FILE... --phases A,B,C",
		Short: "Check a candidate CUDA-graph capture region: blockers inside it and the most a graph could save",
		Long: `boundary checks whether the phases named by --phases can be captured as one CUDA graph, in every
arm that has them. It lists the phases inside and outside the region and every blocker inside it:
blocking syncs, scalar and dynamic-shape reads, D2H copies, pageable H2D copies, allocations and
frees (the kinds of nsysphase inventory), data-dependent branches (a phase whose GPU op count or
API mix varies across its instances within an arm: a graph replays one shape) and region gaps (an
outside phase running between two inside ones). Blockers are counted over every step inside the
arm blocks.

What capture removes per step is bounded (the "bound" of each arm in JSON): the host time (launch,
cpu_other, memcpy_api, other_api) of the region's phases that enqueue GPU work a graph records (kernels,
graphs, device-to-device copies, memsets, on their thread or another of the process; a host copy
moves new data each step and stays outside) and hold no blocker, at most step wall − GPU floor (the
process's GPU time in the step, which a captured step still waits for), less the replay's own
cudaGraphLaunch (the mean of the inputs' calls, else a 20 µs constant). Phases that enqueue nothing keep
their host time; blocked phases are listed with what they would add once fixed. Each part comes with
block-bootstrap CIs over the kept steps (--skip-steps), the removable time also as a share of step
wall. saving_ns = launch_ns + cpu_other_ns of every region phase is the estimate before the bound.

The verdict is data: exit status 0 whether or not the region is capturable; 2 for unusable input
or usage (an unknown phase, no arm with the phases).`,
		Example: `  nsysphase boundary --phases action_apply,physics_step,scene_read_refresh,observation,reward testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz
  nsysphase boundary --phases reward,termination --format json testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz
  nsysphase boundary --phases graph_replay --format markdown testdata/nsys-2025.3-h200/eager_graph_small.sqlite.xz
  nsysphase boundary --phases data,forward,backward,optimizer testdata/nsys-2025.3-h200-extra/profiler_step.sqlite.xz`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			if err := validateRegion(&o.AnalysisFlags, &o.Format, boundaryFormats, o.Phases); err != nil {
				return err
			}
			if err := o.OutputFlags.check(o.inputPaths()); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runBoundary(cmd, o)
		},
	}
	addRegionFlags(cmd, &o.AnalysisFlags, &o.Phases)
	addOutputFlags(cmd, &o.OutputFlags)
	addFormatFlag(cmd, &o.Format, boundaryFormats, "csv, parquet and arrow: the blockers table")
	return cmd
}

// addRegionFlags registers the flags boundary and verdict share.
func addRegionFlags(cmd *cobra.Command, o *AnalysisFlags, region *[]string) {
	addSegmentFlags(cmd, o)
	addStatsFlags(cmd, o, false)
	cmd.Flags().StringSliceVar(region, "phases", nil, "the candidate capture region: phase names, comma-separated (nsysphase analyze lists them)")
	aliasFlag(cmd, "phase", "phases") // one flag name for phases on every command
}

// boundaryFormats are boundary's --format choices.
var boundaryFormats = []string{"table", "json", "markdown", "csv", "parquet", "arrow"}

func validateRegion(o *AnalysisFlags, format *string, formats []string, region []string) error {
	f, err := checkFormat(*format, formats)
	if err != nil {
		return err
	}
	*format = f
	if err := checkPhasesGiven(region, "the candidate capture region, comma-separated"); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	for _, p := range region {
		if strings.TrimSpace(p) == "" {
			return usageErr("--phases %q: empty phase name", strings.Join(region, ","))
		}
	}
	return nil
}

// readRegion reads the inputs with per-call recording.
func readRegion(cmd *cobra.Command, o *AnalysisFlags, c *CommonFlags) (_ []*analysis.FileResult, _ analysis.Frames, err error) {
	cfg, err := o.config()
	if err != nil {
		return nil, nil, err
	}
	tuneMemory(cfg)
	pr := startProgress(cmd, &cfg, c)
	defer func() { pr.finish(err == nil) }()
	files, frames, err := analysis.ReadCalls(cmd.Context(), cfg)
	if err != nil {
		return nil, nil, asExit(err)
	}
	return files, frames, nil
}

func runBoundary(cmd *cobra.Command, o *BoundaryOptions) error {
	files, frames, err := readRegion(cmd, &o.AnalysisFlags, &o.CommonFlags)
	if err != nil {
		return err
	}
	b, err := analysis.BuildBoundary(files, frames, o.Phases, o.Options)
	if err != nil {
		return asExit(err)
	}
	warnMismatches(cmd.ErrOrStderr(), b.Mismatches)
	return o.write(cmd, o.Format, b, o.reportOptions())
}
