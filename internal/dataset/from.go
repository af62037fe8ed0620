package dataset

// Scale-out: `nsysphase analyze --from DIR...` reloads phase_instances
// datasets written by `analyze --out` (flat or --partition), possibly by
// several CI jobs, and runs the same statistics as a direct analysis of the
// same exports, without opening any SQLite file.
//
// The rows carry every measurement. What they cannot carry (the block start
// times that order units across files, the exclusions and warnings of
// segmentation, each input's provenance) travels as one JSON value in the
// Parquet file metadata under MetaContext. A dataset without it (rewritten
// by another tool, say) still loads: units are then ordered by their first
// step, and provenance comes from the provenance table, with a warning.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

// Dataset is one loaded `analyze --out` directory.
type Dataset struct {
	Dir         string
	Instances   *export.Table // phase_instances
	Provenance  *export.Table // provenance; nil when absent, or not needed (the context describes every export)
	Collectives *export.Table // rank_collectives; nil when absent, or when the context lists no rank with traced communication
	// Inputs are the exports the dataset was written from, with their
	// SHA-256 (the Parquet metadata's nsysphase.inputs); nil when absent.
	Inputs  []export.Input
	context *datasetContext
	// hardware lists the tables of GPU metrics and CPU samples the dataset
	// holds, which the reduce does not read back.
	hardware []string
}

// Load reads the phase_instances (and provenance) tables of a dataset
// directory and its analysis context.
func Load(dir string) (*Dataset, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &nsys.InputError{Path: dir, Problem: "cannot read the dataset", Err: err, Hint: "pass a directory written by nsysphase analyze --out"}
	}
	if !st.IsDir() {
		return nil, &nsys.InputError{Path: dir, Problem: "not a directory", Hint: "--from takes directories written by nsysphase analyze --out; pass exports without --from"}
	}
	// Only the tables the reduce reads: the summary, comparisons and
	// decomposition are computed again from the instances.
	ds := &Dataset{Dir: dir}
	if err := ds.readTables("phase_instances"); err != nil {
		return nil, err
	}
	if ds.Instances == nil {
		return nil, &nsys.InputError{Path: dir, Problem: "no phase_instances table (phase_instances.parquet or phase_instances/)", Hint: "write the dataset with nsysphase analyze --out DIR (Parquet, not --format arrow)"}
	}
	// The metadata of the file just read, not of a second opening.
	md := ds.Instances.FileMetadata()
	if md == nil {
		if md, err = instancesMetadata(dir); err != nil {
			return nil, &nsys.InputError{Path: dir, Problem: "cannot read the Parquet metadata of phase_instances", Err: err}
		}
	}
	if raw := md[export.MetaInputs]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &ds.Inputs); err != nil {
			return nil, &nsys.InputError{Path: dir, Problem: "bad " + export.MetaInputs + " metadata", Err: err}
		}
	}
	if raw := md[MetaContext]; raw != "" {
		var c datasetContext
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			return nil, &nsys.InputError{Path: dir, Problem: "bad " + MetaContext + " metadata", Err: err}
		}
		if c.Version > contextVersion {
			return nil, &nsys.InputError{Path: dir, Problem: fmt.Sprintf("analysis context version %d is newer than this nsysphase understands (%d)", c.Version, contextVersion), Hint: "upgrade nsysphase"}
		}
		ds.context = &c
	}
	// The provenance table where the context does not describe the
	// exports (fileResults reads it later for an export the context
	// lacks); the collectives where it lists ranks whose communication
	// was traced (the others have none).
	var more []string
	if ds.context == nil {
		more = append(more, "provenance")
	} else if slices.ContainsFunc(ds.context.Files, func(f fileContext) bool { return slices.ContainsFunc(f.Ranks, tracedComm) }) {
		more = append(more, "rank_collectives")
	}
	if err := ds.readTables(more...); err != nil {
		return nil, err
	}
	for _, name := range []string{"gpu_metrics", "host_hotspots"} {
		for _, p := range []string{name + ".parquet", name} {
			if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
				ds.hardware = append(ds.hardware, name)
				break
			}
		}
	}
	return ds, nil
}

// tracedComm reports whether p's communication was traced (NCCL kernels
// or MPI calls: its Kind), which is when it has collectives.
func tracedComm(p phases.RankProcess) bool { return p.Kind != "" }

// readTables reads the tables named of ds's directory into ds.
func (ds *Dataset) readTables(names ...string) error {
	if len(names) == 0 {
		return nil
	}
	tables, err := export.ReadDatasetTables(ds.Dir, names...)
	if err != nil {
		return &nsys.InputError{Path: ds.Dir, Problem: "cannot read the Parquet dataset", Err: err}
	}
	for _, t := range tables {
		switch t.Name {
		case "phase_instances":
			ds.Instances = t
		case "provenance":
			ds.Provenance = t
		case "rank_collectives":
			ds.Collectives = t
		}
	}
	return nil
}

// instancesMetadata returns the file metadata of phase_instances.parquet or
// of the first part file of a partitioned phase_instances/.
func instancesMetadata(dir string) (map[string]string, error) {
	flat := filepath.Join(dir, "phase_instances.parquet")
	if _, err := os.Stat(flat); err == nil {
		return export.ReadParquetMetadata(flat)
	}
	var first string
	errFound := errors.New("found")
	err := filepath.WalkDir(filepath.Join(dir, "phase_instances"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".parquet") {
			first = path
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return nil, err
	}
	if first == "" {
		return map[string]string{}, nil
	}
	return export.ReadParquetMetadata(first)
}

// reapplied is the warm-up rule the datasets are re-cut with: o.SkipSteps
// where it is given (o.Given("skip-steps"): steps with index < SkipSteps in
// each block are left out), else −1: each dataset keeps the flags it was
// written with.
func reapplied(o analysis.Options) int {
	if o.Given("skip-steps") {
		return o.SkipSteps
	}
	return -1
}

// Build loads the datasets in dirs, in order, and computes the same
// document analysis.Build computes from the exports they were written
// from, with o's statistics settings. The warm-up rule is o.SkipSteps
// where it is given (o.Given("skip-steps")), else the one each dataset was
// written with.
func Build(ctx context.Context, dirs []string, o analysis.Options, version string) (*analysis.Doc, error) {
	if len(dirs) == 0 {
		return nil, &analysis.UsageError{Err: errors.New("--from: no dataset directory")}
	}
	// Each dataset is loaded and turned into compact results on its own
	// (a few at once, one per CPU, a bounded number ahead), then added in
	// input order: a thousand rank datasets never hold their tables at
	// once, and the first error in input order is the one reported.
	// Each export's store joins one pooled store as it comes, and is then
	// a view of it: Build's merge of the exports' instances is that store,
	// not a second copy of them.
	var sets []*Dataset
	acc := newFromAcc(o)
	next := loadAhead(ctx, dirs, o)
	pool := phases.NewStore()
	var ends []int // per file: its instances' end in pool
	for i := range dirs {
		l := next()
		if l.err != nil {
			return nil, l.err
		}
		if err := acc.commit(l.ds, l.frs, l.skip); err != nil { // refuses one path in two datasets
			return nil, err
		}
		for _, fr := range l.frs {
			// Room for what the datasets read so far project for all of
			// them (append's growth by a quarter would copy the pool
			// over and over).
			if n := fr.Result.Store.Len(); pool.Cap()-pool.Len() < n {
				pool.Grow(max(n, (pool.Len()+n)*(len(dirs)-i-1)/(i+1)+n))
			}
			pool.AppendStore(fr.Result.Store)
			fr.Result.Store = nil
			ends = append(ends, pool.Len())
		}
		sets = append(sets, l.ds)
	}
	files, skip, warns := acc.done()
	lo := 0
	for i, fr := range files { // acc.done's files are the ones committed, in order
		fr.Result.Store = pool.View(lo, ends[i])
		lo = ends[i]
	}
	if err := refuseRepeatedInputs(sets); err != nil {
		return nil, &analysis.UsageError{Err: err}
	}
	o.SkipSteps = skip
	d, err := analysis.Build(ctx, files, o, version)
	if err != nil {
		return nil, err
	}
	// Dataset-level notes go first, as input warnings do. Without any,
	// d.Warnings stays the document's [] (appending to nil warns gave null).
	if len(warns) > 0 {
		d.Warnings = append(warns, d.Warnings...)
	}
	return d, nil
}

// fileResultsOf rebuilds one analysis.FileResult per export from loaded
// datasets, ready for analysis.Build, with the warm-up rule of o
// (reapplied). It returns the warm-up setting to report and warnings about
// what the datasets could not carry.
func fileResultsOf(sets []*Dataset, o analysis.Options) ([]*analysis.FileResult, int, []analysis.Warning, error) {
	acc := newFromAcc(o)
	for _, ds := range sets {
		if err := acc.add(ds); err != nil {
			return nil, 0, nil, err
		}
	}
	out, skip, warns := acc.done()
	return out, skip, warns, nil
}

// fromAcc gathers the results of datasets one at a time.
type fromAcc struct {
	reapply   int // reapplied: the warm-up rule re-applied, −1 for none
	out       []*analysis.FileResult
	warns     []analysis.Warning
	fileSet   map[string]string // file → dataset dir
	skip      int
	skipKnown bool
}

func newFromAcc(o analysis.Options) *fromAcc {
	return &fromAcc{reapply: reapplied(o), fileSet: map[string]string{}, skip: -1}
}

// loadedSet is one dataset loaded and turned into compact results.
type loadedSet struct {
	ds   *Dataset
	frs  []*analysis.FileResult
	skip int // the --skip-steps it was written with (or inferred)
	err  error
}

// loadAhead loads and prepares the datasets of dirs on up to GOMAXPROCS
// goroutines, at most twice that many ahead of the reader; next returns
// them in dirs' order (call it len(dirs) times at most). An error or a
// cancelled ctx stops the loading of later datasets.
func loadAhead(ctx context.Context, dirs []string, o analysis.Options) (next func() loadedSet) {
	workers := max(1, min(runtime.GOMAXPROCS(0), len(dirs)))
	out := make([]chan loadedSet, len(dirs))
	for i := range out {
		out[i] = make(chan loadedSet, 1)
	}
	slots := make(chan struct{}, 2*workers)
	stop := make(chan struct{})
	go func() {
		for i, dir := range dirs {
			select {
			case slots <- struct{}{}:
			case <-stop:
				return
			}
			go func() {
				defer func() { <-slots }()
				if err := ctx.Err(); err != nil {
					out[i] <- loadedSet{err: err}
					return
				}
				ds, err := Load(dir)
				if err != nil {
					out[i] <- loadedSet{err: err}
					return
				}
				frs, skip, err := prepare(ds, reapplied(o))
				out[i] <- loadedSet{ds: ds, frs: frs, skip: skip, err: err}
			}()
		}
	}()
	i := 0
	return func() loadedSet {
		l := <-out[i]
		i++
		if l.err != nil || i == len(dirs) {
			close(stop)
		}
		return l
	}
}

// add turns ds into compact results and adds them.
func (a *fromAcc) add(ds *Dataset) error {
	frs, skip, err := prepare(ds, a.reapply)
	if err != nil {
		return err
	}
	return a.commit(ds, frs, skip)
}

// prepare turns ds into compact results (the analysis reads the store, see
// phases.Store), with the warm-up rule reapply re-applied (none when
// negative; see reapplied), and drops its row
// tables, which nothing reads afterwards; skip is the --skip-steps the
// dataset was written with (inferred without its context). It reads and
// writes nothing but ds.
func prepare(ds *Dataset, reapply int) (frs []*analysis.FileResult, skip int, err error) {
	frs, skip, err = ds.fileResults(reapply)
	if err != nil {
		return nil, 0, &nsys.InputError{Path: ds.Dir, Problem: "cannot use the phase_instances table", Err: err}
	}
	if ds.context != nil {
		skip = ds.context.SkipSteps
	}
	ds.Instances, ds.Collectives = nil, nil
	return frs, skip, nil
}

// commit adds ds's prepared results: it refuses an export already in an
// earlier dataset and notes a different warm-up setting.
func (a *fromAcc) commit(ds *Dataset, frs []*analysis.FileResult, s int) error {
	for _, fr := range frs {
		if prev, ok := a.fileSet[fr.Path]; ok {
			return &analysis.UsageError{Err: fmt.Errorf("export %s is in both %s and %s: pass each export's dataset once (exports analysed in different jobs need different paths)", fr.Path, prev, ds.Dir)}
		}
		a.fileSet[fr.Path] = ds.Dir
	}
	if ds.context == nil {
		a.warns = append(a.warns, analysis.Warning{Code: WarnDatasetWithoutContext, Message: fmt.Sprintf("%s has no %s metadata (not written by nsysphase analyze --out?): units are ordered by their first step, exclusions and segmentation warnings are unknown, provenance comes from the provenance table", ds.Dir, MetaContext)})
	}
	if len(ds.hardware) > 0 {
		a.warns = append(a.warns, analysis.Warning{Code: WarnDatasetHardware, Message: fmt.Sprintf("%s holds %s, which --from does not read back: the analysis has no hardware section (analyse the exports themselves for GPU metrics and CPU hot spots, or read the tables directly)", ds.Dir, strings.Join(ds.hardware, " and "))})
	}
	if a.skipKnown && s != a.skip && a.reapply < 0 {
		a.warns = append(a.warns, analysis.Warning{Code: WarnSkipStepsDiffer, Message: fmt.Sprintf("%s was written with --skip-steps %d, an earlier dataset with %d: each keeps its own warm-up flags (pass --skip-steps to re-apply one rule)", ds.Dir, s, a.skip)})
	}
	if !a.skipKnown {
		a.skip, a.skipKnown = s, true
	}
	a.out = append(a.out, frs...)
	return nil
}

// done is the results in order, the warm-up setting and the warnings.
func (a *fromAcc) done() ([]*analysis.FileResult, int, []analysis.Warning) {
	skip := a.skip
	if a.reapply >= 0 {
		skip = a.reapply
	}
	return a.out, max(skip, 0), a.warns
}

// stepKey identifies one step instance: its unit and index.
type stepKey struct {
	unit phases.UnitID
	step int
}

// fileRows is one export's rows of a dataset, read into a store in
// dataset order, grouped by step.
type fileRows struct {
	st      *phases.Store
	groups  map[stepKey]int32
	keys    []stepKey // per group
	steps   []int32   // per group: its step's instance in st, −1 while unseen
	groupOf []int32   // per instance of st: its group
}

// readRows reads every row of the phase_instances table into one store
// per export (in the order exports first appear), with the warm-up rule
// re-applied when skip ≥ 0. inferred is the largest number of warm-up
// steps of any unit as written.
func (ds *Dataset) readRows(skip int) (files map[string]*fileRows, order []string, inferred int, err error) {
	t := ds.Instances
	cols, err := locateColumns(t)
	if err != nil {
		return nil, nil, 0, err
	}
	files = map[string]*fileRows{}
	warm := map[phases.UnitID]int{}
	var fa *fileRows
	var lastFile string
	var lastKey stepKey
	lastG := int32(-1)
	var x phases.Instance
	for r := range t.Len() {
		if err := cols.readInstance(t, r, &x); err != nil {
			return nil, nil, 0, err
		}
		if fa == nil || x.File != lastFile {
			if fa = files[x.File]; fa == nil {
				fa = &fileRows{st: phases.NewStore(), groups: map[stepKey]int32{}}
				files[x.File] = fa
				order = append(order, x.File)
			}
			lastFile, lastG = x.File, -1
		}
		// Rows of one step come together: its group is looked up once.
		if k := (stepKey{x.Unit, x.Step}); lastG < 0 || k != lastKey {
			g, ok := fa.groups[k]
			if !ok {
				g = int32(len(fa.keys))
				fa.groups[k] = g
				fa.keys = append(fa.keys, k)
				fa.steps = append(fa.steps, -1)
			}
			lastKey, lastG = k, g
		}
		if x.IsStep {
			if fa.steps[lastG] >= 0 {
				return nil, nil, 0, fmt.Errorf("unit %q has two rows for step %d", x.Unit, x.Step)
			}
			fa.steps[lastG] = int32(fa.st.Len())
			if x.Warmup {
				warm[x.Unit]++
				inferred = max(inferred, warm[x.Unit])
			}
		}
		if skip >= 0 {
			x.Warmup = x.Step < skip
		}
		fa.groupOf = append(fa.groupOf, lastG)
		fa.st.Append(&x)
	}
	return files, order, inferred, nil
}

// ordered puts fa's instances in segmentation's order: steps by start
// (then pid, tid), each followed by its phase rows in dataset order. A
// partitioned dataset groups rows by arm, so the order is restored here
// rather than trusted.
func (fa *fileRows) ordered(file string) error {
	n := len(fa.keys)
	for g, s := range fa.steps {
		if s < 0 {
			return fmt.Errorf("%s: phase rows of unit %q step %d have no step row", file, fa.keys[g].unit, fa.keys[g].step)
		}
	}
	st := fa.st
	groups := make([]int32, n)
	for g := range groups {
		groups[g] = int32(g)
	}
	slices.SortStableFunc(groups, func(a, b int32) int {
		sa, sb := int(fa.steps[a]), int(fa.steps[b])
		return cmp.Or(cmp.Compare(st.Start(sa), st.Start(sb)), cmp.Compare(st.Pid(sa), st.Pid(sb)), cmp.Compare(st.Tid(sa), st.Tid(sb)))
	})
	// Each group's instances in store order (a counting sort).
	off := make([]int32, n+1)
	for _, g := range fa.groupOf {
		off[g+1]++
	}
	for g := range n {
		off[g+1] += off[g]
	}
	next := slices.Clone(off[:n])
	byGroup := make([]int32, len(fa.groupOf))
	for i, g := range fa.groupOf {
		byGroup[next[g]] = int32(i)
		next[g]++
	}
	order := make([]int32, 0, len(byGroup))
	for _, g := range groups {
		s := fa.steps[g]
		order = append(order, s)
		for _, i := range byGroup[off[g]:off[g+1]] {
			if i != s {
				order = append(order, i)
			}
		}
	}
	st.Reorder(order)
	fa.groupOf, fa.groups = nil, nil
	return nil
}

// fileResults turns the dataset's rows into per-export results, in the
// order the analysis read the exports, each export's instances in a store
// (Result.Instances stays nil), with the warm-up rule re-applied when
// skip ≥ 0 (steps of index < skip in each block, and their phases, are
// warm-up). inferred is the largest number of warm-up steps of any unit as
// written: the --skip-steps of a dataset without its context.
func (ds *Dataset) fileResults(skip int) (out []*analysis.FileResult, inferred int, err error) {
	files, fileOrder, inferred, err := ds.readRows(skip)
	if err != nil {
		return nil, 0, err
	}
	ds.sortFiles(fileOrder)
	var provRows map[string]*analysis.ProvenanceRow // read for the first export the context lacks
	for fi, file := range fileOrder {
		fa := files[file]
		if err := fa.ordered(file); err != nil {
			return nil, 0, err
		}
		res, phaseNames := ds.result(fa.st)
		fr := &analysis.FileResult{Path: file, Result: res}
		fc, ok := ds.fileContext(file)
		if ok {
			in := fc.Input
			res.Inputs = []phases.Input{in}
			// Arm labels in the rows are final: FileArm stays empty so that
			// Build does not relabel them again.
			fr.Info, fr.Manifest = fc.Provenance, fc.Manifest
			if fr.Ranks, err = ds.rankProcesses(file, fc.Ranks); err != nil {
				return nil, 0, err
			}
		} else {
			if provRows == nil {
				if ds.Provenance == nil && ds.context != nil {
					if err := ds.readTables("provenance"); err != nil {
						return nil, 0, err
					}
				}
				if provRows, err = ds.provenanceRows(); err != nil {
					return nil, 0, err
				}
			}
			pr := provRows[file]
			if pr == nil {
				pr = &analysis.ProvenanceRow{File: file, Provenance: &analysis.Provenance{File: file, GPUs: []nsys.GPU{}, MPSProcesses: []nsys.Process{}}}
			}
			fr.Info, fr.Manifest = pr.Provenance, pr.Manifest
			steps, _ := res.Store.StepsAndPhases()
			res.Inputs = []phases.Input{{File: file, NsysVersion: pr.Provenance.NsysVersion, SchemaVersion: pr.Provenance.SchemaVersion,
				GraphTraceMode: pr.Provenance.GraphTraceMode, Step: res.StepName, Steps: steps, Phases: phaseNames,
				CrossProcessOverlapNs: pr.Evidence.CrossProcessGPUOverlapNs}}
		}
		if fr.Info == nil {
			fr.Info = &analysis.Provenance{File: file, GPUs: []nsys.GPU{}, MPSProcesses: []nsys.Process{}}
		}
		if res.StepName == "" {
			res.StepName = res.Inputs[0].Step
		}
		// Exclusions and segmentation warnings are per analysis: the first
		// export of the dataset carries them, as their sum is what Build reports.
		if fi == 0 && ds.context != nil {
			skipped := res.Excluded.SkippedSteps
			res.Excluded = ds.context.Excluded
			res.Excluded.SkippedSteps = skipped
			res.Warnings = slices.Clone(ds.context.InputWarnings)
		}
		out = append(out, fr)
	}
	return out, inferred, nil
}

// result is the phases.Result of one export's instances in segmentation's
// order, their blocks' starts set (see unitStarts), and the phases in
// order of first appearance.
func (ds *Dataset) result(st *phases.Store) (*phases.Result, []string) {
	starts := ds.unitStarts(st)
	st.SetBlockStarts(func(u phases.UnitID) int64 { return starts[u] })
	res := &phases.Result{Store: st}
	_, phaseNames := st.StepsAndPhases()
	if st.Len() > 0 {
		res.StepName = st.Phase(0) // the first step's
	}
	for i := range st.Len() {
		if st.IsStep(i) && st.Warmup(i) {
			res.Excluded.SkippedSteps++
		}
	}
	res.PhaseOrder = append([]string{res.StepName}, phaseNames...)
	return res, phaseNames
}

// sortFiles puts the exports in the analysis' input order when the
// context (or else the provenance table) knows it.
func (ds *Dataset) sortFiles(fileOrder []string) {
	if ds.context != nil {
		rank := map[string]int{}
		for i, f := range ds.context.Files {
			rank[f.Input.File] = i
		}
		slices.SortStableFunc(fileOrder, func(a, b string) int {
			ra, oka := rank[a]
			rb, okb := rank[b]
			switch {
			case oka && okb:
				return ra - rb
			case oka:
				return -1
			case okb:
				return 1
			}
			return 0
		})
		return
	}
	if ds.Provenance == nil {
		return
	}
	if fc := ds.Provenance.ColumnIndex("file"); fc >= 0 {
		rank := map[string]int{}
		for r := range ds.Provenance.Len() {
			if f, ok := ds.Provenance.String(r, fc); ok {
				if _, seen := rank[f]; !seen {
					rank[f] = len(rank)
				}
			}
		}
		slices.SortStableFunc(fileOrder, func(a, b string) int {
			ra, oka := rank[a]
			rb, okb := rank[b]
			if oka && okb {
				return ra - rb
			}
			return 0
		})
	}
}

// unitStarts returns the start of each unit of st's steps: from the
// context, else the unit's first step's start (which orders blocks of one
// export as their starts do).
func (ds *Dataset) unitStarts(st *phases.Store) map[phases.UnitID]int64 {
	out := map[phases.UnitID]int64{}
	fromContext := map[phases.UnitID]bool{}
	for i := range st.Len() {
		if !st.IsStep(i) {
			continue
		}
		u := st.Unit(i)
		if fromContext[u] {
			continue
		}
		if ds.context != nil {
			if v, ok := ds.context.UnitStarts[u.String()]; ok {
				out[u], fromContext[u] = v, true
				continue
			}
		}
		if v, ok := out[u]; !ok || st.Start(i) < v {
			out[u] = st.Start(i)
		}
	}
	return out
}

func (ds *Dataset) fileContext(file string) (fileContext, bool) {
	if ds.context == nil {
		return fileContext{}, false
	}
	for _, f := range ds.context.Files {
		if f.Input.File == file {
			return f, true
		}
	}
	return fileContext{}, false
}

// provenanceRows rebuilds what the provenance table holds, by file.
func (ds *Dataset) provenanceRows() (map[string]*analysis.ProvenanceRow, error) {
	out := map[string]*analysis.ProvenanceRow{}
	t := ds.Provenance
	if t == nil {
		return out, nil
	}
	get := func(r int, name string) string {
		i := t.ColumnIndex(name)
		if i < 0 || t.Column(i).Type != export.TypeString {
			return ""
		}
		v, _ := t.String(r, i)
		return v
	}
	for r := range t.Len() {
		file := get(r, "file")
		p := &analysis.Provenance{File: file, NsysVersion: get(r, "nsys_version"), SchemaVersion: get(r, "export_schema_version"),
			DriverVersion: get(r, "driver_version"), CUDADriverVersion: get(r, "cuda_driver_version"), GraphTraceMode: get(r, "cuda_graph_trace_mode"),
			GPUs: []nsys.GPU{}, MPSProcesses: []nsys.Process{}}
		names, uuids := splitNonEmpty(get(r, "gpu"), ";"), splitNonEmpty(get(r, "gpu_uuid"), ";")
		for i, n := range names {
			g := nsys.GPU{ID: int64(i), Name: n}
			if i < len(uuids) {
				g.UUID = uuids[i]
			}
			p.GPUs = append(p.GPUs, g)
		}
		for _, s := range splitNonEmpty(get(r, "mps_processes_seen"), ";") {
			pidStr, name, _ := strings.Cut(s, " ")
			pid, _ := strconv.ParseInt(pidStr, 10, 64)
			p.MPSProcesses = append(p.MPSProcesses, nsys.Process{Pid: pid, Name: name})
		}
		row := &analysis.ProvenanceRow{File: file, Provenance: p}
		if i := t.ColumnIndex("cross_process_gpu_overlap_ns"); i >= 0 && t.Column(i).Type == export.TypeInt64 {
			row.Evidence.CrossProcessGPUOverlapNs, _ = t.Int64(r, i)
		}
		if m := get(r, "manifest"); m != "" {
			if err := json.Unmarshal([]byte(m), &row.Manifest); err != nil {
				return nil, fmt.Errorf("provenance of %s: manifest is not JSON: %w", file, err)
			}
		}
		out[file] = row
	}
	return out, nil
}

func splitNonEmpty(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// rankProcesses restores an export's rank processes: the context's, with
// their collectives from the rank_collectives table (in start order).
func (ds *Dataset) rankProcesses(file string, ps []phases.RankProcess) ([]phases.RankProcess, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	out := slices.Clone(ps)
	at := map[int64]int{}
	for i := range out {
		out[i].Collectives = nil
		at[out[i].Pid] = i
	}
	if !slices.ContainsFunc(out, tracedComm) {
		return out, nil // no collectives to restore (their table was not read)
	}
	t := ds.Collectives
	if t == nil {
		return nil, fmt.Errorf("%s: the analysis context lists ranks but the dataset has no rank_collectives table", file)
	}
	col := func(name string) (int, error) {
		i := t.ColumnIndex(name)
		if i < 0 {
			return 0, fmt.Errorf("rank_collectives lacks column %s", name)
		}
		return i, nil
	}
	names := []string{"file", "pid", "name", "start_ns", "end_ns", "device", "exposed_ns", "tid", "call_start_ns"}
	idx := make([]int, len(names))
	for i, n := range names {
		c, err := col(n)
		if err != nil {
			return nil, err
		}
		idx[i] = c
	}
	for r := range t.Len() {
		if f, _ := t.Value(r, idx[0]).AsString(); f != file {
			continue
		}
		pid, _ := t.Value(r, idx[1]).AsInt64()
		i, ok := at[pid]
		if !ok {
			continue
		}
		var c phases.Collective
		c.Name, _ = t.Value(r, idx[2]).AsString()
		c.Start, _ = t.Value(r, idx[3]).AsInt64()
		c.End, _ = t.Value(r, idx[4]).AsInt64()
		c.Device, _ = t.Value(r, idx[5]).AsInt64()
		c.ExposedNs, _ = t.Value(r, idx[6]).AsInt64()
		c.Tid, _ = t.Value(r, idx[7]).AsInt64()
		c.CallStart, _ = t.Value(r, idx[8]).AsInt64()
		out[i].Collectives = append(out[i].Collectives, c)
	}
	for i := range out {
		slices.SortStableFunc(out[i].Collectives, func(a, b phases.Collective) int { return cmp.Compare(a.Start, b.Start) })
	}
	return out, nil
}

// refuseRepeatedInputs refuses datasets that hold one export twice by its
// content (SHA-256) under different paths: copies of one file analysed in
// two jobs. Counted twice, the export's profile would narrow every interval
// as if a second run agreed with it. (One path in two datasets is refused
// before, by fromAcc.commit.)
func refuseRepeatedInputs(sets []*Dataset) error {
	type seen struct{ dir, path string }
	first := map[string]seen{}
	for _, ds := range sets {
		for _, in := range ds.Inputs {
			if in.SHA256 == "" {
				continue // not hashed (unreadable when written): nothing to compare
			}
			if prev, ok := first[in.SHA256]; ok {
				return fmt.Errorf("%s and %s both hold the analysis of one export (%s and %s: SHA-256 %s…): pass each export's dataset once", prev.dir, ds.Dir, prev.path, in.Path, in.SHA256[:min(12, len(in.SHA256))])
			}
			first[in.SHA256] = seen{ds.Dir, in.Path}
		}
	}
	return nil
}
