package phases

import (
	"encoding/binary"
	"iter"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// Store is the compact form of a list of instances: what the engine writes
// and the analysis reads. An Instance is 624 bytes holding six strings; in
// a Store it is a 56-byte pointer-free key (range, null mask, interned ids
// of its block, thread, phase and step label, step, depth, flags) and its
// non-zero measurements as zigzag varints in a byte segment (~52 bytes on
// large_interleaved, wall, cpu_other and sync_no_gpu stored as differences
// from what the rest makes them). The few distinct strings, threads and
// blocks are interned once per Store. The collector scans none of it but
// the small intern tables; the 10× export's 480,000 instances take ~52 MB
// instead of ~300 MB.
//
// Instances are read back with At or Get (a decoded copy) or field by
// field (Start, Phase, Metric, …); Append and Set write them. The nullable
// fields are kept only with their flags (QueueMeanNs with HasQueue,
// PhaseGapNs and UnattrKerNs with HasStepOnly, GPUStart with
// HasGPUStart), as the engine writes them.
type Store struct {
	keys []instKey
	*storeTables
	// view, when not nil, is the store whose instances view.lo… these are
	// (see View): their keys and tables are that store's.
	view *Store
	lo   int
}

// storeTables are what a store and its views share: the measurement
// segments and the intern tables, all append-only (a segment's bytes
// never change once written).
type storeTables struct {
	segs [][]byte // measurement blobs; a key points into one of them

	mu     sync.Mutex // guards the intern tables while instances are written concurrently
	strs   []string
	strIdx map[string]uint32
	thrs   []thrKey
	thrIdx map[thrKey]uint32
	blks   []blkKey
	blkIdx map[blkKey]uint32
}

// instKey is one instance without its measurements.
type instKey struct {
	start, end int64
	null       uint64
	blk, thr   uint32 // blks, thrs
	phase      uint32 // strs
	label      uint32 // strs: the step label
	step       int32
	seg, off   uint32 // measurements: segs[seg][off:]; seg 0 is "none" (all zero)
	rank       int32  // with flagRank: the rank of the instance's process in a distributed job
	depth      int16
	flags      uint8
}

const (
	flagStep = 1 << iota
	flagWarmup
	flagOtherThread
	flagQueue    // HasQueue
	flagStepOnly // HasStepOnly
	flagRank     // HasRank
	flagGPUStart // HasGPUStart
)

// thrKey is an interned (pid, tid, thread name).
type thrKey struct {
	pid, tid int64
	name     uint32
}

// blkKey is an interned block: what every instance of one arm block (or
// process unit) of one file shares.
type blkKey struct {
	file, arm  uint32
	block      int
	blockStart int64
	unit       UnitID
}

// NewStore returns an empty store.
func NewStore() *Store {
	t := &storeTables{strIdx: map[string]uint32{"": 0}, strs: []string{""}, thrIdx: map[thrKey]uint32{}, blkIdx: map[blkKey]uint32{}}
	t.segs = [][]byte{nil} // seg 0: no measurements
	return &Store{storeTables: t}
}

// View is instances lo…hi−1 of s as a store of their own, sharing s's
// keys and tables (no copy): what is set through either is seen by both.
// Take views of a store that no longer grows (an append that reallocates
// s's keys leaves its views on the former ones); appending to a view
// gives it keys of its own.
func (s *Store) View(lo, hi int) *Store {
	return &Store{keys: s.keys[lo:hi:hi], storeTables: s.storeTables, view: s, lo: lo}
}

// Tiled returns the store that ss are, in order, views tiling (every
// instance of it once, as View makes them), or nil when they are not.
// Merging such stores is that store, with nothing to copy.
func Tiled(ss []*Store) *Store {
	if len(ss) == 0 || ss[0].view == nil {
		return nil
	}
	base, at := ss[0].view, 0
	for _, s := range ss {
		if s.view != base || s.lo != at || len(s.keys) > 0 && &s.keys[0] != &base.keys[at] {
			return nil
		}
		at += len(s.keys)
	}
	if at != len(base.keys) {
		return nil
	}
	return base
}

// Len is the number of instances.
func (s *Store) Len() int {
	if s == nil {
		return 0
	}
	return len(s.keys)
}

func (s *Store) str(v string) uint32 {
	if id, ok := s.strIdx[v]; ok {
		return id
	}
	id := uint32(len(s.strs))
	s.strs = append(s.strs, v)
	s.strIdx[v] = id
	return id
}

func (s *Store) thr(pid, tid int64, name string) uint32 {
	k := thrKey{pid, tid, s.str(name)}
	if id, ok := s.thrIdx[k]; ok {
		return id
	}
	id := uint32(len(s.thrs))
	s.thrs = append(s.thrs, k)
	s.thrIdx[k] = id
	return id
}

func (s *Store) blk(file, arm string, block int, blockStart int64, unit UnitID) uint32 {
	k := blkKey{s.str(file), s.str(arm), block, blockStart, unit}
	if id, ok := s.blkIdx[k]; ok {
		return id
	}
	id := uint32(len(s.blks))
	s.blks = append(s.blks, k)
	s.blkIdx[k] = id
	return id
}

// setKey writes x's key fields into k (interning under the lock); the
// measurements are left to setMetrics.
func (s *Store) setKey(k *instKey, x *Instance) {
	s.mu.Lock()
	blk := s.blk(x.File, x.Arm, x.Block, x.BlockStart, x.Unit)
	thr := s.thr(x.Pid, x.Tid, x.Thread)
	phase, label := s.str(x.Phase), s.str(x.StepLabel)
	s.mu.Unlock()
	*k = keyOf(x, blk, thr, phase, label)
}

// keyOf is x's key given its interned ids (measurements left to setMetrics).
func keyOf(x *Instance, blk, thr, phase, label uint32) instKey {
	var f uint8
	for _, b := range [...]struct {
		on   bool
		flag uint8
	}{{x.IsStep, flagStep}, {x.Warmup, flagWarmup}, {x.OtherThread, flagOtherThread}, {x.HasRank, flagRank}} {
		if b.on {
			f |= b.flag
		}
	}
	return instKey{start: x.Start, end: x.End, null: x.Null, blk: blk, thr: thr, phase: phase, label: label,
		step: int32(x.Step), rank: int32(x.Rank), depth: int16(x.Depth), flags: f}
}

// Three metrics are stored as their difference from what the others make
// them in nearly every instance (zero, so not stored at all): wall from
// end − start, cpu_other from wall minus the API parts, sync_no_gpu from
// sync minus its GPU parts. The encoding is lossless whatever the values.
func wallGuess(k *instKey) int64 { return k.end - k.start }

func cpuOtherGuess(m *[MaxMetrics]int64) int64 {
	return m[Wall] - m[Launch] - m[SyncAPI] - m[MemcpyAPI] - m[Alloc] - m[OtherAPI]
}

func syncNoGPUGuess(m *[MaxMetrics]int64) int64 {
	return m[SyncAPI] - m[SyncOwnGPU] - m[SyncOtherGPU]
}

// appendMetrics appends x's measurements to b and returns it, setting the
// key's measurement flags (k.start and k.end must be x's).
func appendMetrics(b []byte, k *instKey, x *Instance) []byte {
	m := x.M
	m[Wall] -= wallGuess(k)
	m[CPUOther] -= cpuOtherGuess(&x.M)
	m[SyncNoGPU] -= syncNoGPUGuess(&x.M)
	var mask uint64
	for j, v := range m {
		if v != 0 {
			mask |= 1 << uint(j)
		}
	}
	k.flags &^= flagQueue | flagStepOnly | flagGPUStart
	b = binary.AppendUvarint(b, mask)
	if x.HasQueue {
		k.flags |= flagQueue
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.QueueMeanNs))
	}
	if x.HasStepOnly {
		k.flags |= flagStepOnly
		b = binary.AppendVarint(b, x.PhaseGapNs)
		b = binary.AppendVarint(b, x.UnattrKerNs)
	}
	if x.HasGPUStart {
		k.flags |= flagGPUStart
		b = binary.AppendVarint(b, x.GPUStart-k.start)
	}
	for mask != 0 {
		j := bits.TrailingZeros64(mask)
		mask &= mask - 1
		b = binary.AppendVarint(b, m[j])
	}
	return b
}

// decodeMetrics decodes the measurements of k into m (zeroed first) and,
// when x is not nil, its nullable measurements into x.
func (s *Store) decodeMetrics(k *instKey, m *[MaxMetrics]int64, x *Instance) {
	*m = [MaxMetrics]int64{}
	if k.seg == 0 { // not measured (yet)
		return
	}
	{
		b := s.segs[k.seg][k.off:]
		mask, n := binary.Uvarint(b)
		b = b[n:]
		if k.flags&flagQueue != 0 {
			if x != nil {
				x.HasQueue = true
				x.QueueMeanNs = math.Float64frombits(binary.LittleEndian.Uint64(b))
			}
			b = b[8:]
		}
		if k.flags&flagStepOnly != 0 {
			gap, n := binary.Varint(b)
			b = b[n:]
			unattr, n := binary.Varint(b)
			b = b[n:]
			if x != nil {
				x.HasStepOnly, x.PhaseGapNs, x.UnattrKerNs = true, gap, unattr
			}
		}
		if k.flags&flagGPUStart != 0 {
			d, n := binary.Varint(b)
			b = b[n:]
			if x != nil {
				x.HasGPUStart, x.GPUStart = true, k.start+d
			}
		}
		for mask != 0 {
			j := bits.TrailingZeros64(mask)
			mask &= mask - 1
			m[j], n = binary.Varint(b)
			b = b[n:]
		}
	}
	m[Wall] += wallGuess(k)
	m[CPUOther] += cpuOtherGuess(m)
	m[SyncNoGPU] += syncNoGPUGuess(m)
}

// readMetrics decodes the measurements of k into x.
func (s *Store) readMetrics(k *instKey, x *Instance) { s.decodeMetrics(k, &x.M, x) }

// Append adds x at the end.
func (s *Store) Append(x *Instance) {
	s.keys = append(s.keys, instKey{})
	s.Set(len(s.keys)-1, x)
}

// Set replaces instance i with x. Its former measurements stay in their
// segment (Set is for the few edits after the engine, not for bulk writes).
func (s *Store) Set(i int, x *Instance) {
	k := &s.keys[i]
	s.setKey(k, x)
	last := len(s.segs) - 1
	if last == 0 || len(s.segs[last]) > 1<<20 {
		s.segs = append(s.segs, make([]byte, 0, 4096))
		last++
	}
	k.seg, k.off = uint32(last), uint32(len(s.segs[last]))
	s.segs[last] = appendMetrics(s.segs[last], k, x)
}

// Get decodes instance i into x.
func (s *Store) Get(i int, x *Instance) {
	k := &s.keys[i]
	b := &s.blks[k.blk]
	t := &s.thrs[k.thr]
	*x = Instance{File: s.strs[b.file], Pid: t.pid, Tid: t.tid, Thread: s.strs[t.name], Arm: s.strs[b.arm], Block: b.block,
		BlockStart: b.blockStart, Unit: b.unit, Step: int(k.step), StepLabel: s.strs[k.label], Phase: s.strs[k.phase],
		IsStep: k.flags&flagStep != 0, Depth: int(k.depth), Start: k.start, End: k.end, Warmup: k.flags&flagWarmup != 0,
		OtherThread: k.flags&flagOtherThread != 0, Null: k.null, Rank: int(k.rank), HasRank: k.flags&flagRank != 0}
	s.readMetrics(k, x)
}

// At returns a decoded copy of instance i.
func (s *Store) At(i int) Instance {
	var x Instance
	s.Get(i, &x)
	return x
}

// Each yields every instance in order, decoded into one reused Instance
// (copy it to keep it): `for i, x := range st.Each()` replaces a loop over
// Result.Instances.
func (s *Store) Each() iter.Seq2[int, *Instance] {
	return func(yield func(int, *Instance) bool) {
		var x Instance
		for i := range s.Len() {
			s.Get(i, &x)
			if !yield(i, &x) {
				return
			}
		}
	}
}

// All decodes every instance (the whole list: as much memory as before the
// store; for callers that want a slice).
func (s *Store) All() []Instance {
	if s.Len() == 0 {
		return nil
	}
	out := make([]Instance, s.Len())
	for i := range out {
		s.Get(i, &out[i])
	}
	return out
}

// StoreOf builds a store from a list of instances.
func StoreOf(xs []Instance) *Store {
	s := NewStore()
	s.keys = make([]instKey, 0, len(xs))
	for i := range xs {
		s.Append(&xs[i])
	}
	return s
}

// Metrics decodes the measurements of instance i into m and returns its
// null mask.
func (s *Store) Metrics(i int, m *[MaxMetrics]int64) uint64 {
	k := &s.keys[i]
	s.decodeMetrics(k, m, nil)
	return k.null
}

// Metric is metric m of instance i, decoding the measurements only up to
// m's (cpu_other and sync_no_gpu, stored as differences from what the
// others make them, decode them all).
func (s *Store) Metric(i int, m Metric) int64 {
	k := &s.keys[i]
	if m == CPUOther || m == SyncNoGPU || k.seg == 0 {
		var all [MaxMetrics]int64
		s.decodeMetrics(k, &all, nil)
		return all[m]
	}
	b := s.segs[k.seg][k.off:]
	mask, n := binary.Uvarint(b)
	b = b[n:]
	if k.flags&flagQueue != 0 {
		b = b[8:]
	}
	if k.flags&flagStepOnly != 0 {
		_, n = binary.Varint(b)
		b = b[n:]
		_, n = binary.Varint(b)
		b = b[n:]
	}
	if k.flags&flagGPUStart != 0 {
		_, n = binary.Varint(b)
		b = b[n:]
	}
	var v int64
	if mask&(1<<uint(m)) != 0 {
		for before := mask & (1<<uint(m) - 1); before != 0; before &= before - 1 {
			_, n = binary.Varint(b)
			b = b[n:]
		}
		v, _ = binary.Varint(b)
	}
	if m == Wall {
		v += wallGuess(k)
	}
	return v
}

// GPUWindow is instance i's GPU window: its first GPU op's start to its
// last one's end (the vendor's projection); ok false without GPU ops.
func (s *Store) GPUWindow(i int) (start, end int64, ok bool) {
	k := &s.keys[i]
	if k.flags&flagGPUStart == 0 {
		return 0, 0, false
	}
	var x Instance
	s.decodeMetrics(k, &x.M, &x)
	return x.GPUStart, x.GPUStart + x.M[Proj], true
}

// Key fields of instance i, without decoding the rest.

func (s *Store) IsStep(i int) bool      { return s.keys[i].flags&flagStep != 0 }
func (s *Store) Warmup(i int) bool      { return s.keys[i].flags&flagWarmup != 0 }
func (s *Store) OtherThread(i int) bool { return s.keys[i].flags&flagOtherThread != 0 }
func (s *Store) Phase(i int) string     { return s.strs[s.keys[i].phase] }

// DistinctPhases counts the distinct phase names of the instances (the
// step's name included), without decoding them.
func (s *Store) DistinctPhases() int {
	seen := make([]bool, len(s.strs))
	n := 0
	for i := range s.keys {
		if p := s.keys[i].phase; !seen[p] {
			seen[p] = true
			n++
		}
	}
	return n
}

// StepsAndPhases counts the step instances and lists the other instances'
// phase names in order of first appearance, without a map lookup per
// instance.
func (s *Store) StepsAndPhases() (steps int, phases []string) {
	seen := make([]bool, len(s.strs))
	for i := range s.keys {
		k := &s.keys[i]
		if k.flags&flagStep != 0 {
			steps++
			continue
		}
		if !seen[k.phase] {
			seen[k.phase] = true
			phases = append(phases, s.strs[k.phase])
		}
	}
	return steps, phases
}

// ArmStarts maps each arm of the instances to the earliest start of its
// blocks that hold instances.
func (s *Store) ArmStarts() map[string]int64 {
	used := make([]bool, len(s.blks))
	for i := range s.keys {
		used[s.keys[i].blk] = true
	}
	first := map[string]int64{}
	for b, ok := range used {
		if !ok {
			continue
		}
		arm, bs := s.strs[s.blks[b].arm], s.blks[b].blockStart
		if v, seen := first[arm]; !seen || bs < v {
			first[arm] = bs
		}
	}
	return first
}

// BlockOf is the index of instance i's block: Arm, File, Unit and
// BlockStart are functions of it, so a pass over the instances may skip
// those of the block it just saw.
func (s *Store) BlockOf(i int) int { return int(s.keys[i].blk) }

func (s *Store) Start(i int) int64      { return s.keys[i].start }
func (s *Store) End(i int) int64        { return s.keys[i].end }
func (s *Store) Step(i int) int         { return int(s.keys[i].step) }
func (s *Store) Depth(i int) int        { return int(s.keys[i].depth) }
func (s *Store) Null(i int) uint64      { return s.keys[i].null }
func (s *Store) Unit(i int) UnitID      { return s.blks[s.keys[i].blk].unit }
func (s *Store) Arm(i int) string       { return s.strs[s.blks[s.keys[i].blk].arm] }
func (s *Store) File(i int) string      { return s.strs[s.blks[s.keys[i].blk].file] }
func (s *Store) BlockStart(i int) int64 { return s.blks[s.keys[i].blk].blockStart }
func (s *Store) Block(i int) int        { return s.blks[s.keys[i].blk].block }
func (s *Store) Pid(i int) int64        { return s.thrs[s.keys[i].thr].pid }
func (s *Store) Tid(i int) int64        { return s.thrs[s.keys[i].thr].tid }
func (s *Store) Thread(i int) string    { return s.strs[s.thrs[s.keys[i].thr].name] }
func (s *Store) StepLabel(i int) string { return s.strs[s.keys[i].label] }

// Rank is instance i's rank; ok is false outside a multi-rank analysis.
func (s *Store) Rank(i int) (rank int, ok bool) {
	return int(s.keys[i].rank), s.keys[i].flags&flagRank != 0
}

// SetRank sets instance i's rank.
func (s *Store) SetRank(i, rank int) {
	s.keys[i].rank = int32(rank)
	s.keys[i].flags |= flagRank
}

// SetPhase renames instance i's phase.
func (s *Store) SetPhase(i int, phase string) {
	s.mu.Lock()
	s.keys[i].phase = s.str(phase)
	s.mu.Unlock()
}

func (s *Store) SetWarmup(i int, w bool) {
	if w {
		s.keys[i].flags |= flagWarmup
	} else {
		s.keys[i].flags &^= flagWarmup
	}
}

// SetFile relabels every instance's file, its unit's included.
func (s *Store) SetFile(file string) {
	id := s.str(file)
	for b := range s.blks {
		s.blks[b].file = id
		s.blks[b].unit.File = file
	}
	s.blkIdx = map[blkKey]uint32{}
	for b, k := range s.blks {
		s.blkIdx[k] = uint32(b)
	}
}

// SetArm relabels every instance's arm (not its unit).
func (s *Store) SetArm(arm string) {
	id := s.str(arm)
	for b := range s.blks {
		s.blks[b].arm = id
	}
	s.blkIdx = map[blkKey]uint32{}
	for b, k := range s.blks {
		s.blkIdx[k] = uint32(b)
	}
}

// Reorder puts the instances in order: instance i becomes the former
// instance order[i] (order is a permutation of 0…Len−1). Only keys move.
func (s *Store) Reorder(order []int32) {
	keys := make([]instKey, len(order))
	for i, j := range order {
		keys[i] = s.keys[j]
	}
	s.keys = keys
}

// SetBlockStarts sets every block's start to start(its unit).
func (s *Store) SetBlockStarts(start func(UnitID) int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for b := range s.blks {
		s.blks[b].blockStart = start(s.blks[b].unit)
	}
	clear(s.blkIdx)
	for b, k := range s.blks {
		s.blkIdx[k] = uint32(b)
	}
}

// Cap is the number of instances the store holds without growing.
func (s *Store) Cap() int { return cap(s.keys) }

// Grow makes room for n more instances' keys, so that appending many
// stores (a thousand ranks) copies the keys once, not at every growth.
func (s *Store) Grow(n int) { s.keys = slices.Grow(s.keys, n) }

// AppendStore adds o's instances at the end: their keys with o's intern
// ids translated to s's, their measurements by sharing o's segments (no
// decoding; a segment with much spare room is copied to its length, as
// s keeps it to the end).
func (s *Store) AppendStore(o *Store) {
	if o.Len() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.storeTables == o.storeTables { // a view of s, or s itself: the same ids
		s.keys = append(s.keys, o.keys...)
		return
	}
	str := make([]uint32, len(o.strs))
	for i, v := range o.strs {
		str[i] = s.str(v)
	}
	thr := make([]uint32, len(o.thrs))
	for i, t := range o.thrs {
		thr[i] = s.thr(t.pid, t.tid, o.strs[t.name])
	}
	blk := make([]uint32, len(o.blks))
	for i, b := range o.blks {
		blk[i] = s.blk(o.strs[b.file], o.strs[b.arm], b.block, b.blockStart, b.unit)
	}
	seg := make([]uint32, len(o.segs))
	for i, b := range o.segs[1:] {
		if cap(b)-len(b) > len(b)/8 {
			b = append([]byte(nil), b...)
		}
		b = slices.Clip(b) // s's appends to it reallocate, never writing where o's do
		seg[i+1] = uint32(len(s.segs))
		s.segs = append(s.segs, b)
	}
	at := len(s.keys)
	s.keys = append(s.keys, o.keys...)
	for i := range s.keys[at:] {
		k := &s.keys[at+i]
		k.blk, k.thr, k.phase, k.label, k.seg = blk[k.blk], thr[k.thr], str[k.phase], str[k.label], seg[k.seg]
	}
}

// Bytes is the store's size: keys and measurement segments.
func (s *Store) Bytes() int {
	n := cap(s.keys) * 56
	for _, b := range s.segs {
		n += cap(b)
	}
	return n
}

// getKey decodes instance i without its measurements into x.
func (s *Store) getKey(i int, x *Instance) {
	k := &s.keys[i]
	b := &s.blks[k.blk]
	t := &s.thrs[k.thr]
	*x = Instance{File: s.strs[b.file], Pid: t.pid, Tid: t.tid, Thread: s.strs[t.name], Arm: s.strs[b.arm], Block: b.block,
		BlockStart: b.blockStart, Unit: b.unit, Step: int(k.step), StepLabel: s.strs[k.label], Phase: s.strs[k.phase],
		IsStep: k.flags&flagStep != 0, Depth: int(k.depth), Start: k.start, End: k.end, Warmup: k.flags&flagWarmup != 0,
		OtherThread: k.flags&flagOtherThread != 0, Null: k.null}
}

// setMetrics stores the measurements (and null masks) of xs, instances
// base.. of s, in a segment of their own.
func (s *Store) setMetrics(xs []Instance, base int) {
	b := make([]byte, 0, len(xs)*64)
	for i := range xs {
		x := &xs[i]
		k := &s.keys[base+i]
		k.null = x.Null
		k.off = uint32(len(b))
		b = appendMetrics(b, k, x)
	}
	if cap(b)-len(b) > len(b)/8 {
		b = append([]byte(nil), b...) // the segment is kept to the end: no spare capacity
	}
	s.mu.Lock()
	seg := uint32(len(s.segs))
	s.segs = append(s.segs, b)
	s.mu.Unlock()
	for i := range xs {
		s.keys[base+i].seg = seg
	}
}

// addNull adds null to every instance's null mask.
func (s *Store) addNull(null uint64) {
	if null == 0 {
		return
	}
	for i := range s.keys {
		s.keys[i].null |= null
	}
}

// dropMetrics forgets every measurement (the engine starts over).
func (s *Store) dropMetrics() {
	clear(s.segs[1:])
	s.segs = s.segs[:1]
	for i := range s.keys {
		s.keys[i].seg, s.keys[i].off = 0, 0
		s.keys[i].flags &^= flagQueue | flagStepOnly
	}
}

// keyWriter writes keys from one goroutine, interning through small
// caches so that the store's lock is taken once per new block, thread or
// name, not once per instance.
type keyWriter struct {
	s       *Store
	strs    map[string]uint32
	lastBlk blkArgs
	blkID   uint32
	hasBlk  bool
	thrs    map[thrArgs]uint32
}

type blkArgs struct {
	file, arm  string
	block      int
	blockStart int64
	unit       UnitID
}

type thrArgs struct {
	pid, tid int64
	name     string
}

func (s *Store) keyWriter() *keyWriter {
	return &keyWriter{s: s, strs: map[string]uint32{}, thrs: map[thrArgs]uint32{}}
}

func (w *keyWriter) str(v string) uint32 {
	if v == "" {
		return 0
	}
	if id, ok := w.strs[v]; ok {
		return id
	}
	w.s.mu.Lock()
	id := w.s.str(v)
	w.s.mu.Unlock()
	w.strs[v] = id
	return id
}

// write writes x's key (not its measurements) to instance i.
func (w *keyWriter) write(i int, x *Instance) {
	ba := blkArgs{x.File, x.Arm, x.Block, x.BlockStart, x.Unit}
	if !w.hasBlk || ba != w.lastBlk {
		w.s.mu.Lock()
		w.blkID = w.s.blk(x.File, x.Arm, x.Block, x.BlockStart, x.Unit)
		w.s.mu.Unlock()
		w.lastBlk, w.hasBlk = ba, true
	}
	ta := thrArgs{x.Pid, x.Tid, x.Thread}
	thr, ok := w.thrs[ta]
	if !ok {
		w.s.mu.Lock()
		thr = w.s.thr(x.Pid, x.Tid, x.Thread)
		w.s.mu.Unlock()
		w.thrs[ta] = thr
	}
	w.s.keys[i] = keyOf(x, w.blkID, thr, w.str(x.Phase), w.str(x.StepLabel))
}

// RenameArms gives the blocks of every arm for which rename says so a new
// arm (analysis folds the arms beyond its budget into one).
func (s *Store) RenameArms(rename func(arm string) (string, bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range s.blks {
		to, ok := rename(s.strs[k.arm])
		if !ok {
			continue
		}
		delete(s.blkIdx, k)
		k.arm = s.str(to)
		s.blks[i] = k
		s.blkIdx[k] = uint32(i)
	}
}
