package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/filehash"
)

// LoadHistory loads the datasets in dirs (written by analyze --out) as
// history runs, re-applying the warm-up rule o.SkipSteps to their steps so
// that history and candidate leave out the same warm-up (the caller passes
// the candidate's options, with the warm-up its analysis applied). No
// statistics run on them (analysis.HistoryFromFiles). Every CI run may name
// its export alike (run.sqlite), so each export is labelled by its
// dataset: DIR/FILE. A dataset that holds the analysis of an export
// another one holds too (a copied run directory) is refused: counted
// twice, it made the history's spread zero and "proved" any difference.
// The warnings are about the datasets themselves (no context metadata, a
// warm-up re-cut).
func LoadHistory(ctx context.Context, dirs []string, o analysis.Options, version string) (*analysis.HistoryRuns, []analysis.Warning, error) {
	if len(dirs) == 0 {
		return nil, nil, &analysis.UsageError{Err: errors.New("--history: no dataset directory")}
	}
	o.SetGiven("skip-steps") // the candidate's warm-up, whatever the datasets were written with
	var files []*analysis.FileResult
	var warns []analysis.Warning
	var sets []*Dataset
	skip := 0
	for _, dir := range dirs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		ds, err := Load(dir)
		if err != nil {
			return nil, nil, err
		}
		sets = append(sets, ds)
		if err := refuseRepeatedHistory(sets); err != nil {
			return nil, nil, &analysis.UsageError{Err: fmt.Errorf("--history: %w", err)}
		}
		if ds.context != nil && ds.context.SkipSteps != o.SkipSteps {
			warns = append(warns, analysis.Warning{Code: WarnSkipStepsDiffer, Message: fmt.Sprintf("%s was written with --skip-steps %d: re-cut with %d, the candidate's warm-up", dir, ds.context.SkipSteps, o.SkipSteps)})
		}
		frs, s, w, err := fileResultsOf([]*Dataset{ds}, o)
		if err != nil {
			return nil, nil, err
		}
		skip = s
		warns = append(warns, w...)
		for _, fr := range frs {
			relabelFile(fr, filepath.ToSlash(filepath.Join(dir, fr.Path)))
		}
		files = append(files, frs...)
	}
	o.SkipSteps = skip
	h, err := analysis.HistoryFromFiles(ctx, dirs, files, o, version)
	if err != nil {
		return nil, nil, err
	}
	return h, warns, nil
}

// refuseRepeatedHistory refuses the last of sets when it repeats an earlier
// one: the same directory under another name, or the analysis of one
// export (the inputs' SHA-256, or, for a dataset that lacks them, the bytes
// of its phase_instances table).
func refuseRepeatedHistory(sets []*Dataset) error {
	last := sets[len(sets)-1]
	st, err := os.Stat(last.Dir)
	for _, ds := range sets[:len(sets)-1] {
		if prev, err2 := os.Stat(ds.Dir); err == nil && err2 == nil && os.SameFile(st, prev) {
			return fmt.Errorf("%s and %s are the same directory: pass each history run once", ds.Dir, last.Dir)
		}
	}
	if err := refuseRepeatedInputs(sets); err != nil {
		return err
	}
	if len(last.Inputs) > 0 {
		return nil
	}
	sum, err := filehash.SHA256(filepath.Join(last.Dir, "phase_instances.parquet"))
	if err != nil {
		return nil // partitioned or Arrow: nothing more to compare
	}
	for _, ds := range sets[:len(sets)-1] {
		if len(ds.Inputs) == 0 {
			if prev, err := filehash.SHA256(filepath.Join(ds.Dir, "phase_instances.parquet")); err == nil && prev == sum {
				return fmt.Errorf("%s and %s hold the same phase_instances table (SHA-256 %s…): pass each history run once", ds.Dir, last.Dir, sum[:12])
			}
		}
	}
	return nil
}

// relabelFile names fr's export label everywhere its rows carry it.
func relabelFile(fr *analysis.FileResult, label string) {
	fr.Path = label
	r := fr.Result
	for i := range r.Instances {
		r.Instances[i].File = label
		r.Instances[i].Unit.File = label
	}
	if r.Store != nil {
		r.Store.SetFile(label)
	}
	for i := range r.Inputs {
		r.Inputs[i].File = label
	}
	if fr.Info != nil {
		fr.Info.File = label
	}
}
