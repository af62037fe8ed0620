package dataset

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/phases"
)

// instanceColumn is one column of phase_instances: its schema, how the
// writer reads it from an instance and how the --from reader sets it back.
// The one list, instanceColumns, serves the writer (InstancesRows), the
// reader (locateColumns) and, through Tables, the schema docs.
type instanceColumn struct {
	export.Column
	// Exactly one getter/setter pair is set, by Type: str for strings, i64
	// for int64 and bool (0/1), f64 for float64. has, when set, says whether
	// the value is present (else null); set* is then called only for a
	// present value.
	str    func(x *phases.Instance) string
	setStr func(x *phases.Instance, v string)
	i64    func(x *phases.Instance) int64
	setI64 func(x *phases.Instance, v int64)
	f64    func(x *phases.Instance) float64
	setF64 func(x *phases.Instance, v float64)
	has    func(x *phases.Instance) bool
	// metric, for a metric column (isMetric), is the Instance.M entry the
	// writer copies without calling i64.
	metric   phases.Metric
	isMetric bool
	// unitLabel marks block_label, whose label (fmt.Sprintf) the writer
	// formats once per run of rows of one unit.
	unitLabel bool
	// optional columns may be absent from a dataset (older writers);
	// nullOK ones read a null as the zero value.
	optional, nullOK bool
	// formerName is the column's name in datasets of schema 1.x, which the
	// --from reader still accepts.
	formerName string
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// instanceColumns are the columns of phase_instances, in order: built on
// first use, after every init function, so that metrics declared with
// phases.Declare have theirs.
var instanceColumns = sync.OnceValue(func() []instanceColumn {
	str := func(name, doc string, get func(*phases.Instance) string, set func(*phases.Instance, string)) instanceColumn {
		return instanceColumn{Column: export.Column{Name: name, Type: export.TypeString, Doc: doc}, str: get, setStr: set}
	}
	i64 := func(name, unit, doc string, get func(*phases.Instance) int64, set func(*phases.Instance, int64)) instanceColumn {
		return instanceColumn{Column: export.Column{Name: name, Type: export.TypeInt64, Unit: unit, Doc: doc}, i64: get, setI64: set}
	}
	boolean := func(name, doc string, get func(*phases.Instance) bool, set func(*phases.Instance, bool)) instanceColumn {
		return instanceColumn{Column: export.Column{Name: name, Type: export.TypeBool, Doc: doc},
			i64: func(x *phases.Instance) int64 { return b2i(get(x)) }, setI64: func(x *phases.Instance, v int64) { set(x, v != 0) }}
	}
	thread := str("thread", "thread name", func(x *phases.Instance) string { return x.Thread }, func(x *phases.Instance, v string) { x.Thread = v })
	thread.nullOK = true // "" and null both mean unnamed
	// Named block_label, not unit: "unit" is a measurement unit everywhere
	// else (phase_summary.metric_unit).
	blockLabel := str("block_label", "unique label of the block (or profile) the statistics resample, e.g. run.sqlite#graph block 2",
		func(x *phases.Instance) string { return x.Unit.String() }, setUnit)
	blockLabel.formerName = "unit"
	blockLabel.unitLabel = true
	cols := []instanceColumn{
		str("file", "export the instance comes from", func(x *phases.Instance) string { return x.File }, func(x *phases.Instance, v string) { x.File = v }),
		i64("pid", "", "OS process id", func(x *phases.Instance) int64 { return x.Pid }, func(x *phases.Instance, v int64) { x.Pid = v }),
		i64("tid", "", "OS thread id of the range", func(x *phases.Instance) int64 { return x.Tid }, func(x *phases.Instance, v int64) { x.Tid = v }),
		thread,
		str("arm", "arm label (<file-arm>/<nvtx-arm>, either alone, or empty)", func(x *phases.Instance) string { return x.Arm }, func(x *phases.Instance, v string) { x.Arm = v }),
		i64("block", "", "block index within the arm", func(x *phases.Instance) int64 { return int64(x.Block) }, func(x *phases.Instance, v int64) { x.Block = int(v) }),
		blockLabel,
		i64("step", export.UnitCount, "step index within the block, from 0", func(x *phases.Instance) int64 { return int64(x.Step) }, func(x *phases.Instance, v int64) { x.Step = int(v) }),
		str("phase", "phase name; step rows carry the step's range name", func(x *phases.Instance) string { return x.Phase }, func(x *phases.Instance, v string) { x.Phase = v }),
		boolean("is_step", "true for the step instance itself", func(x *phases.Instance) bool { return x.IsStep }, func(x *phases.Instance, v bool) { x.IsStep = v }),
		i64("depth", "", "0 for steps, 1 for their children, …", func(x *phases.Instance) int64 { return int64(x.Depth) }, func(x *phases.Instance, v int64) { x.Depth = int(v) }),
		boolean("warmup", "excluded from statistics (--skip-steps)", func(x *phases.Instance) bool { return x.Warmup }, func(x *phases.Instance, v bool) { x.Warmup = v }),
		i64("start_ns", export.UnitNanoseconds, "range start on the export's clock", func(x *phases.Instance) int64 { return x.Start }, func(x *phases.Instance, v int64) { x.Start = v }),
		i64("end_ns", export.UnitNanoseconds, "range end on the export's clock", func(x *phases.Instance) int64 { return x.End }, func(x *phases.Instance, v int64) { x.End = v }),
	}
	for m := range phases.NumMetrics() {
		mi := m.Info()
		c := i64(mi.Name, mi.Unit, mi.Doc+"; null when not measured (its source table was not recorded)", func(x *phases.Instance) int64 { return x.M[m] }, func(x *phases.Instance, v int64) { x.M[m] = v })
		// optional: a dataset written before a metric existed reads it as
		// null (not measured), so adding a metric never breaks --from.
		c.metric, c.isMetric, c.Nullable, c.optional = m, true, true, true
		cols = append(cols, c)
	}
	queue := instanceColumn{Column: export.Column{Name: "queue_mean_ns", Type: export.TypeFloat64, Unit: export.UnitNanoseconds, Nullable: true, Doc: "queue_sum_ns / ops with a delay; null without GPU ops, and wherever queue_sum_ns is null"},
		f64: func(x *phases.Instance) float64 { return x.QueueMeanNs }, setF64: func(x *phases.Instance, v float64) { x.QueueMeanNs, x.HasQueue = v, true },
		// Absent means null in every column: without the kernel table
		// queue_sum_ns and queue_max_ns are null, so their mean is too.
		has: func(x *phases.Instance) bool { return x.HasQueue && !x.IsNull(phases.QueueSum) }, optional: true}
	stepOnly := func(x *phases.Instance) bool { return x.HasStepOnly }
	gap := instanceColumn{Column: export.Column{Name: "phase_gap_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Nullable: true, Doc: "steps only: wall not covered by any phase; null for phases"},
		i64: func(x *phases.Instance) int64 { return x.PhaseGapNs }, setI64: func(x *phases.Instance, v int64) { x.PhaseGapNs, x.HasStepOnly = v, true },
		has: stepOnly, optional: true}
	unattr := instanceColumn{Column: export.Column{Name: "unattributed_kernel_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Nullable: true, Doc: "steps only: kernel time of the step outside every phase; null for phases, and without the kernel table"},
		i64: func(x *phases.Instance) int64 { return x.UnattrKerNs }, setI64: func(x *phases.Instance, v int64) { x.UnattrKerNs, x.HasStepOnly = v, true },
		has: func(x *phases.Instance) bool { return x.HasStepOnly && !x.IsNull(phases.KernelSum) }, optional: true} // no kernel table: not measured, not 0
	label := str("step_label", "steps of a numbered family (step ProfilerStep#N): the instance's own range name, e.g. ProfilerStep#12; empty otherwise",
		func(x *phases.Instance) string { return x.StepLabel }, func(x *phases.Instance, v string) { x.StepLabel = v })
	label.optional, label.nullOK = true, true
	other := boolean("other_thread", "true for a row of another thread's work during the step (e.g. backward (autograd thread)): beside the step's phases, outside its wall",
		func(x *phases.Instance) bool { return x.OtherThread }, func(x *phases.Instance, v bool) { x.OtherThread = v })
	other.optional, other.nullOK = true, true
	rank := instanceColumn{Column: export.Column{Name: "rank", Type: export.TypeInt64, Nullable: true, Doc: "rank of the instance's process in a distributed job (the ranks section says where the id came from); null when the inputs hold fewer than two ranks (schema 2.1)"},
		i64: func(x *phases.Instance) int64 { return int64(x.Rank) }, setI64: func(x *phases.Instance, v int64) { x.Rank, x.HasRank = int(v), true },
		has: func(x *phases.Instance) bool { return x.HasRank }, optional: true}
	gpuStart := instanceColumn{Column: export.Column{Name: "gpu_start_ns", Type: export.TypeInt64, Unit: export.UnitNanoseconds, Nullable: true, Doc: "start of the instance's first GPU op (the vendor's projected start; to gpu_start_ns + proj_ns is the GPU window its GPU metrics average over); null without GPU ops (schema 2.2)"},
		i64: func(x *phases.Instance) int64 { return x.GPUStart }, setI64: func(x *phases.Instance, v int64) { x.GPUStart, x.HasGPUStart = v, true },
		has: func(x *phases.Instance) bool { return x.HasGPUStart }, optional: true}
	return append(cols, queue, gap, unattr, label, other, rank, gpuStart)
})

// setUnit reads a unit label back (phases.UnitID.String); the file, arm and
// block columns are read first. A label of another form (a dataset written
// by another tool) keeps the unit of the row's file, arm and block.
func setUnit(x *phases.Instance, label string) {
	x.Unit = phases.UnitID{File: x.File, Arm: x.Arm, Block: x.Block}
	rest, ok := strings.CutPrefix(label, x.File+"#")
	if !ok {
		return
	}
	if p, ok := strings.CutPrefix(rest, "pid "); ok {
		if pid, err := strconv.ParseInt(p, 10, 64); err == nil && pid != 0 && label == (phases.UnitID{File: x.File, Arm: x.Arm, Pid: pid}).String() {
			x.Unit.Pid, x.Unit.Block = pid, 0
			return
		}
	}
	if i := strings.LastIndex(rest, " block "); i >= 0 {
		if b, err := strconv.Atoi(rest[i+len(" block "):]); err == nil {
			x.Unit.Arm, x.Unit.Block = rest[:i], b
		}
	}
}

// fillBlock is the number of instances a filler decodes and then writes
// column by column: an Instance is ~600 bytes, so a block of them stays in
// the L2 cache across the ~70 columns, where a column-wise pass over every
// instance read each instance's cache lines from memory ~70 times.
const fillBlock = 256

// fillRowsPerWorker is the fewest rows worth a goroutine of its own in
// fillInstanceColumns.
const fillRowsPerWorker = 8192

// fillChunk bounds the rows fillInstanceColumns fills between two meeting
// points of its goroutines, and so the null masks it holds.
const fillChunk = 1 << 16

// fillInstanceColumns writes instances [lo, hi) of xs into the rows of a:
// column by column (export.RowsAppender) within each block of rows, as
// this is the biggest table by far, and a boxed Value per cell cost a third
// of its encoding. Large tables are filled by several goroutines, each a
// contiguous range of rows, decoding and writing them block by block
// without meeting the others: numbers in place, strings as codes of the
// goroutine's own dictionary, nulls as a mask per row. Then each string or
// nullable column is finished by a goroutine of its own, in row order: the
// codes mapped to the column's dictionary, interning each string on first
// sight (so the dictionary is the one a serial fill makes), nulls set. The
// goroutines used to meet twice per block of 1,024 rows (decode, then fill
// a share of the columns): on the GPU host's 16 cores those ~100 meetings,
// each a wake-up of every worker, made the fill of 52,000 rows take ~25 ms.
func fillInstanceColumns(a *export.RowsAppender, xs *phases.Store, lo, hi int) {
	fillInstanceColumnsOn(a, xs, lo, hi, min(runtime.GOMAXPROCS(0), 1+(hi-lo)/fillRowsPerWorker))
}

// fillInstanceColumnsOn is fillInstanceColumns on up to workers goroutines.
func fillInstanceColumnsOn(a *export.RowsAppender, xs *phases.Store, lo, hi, workers int) {
	workers = max(workers, 1)
	f := newRowFiller(a, min(hi-lo, fillChunk), workers)
	for c0 := lo; c0 < hi; c0 += fillChunk {
		n := min(hi, c0+fillChunk) - c0
		w := min(workers, 1+n/fillRowsPerWorker)
		f.bounds = f.bounds[:0]
		for k := range w + 1 {
			f.bounds = append(f.bounds, k*n/w) // rows of the chunk
		}
		var wg sync.WaitGroup
		for k := range w {
			wg.Go(func() { f.fillRows(xs, k, c0, c0-lo) })
		}
		wg.Wait()
		for col := range instanceColumns() {
			if f.codes[col] != nil || f.nullBit[col] != 0 {
				wg.Go(func() { f.finish(col, c0-lo) })
			}
		}
		wg.Wait()
	}
}

// rowFiller fills the new rows of a from goroutines that each own a range
// of rows of a chunk: numbers in place, strings as codes of the
// goroutine's dictionary, nulls as a mask per row, all finished by finish.
type rowFiller struct {
	a       *export.RowsAppender
	ints    [][]int64
	floats  [][]float64
	codes   [][]int32   // string columns (not nil once there are rows)
	dicts   [][]strDict // per goroutine, per column
	nullBit []uint64    // nullable columns: their bit in nulls
	nulls   []uint64    // per row of the chunk: its null cells, by nullBit
	bounds  []int       // goroutine k fills the chunk's rows [bounds[k], bounds[k+1])
}

// strDict is one goroutine's dictionary of a string column in a chunk.
type strDict struct {
	code map[string]int32
	vals []string
	last int32
}

func (d *strDict) intern(s string) int32 {
	if len(d.vals) > 0 && d.vals[d.last] == s {
		return d.last
	}
	c, ok := d.code[s]
	if !ok {
		if d.code == nil {
			d.code = map[string]int32{}
		}
		c = int32(len(d.vals))
		d.vals = append(d.vals, s)
		d.code[s] = c
	}
	d.last = c
	return c
}

func (d *strDict) reset() {
	clear(d.code)
	clear(d.vals) // nothing of the instances stays reachable
	d.vals, d.last = d.vals[:0], 0
}

// newRowFiller prepares a's new rows for up to workers goroutines; chunk
// is the most rows filled between two rounds of finish.
func newRowFiller(a *export.RowsAppender, chunk, workers int) *rowFiller {
	k := len(instanceColumns())
	f := &rowFiller{a: a, ints: make([][]int64, k), floats: make([][]float64, k), codes: make([][]int32, k),
		dicts: make([][]strDict, workers), nullBit: make([]uint64, k), nulls: make([]uint64, chunk)}
	for w := range f.dicts {
		f.dicts[w] = make([]strDict, k)
	}
	bit := 0
	cols := instanceColumns()
	for col := range cols {
		c := &cols[col]
		switch {
		case c.str != nil:
			f.codes[col] = a.Codes(col)
		case c.i64 != nil:
			f.ints[col] = a.Int64s(col)
		case c.f64 != nil:
			f.floats[col] = a.Float64s(col)
		}
		if c.isMetric || c.has != nil {
			if bit == 64 {
				panic("phase_instances has more than 64 nullable columns")
			}
			f.nullBit[col] = 1 << bit
			bit++
		}
	}
	return f
}

// fillRows fills goroutine k's rows of the chunk that starts at instance
// chunk0 and at row base of a's new rows.
func (f *rowFiller) fillRows(xs *phases.Store, k, chunk0, base int) {
	dicts := f.dicts[k]
	cols := instanceColumns()
	buf := make([]phases.Instance, fillBlock)
	var unit phases.UnitID
	label, hasLabel := "", false
	r1 := chunk0 + f.bounds[k+1]
	for b0 := chunk0 + f.bounds[k]; b0 < r1; b0 += fillBlock {
		bx := buf[:min(r1, b0+fillBlock)-b0]
		for i := range bx {
			xs.Get(b0+i, &bx[i])
		}
		srow := b0 - chunk0 // in the chunk
		row := base + srow  // in a's new rows
		nulls := f.nulls[srow:]
		clear(nulls[:len(bx)])
		for col := range cols {
			c := &cols[col]
			switch {
			case c.isMetric:
				v, m, bit := f.ints[col][row:], c.metric, f.nullBit[col]
				for i := range bx {
					if bx[i].Null != 0 && bx[i].IsNull(m) {
						nulls[i] |= bit
						continue
					}
					v[i] = bx[i].M[m]
				}
			case c.unitLabel:
				v, d := f.codes[col][row:], &dicts[col]
				for i := range bx {
					if !hasLabel || bx[i].Unit != unit {
						unit, label, hasLabel = bx[i].Unit, bx[i].Unit.String(), true
					}
					v[i] = d.intern(label)
				}
			case c.has != nil:
				for i := range bx {
					x := &bx[i]
					switch {
					case !c.has(x):
						nulls[i] |= f.nullBit[col]
					case c.str != nil:
						f.codes[col][row+i] = dicts[col].intern(c.str(x))
					case c.i64 != nil:
						f.ints[col][row+i] = c.i64(x)
					default:
						f.floats[col][row+i] = c.f64(x)
					}
				}
			case c.str != nil:
				v, d := f.codes[col][row:], &dicts[col]
				for i := range bx {
					v[i] = d.intern(c.str(&bx[i]))
				}
			case c.i64 != nil:
				v := f.ints[col][row:]
				for i := range bx {
					v[i] = c.i64(&bx[i])
				}
			case c.f64 != nil:
				v := f.floats[col][row:]
				for i := range bx {
					v[i] = c.f64(&bx[i])
				}
			}
		}
	}
}

// finish completes column col of the chunk (from row base of a's new
// rows), in row order: its codes mapped to the column's dictionary, its
// nulls set.
func (f *rowFiller) finish(col, base int) {
	bit := f.nullBit[col]
	n := f.bounds[len(f.bounds)-1]
	if f.codes[col] != nil { // a string column
		codes := f.codes[col][base:]
		var remap []int32
		for k := range len(f.bounds) - 1 {
			d := &f.dicts[k][col]
			remap = slices.Grow(remap[:0], len(d.vals))[:len(d.vals)]
			for i := range remap {
				remap[i] = -1
			}
			for i := f.bounds[k]; i < f.bounds[k+1]; i++ {
				if f.nulls[i]&bit != 0 {
					continue // null: code 0, as SetNull leaves it
				}
				g := remap[codes[i]]
				if g < 0 {
					g = f.a.Intern(col, d.vals[codes[i]])
					remap[codes[i]] = g
				}
				codes[i] = g
			}
			d.reset()
		}
	}
	if bit != 0 {
		for i, m := range f.nulls[:n] {
			if m&bit != 0 {
				f.a.SetNull(col, base+i)
			}
		}
	}
}

// instanceCols locates the phase_instances columns of a table by name, so
// datasets with partition keys in any position, or extra columns, load.
type instanceCols struct {
	at []int // per instanceColumns entry: column index in the table, -1 when absent
	// last is the unit of the last row read: rows come in runs of one
	// unit, so its label is parsed once per run.
	last struct {
		label, file, arm string
		block            int
		unit             phases.UnitID
		ok               bool
	}
}

// setUnit is setUnit through the cache of the last row's unit.
func (c *instanceCols) setUnit(x *phases.Instance, label string) {
	l := &c.last
	if l.ok && l.label == label && l.file == x.File && l.arm == x.Arm && l.block == x.Block {
		x.Unit = l.unit
		return
	}
	setUnit(x, label)
	l.label, l.file, l.arm, l.block, l.unit, l.ok = label, x.File, x.Arm, x.Block, x.Unit, true
}

func locateColumns(t *export.Table) (*instanceCols, error) {
	c := &instanceCols{at: make([]int, len(instanceColumns()))}
	for k, ic := range instanceColumns() {
		i := t.ColumnIndex(ic.Name)
		if i < 0 && ic.formerName != "" {
			i = t.ColumnIndex(ic.formerName)
		}
		if i >= 0 && t.Column(i).Type != ic.Type {
			if ic.optional {
				i = -1
			} else {
				return nil, fmt.Errorf("phase_instances column %s is %v, want %v", ic.Name, t.Column(i).Type, ic.Type)
			}
		}
		if i < 0 && !ic.optional {
			return nil, fmt.Errorf("phase_instances has no column %s", ic.Name)
		}
		c.at[k] = i
	}
	return c, nil
}

// instanceAt converts one row; a null in a required column is an error.
func (c *instanceCols) instanceAt(t *export.Table, r int) (phases.Instance, error) {
	var x phases.Instance
	err := c.readInstance(t, r, &x)
	return x, err
}

// readInstance is instanceAt into x (a million rows reuse one instance,
// not one each on the heap).
func (c *instanceCols) readInstance(t *export.Table, r int, x *phases.Instance) error {
	*x = phases.Instance{}
	cols := instanceColumns()
	for k := range cols {
		ic := &cols[k] // not a copy of the column per cell
		col := c.at[k]
		if col < 0 {
			if ic.isMetric {
				x.Null |= 1 << uint(ic.metric)
			}
			continue
		}
		var ok bool
		switch {
		case ic.str != nil:
			var v string
			if v, ok = t.String(r, col); ok {
				if ic.unitLabel {
					c.setUnit(x, v)
				} else {
					ic.setStr(x, v)
				}
			}
		case ic.Type == export.TypeBool:
			var v bool
			if v, ok = t.Bool(r, col); ok {
				ic.setI64(x, b2i(v))
			}
		case ic.isMetric: // most columns: no setter call
			var v int64
			if v, ok = t.Int64(r, col); ok {
				x.M[ic.metric] = v
			} else {
				x.Null |= 1 << uint(ic.metric)
			}
		case ic.i64 != nil:
			var v int64
			if v, ok = t.Int64(r, col); ok {
				ic.setI64(x, v)
			}
		case ic.f64 != nil:
			var v float64
			if v, ok = t.Float64(r, col); ok {
				ic.setF64(x, v)
			}
		}
		if !ok && !ic.Nullable && !ic.nullOK {
			return fmt.Errorf("phase_instances row %d: null %s", r, ic.Name)
		}
	}
	return nil
}
