package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/nsysphase/nsysphase/internal/base/marks"
	"github.com/nsysphase/nsysphase/internal/base/regular"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/nsysphase/nsysphase/internal/base/filehash"
	"github.com/nsysphase/nsysphase/internal/base/plural"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

// FileArm assigns an arm to every file matching a glob (--arm NAME=GLOB).
type FileArm struct {
	Name string
	Glob string
}

// Config is everything an analysis needs.
type Config struct {
	Files    []string  // exports (.sqlite or .sqlite.xz), in the order given
	FileArms []FileArm // arms from files; their files are inputs too
	ArmKey   string    // dotted key into each export's run manifest, e.g. training.cuda_process_sharing
	Manifest string    // explicit manifest path (one input only)
	Segment  phases.Options
	Jobs     int // files read in parallel (0 = GOMAXPROCS)
	// RankGlobs name exports that each hold ranks of one job (--ranks
	// GLOB); their files are inputs too, and their ranks are read even
	// where nothing else suggests ranks.
	RankGlobs []string
	// Open opens an input; nil means OpenInput (nsys.OpenContext).
	Open func(ctx context.Context, path string) (*nsys.File, func(), error)
}

// FileResult is one export's segmentation with its provenance.
type FileResult struct {
	Path     string
	FileArm  string
	Manifest map[string]any // the run manifest beside the export, verbatim; nil when absent
	ManPath  string
	Result   *phases.Result
	Info     *Provenance
	StartUTC int64 // session start (Unix ns), orders files; 0 unknown
	MinTime  int64 // first step start on the export's clock
	// Ranks are the export's processes that communicate (NCCL kernels or
	// MPI collectives), before AssignRanks numbers them; nil when the export
	// shows no sign of ranks (phases.RankCandidate).
	Ranks []phases.RankProcess
}

// ExpandInputs resolves positional files and --arm globs into the input list
// with each file's arm. A glob that matches nothing is a usage error.
func ExpandInputs(files []string, arms []FileArm) ([]string, map[string]string, error) {
	armOf := map[string]string{}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, a := range arms {
		matches, err := filepath.Glob(a.Glob)
		if err != nil {
			return nil, nil, fmt.Errorf("--arm %s=%s: %w", a.Name, a.Glob, err)
		}
		if len(matches) == 0 {
			return nil, nil, fmt.Errorf("--arm %s=%s: no file matches", a.Name, a.Glob)
		}
		slices.Sort(matches)
		for _, m := range matches {
			if prev, ok := armOf[m]; ok && prev != a.Name {
				return nil, nil, fmt.Errorf("%s matches both --arm %s and --arm %s", m, prev, a.Name)
			}
			armOf[m] = a.Name
		}
	}
	for _, f := range files {
		matches, err := filepath.Glob(f)
		if err != nil || len(matches) == 0 {
			add(f) // not a pattern, or nothing matched: let Open name the problem
			continue
		}
		slices.Sort(matches)
		for _, m := range matches {
			add(m)
		}
	}
	for _, a := range arms {
		matches, _ := filepath.Glob(a.Glob)
		slices.Sort(matches)
		for _, m := range matches {
			add(m)
		}
	}
	return out, armOf, nil
}

// ManifestPath returns the run manifest beside an export: NAME.manifest.json
// for NAME.sqlite or NAME.sqlite.xz.
func ManifestPath(export string) string {
	base := strings.TrimSuffix(export, ".xz")
	base = strings.TrimSuffix(base, filepath.Ext(base))
	return base + ".manifest.json"
}

// LookupKey walks a dotted key through a decoded JSON document. JSON null
// gives "null"; a missing key gives ok=false.
func LookupKey(doc map[string]any, key string) (string, bool) {
	var cur any = doc
	for _, part := range strings.Split(key, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		cur, ok = m[part]
		if !ok {
			return "", false
		}
	}
	switch v := cur.(type) {
	case nil:
		return "null", true
	case string:
		return v, true
	case map[string]any, []any:
		b, _ := json.Marshal(v)
		return string(b), true
	default:
		return fmt.Sprint(v), true
	}
}

// ReadFiles segments every input, Jobs at a time, and returns the results in
// input order (deterministic whatever the scheduling); on failure, the error of
// the first failing input in input order.
func ReadFiles(ctx context.Context, cfg Config) ([]*FileResult, error) {
	files, armOf, err := ExpandInputs(cfg.Files, cfg.FileArms)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	forceRanks := map[string]bool{}
	for _, g := range cfg.RankGlobs {
		matches, err := filepath.Glob(g)
		if err != nil || len(matches) == 0 {
			return nil, &UsageError{Err: fmt.Errorf("--ranks %s: no file matches", g)}
		}
		slices.Sort(matches)
		for _, m := range matches {
			forceRanks[m] = true
			if !slices.Contains(files, m) {
				files = append(files, m)
			}
		}
	}
	if len(files) == 0 {
		return nil, &UsageError{Err: errors.New("no input files")}
	}
	if err := refuseDuplicates(files); err != nil {
		return nil, &UsageError{Err: err}
	}
	if cfg.Manifest != "" && len(files) > 1 {
		return nil, &UsageError{Err: errors.New("--manifest names one manifest: use it with one input, or put NAME.manifest.json beside each export")}
	}
	jobs := cfg.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	out := make([]*FileResult, len(files))
	err = inOrder(ctx, len(files), jobs, func(ctx context.Context, i int) error {
		fr, err := readOne(ctx, cfg, files[i], armOf[files[i]], forceRanks[files[i]])
		out[i] = fr
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UsageError is a mistake in the command line (exit 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func readOne(ctx context.Context, cfg Config, path, fileArm string, forceRanks bool) (*FileResult, error) {
	fr := &FileResult{Path: path, FileArm: fileArm}
	manPath := cfg.Manifest
	if manPath == "" {
		manPath = ManifestPath(path)
	}
	if err := regular.Check(manPath); err != nil {
		// A FIFO named like a manifest would block the run forever.
		return nil, &nsys.InputError{Path: manPath, Problem: "the run manifest " + err.Error(), Hint: "remove it or pass --manifest FILE"}
	}
	if data, err := os.ReadFile(manPath); err == nil {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, &nsys.InputError{Path: manPath, Problem: "run manifest is not valid JSON", Err: err, Hint: "fix or remove the manifest"}
		}
		fr.Manifest, fr.ManPath = m, manPath
	} else if cfg.Manifest != "" {
		return nil, &nsys.InputError{Path: manPath, Problem: "cannot read the run manifest", Err: err}
	}
	if cfg.ArmKey != "" {
		if fr.Manifest == nil {
			return nil, &nsys.InputError{Path: path, Problem: fmt.Sprintf("--arm-key %s needs a run manifest, and %s does not exist", cfg.ArmKey, manPath), Hint: "put NAME.manifest.json beside the export or pass --manifest"}
		}
		v, ok := LookupKey(fr.Manifest, cfg.ArmKey)
		if !ok {
			return nil, &nsys.InputError{Path: manPath, Problem: fmt.Sprintf("run manifest has no key %q", cfg.ArmKey), Hint: "check --arm-key"}
		}
		fr.FileArm = joinNonEmpty("/", fileArm, v)
	}
	open := cfg.Open
	if open == nil {
		open = OpenInput
	}
	f, closeFn, err := open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	opt := cfg.Segment
	opt.FileArm = fr.FileArm
	opt.Compact = true // the analysis reads Result.Store
	// The export's NVTX quality findings (aggregate queries on a connection
	// of their own) are checked beside the segmentation, off its path; its
	// times after it, which then reads again only the tables the
	// segmentation did not read whole.
	var (
		quality    *nsys.Quality
		qualityErr error
		checked    = make(chan struct{})
	)
	go func() {
		defer close(checked)
		if quality, qualityErr = f.CheckRanges(); qualityErr == nil {
			// The timed tables the engine never reads, counted now rather
			// than after it.
			qualityErr = f.CheckTimesAhead(nsys.TableSync, nsys.TableOSRT)
		}
	}()
	marks.Mark("read: file opened")
	res, err := phases.Segment(f, opt)
	<-checked // closeFn must not run under the check
	if err != nil {
		return nil, err
	}
	if qualityErr == nil {
		qualityErr = f.CheckTimes(quality)
	}
	marks.Mark("times checked")
	// Provenance first: reading it may warn too (an older export without
	// PROCESSES or with a short GPU table), and f.Warnings is copied below.
	prov, err := readProvenance(f, path)
	if err != nil {
		return nil, err
	}
	fr.Info = prov
	marks.Mark("provenance read")
	if forceRanks || phases.RankCandidate(f, res) {
		if fr.Ranks, err = phases.ReadRanks(f); err != nil {
			return nil, err
		}
		for i := range fr.Ranks {
			fr.Ranks[i].File = path
		}
	}
	res.Warnings = append(res.Warnings, f.Warnings...) // schema version, -wal/-journal files beside the input, older layouts
	// The export's quality findings, as info reports them, less those the
	// segmentation words itself (it knows what it did with those rows).
	if qualityErr != nil {
		return nil, qualityErr
	}
	res.Warnings = append(res.Warnings, qualityWarnings(quality, f.Path)...)
	skipped := f.Skipped()
	for _, t := range slices.Sorted(maps.Keys(skipped)) {
		res.Warnings = append(res.Warnings, nsys.FileWarning(nsys.WarnSkippedRows, f.Path, "%d %s of %s %s a required value and %s skipped",
			skipped[t], plural.Of(skipped[t], "row", "rows"), t, plural.Of(skipped[t], "lacks", "lack"), plural.Of(skipped[t], "was", "were")))
	}
	marks.Mark("ranks read")
	fr.Result = res
	if ns, ok, err := f.SessionStartUTC(); err == nil && ok {
		fr.StartUTC = ns
	}
	st := res.InstanceStore()
	marks.Mark("read: result set")
	fr.MinTime = st.Start(0)
	for i := range st.Len() {
		fr.MinTime = min(fr.MinTime, st.Start(i))
	}
	return fr, nil
}

// OpenInput opens an export the user named (any kind nsys.OpenContext
// takes) read-only; close releases it and any private copy.
func OpenInput(ctx context.Context, path string) (*nsys.File, func(), error) {
	f, err := nsys.OpenContext(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

func joinNonEmpty(sep string, parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}

// qualityWarnings are q's warnings but those package phases gives in its
// own words: rows of the API, GPU-operation (kernel, memcpy, memset, graph
// trace) and NVTX tables that end before they start (counted as
// zero-length, or left out) and unclosed ranges (left out); duplicate
// correlation ids are counted by phases too.
func qualityWarnings(q *nsys.Quality, path string) []nsys.Warning {
	c := *q
	c.EndBeforeStart = maps.Clone(q.EndBeforeStart)
	for _, t := range []string{nsys.TableRuntime, nsys.TableKernel, nsys.TableMemcpy, nsys.TableMemset, nsys.TableGraphTrace, nsys.TableNVTX} {
		delete(c.EndBeforeStart, t)
	}
	c.UnclosedRanges, c.DuplicateCorrelations = 0, 0
	return c.WarningsNoted(path, nsys.QualityNotes{OtherThreadEnds: "kept, on the thread that started them; nsys stats' nvtx_gpu_proj_sum leaves them out"})
}

// refuseDuplicates refuses inputs that are one export under several names
// (byte-identical content, a copy or a link): counted as several profiles,
// it gave a CI of zero width. Only files of equal size are hashed.
func refuseDuplicates(files []string) error {
	bySize := map[int64][]string{}
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
			bySize[st.Size()] = append(bySize[st.Size()], f)
		}
	}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			continue
		}
		same := bySize[st.Size()]
		if len(same) < 2 || same[0] != f {
			continue
		}
		byHash := map[string]string{}
		for _, g := range same {
			sum, err := filehash.SHA256(g)
			if err != nil {
				continue // the reader names an unreadable file
			}
			if prev, ok := byHash[sum]; ok {
				return fmt.Errorf("%s and %s are the same export (identical content, SHA-256 %s…): pass each export once", prev, g, sum[:12])
			}
			byHash[sum] = g
		}
	}
	return nil
}
