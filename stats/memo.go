package stats

import "sync"

// A plan's B count rows hold few distinct values per group (each row is n
// draws over n groups), so the running sums Σ_g c_g·x_g that every
// replicate computes repeat the same prefixes over and over: with 8 rounds
// and B = 9999 the rows have about 450 distinct prefixes over the even
// groups, against 40,000 multiply-adds to redo them per metric. A chainTrie
// computes each distinct prefix once per metric, with exactly the operations
// (same order, same rounding) that the per-row loop would do, so replicates
// stay bit-identical.

// chainTrie memoizes the left-to-right sums
// v = ((0 + c_{g₁}·x_{g₁}) + c_{g₂}·x_{g₂}) + … over the chain of groups g₁,
// g₂, … for every count row of one plan side. Node 0 is the empty prefix;
// every other node extends its parent by one group's count, and parents come
// before their children. The trie covers chain[:depth]; a row adds the
// groups in chain[depth:] itself.
type chainTrie struct {
	chain  []int
	depth  int
	parent []int32   // node → node of the prefix one group shorter
	coef   []float64 // node → the count of its last group
	group  []int32   // node → its last group
	leaf   []int32   // row → its node at depth
}

// newChainTrie builds the trie over the rows of counts (cols per row, no
// count above maxCount). It adds groups of the chain while the new level
// has at most maxLevel nodes: past that, distinct prefixes are nearly as
// many as rows and summing per row costs no more than evaluating nodes.
func newChainTrie(counts []int32, cols, rows int, maxCount int32, chain []int, maxLevel int) *chainTrie {
	t := &chainTrie{chain: chain, parent: []int32{0}, coef: []float64{0}, group: []int32{0}, leaf: getIndexBuf(rows)}
	clear(t.leaf)
	next := getIndexBuf(rows)
	defer func() { putIndexBuf(next) }() // the leaf array that is not t.leaf
	tableBuf := getIndexBuf(4*rows + 64)
	defer putIndexBuf(tableBuf)
	levelStart, levelNodes := 0, 1 // the nodes of the current deepest level
	width := int(maxCount) + 1     // children per node in the level's lookup table
	for _, g := range chain {
		size := levelNodes * width
		if size > 4*rows+64 {
			break // a sparse level: its lookup table would outgrow the rows
		}
		table := tableBuf[:size]
		clear(table)
		start := len(t.parent)
		leaf, dst := t.leaf[:rows], next[:rows]
		at := g // counts[at] is group g's count in row r
		for r, node := range leaf {
			k := counts[at]
			at += cols
			key := (int(node)-levelStart)*width + int(k)
			child := table[key]
			if child == 0 { // node 0 is never a child
				child = int32(len(t.parent))
				table[key] = child
				t.parent = append(t.parent, node)
				t.coef = append(t.coef, float64(k))
				t.group = append(t.group, int32(g))
			}
			dst[r] = child
		}
		if len(t.parent)-start > maxLevel {
			t.parent, t.coef, t.group = t.parent[:start], t.coef[:start], t.group[:start]
			break
		}
		t.leaf, next = next, leaf
		levelStart, levelNodes = start, len(t.parent)-start
		t.depth++
	}
	return t
}

// release hands the memo's row-sized arrays back to the pools.
func (m *sumMemo) release() {
	putIndexBuf(m.even.leaf)
	putIndexBuf(m.odd.leaf)
	if m.classes != nil {
		putIndexBuf(m.classes.class)
	}
}

// complete reports whether the trie covers the whole chain, so that a row's
// sum is its leaf's value.
func (t *chainTrie) complete() bool { return t.depth == len(t.chain) }

// eval fills vals (len ≥ nodes) with each node's prefix sum of x and
// returns it.
func (t *chainTrie) eval(x []float64, vals []float64) []float64 {
	vals = vals[:len(t.parent)]
	vals[0] = 0
	for n := 1; n < len(vals); n++ {
		vals[n] = vals[t.parent[n]] + t.coef[n]*x[t.group[n]]
	}
	return vals
}

// nodes is the number of trie nodes, the length eval needs.
func (t *chainTrie) nodes() int { return len(t.parent) }

// sumMemo holds the tries of one side's count rows over the even and the
// odd groups: the two accumulator chains of meanReplicates and
// denominators.
type sumMemo struct {
	even, odd *chainTrie
	// classes groups the rows into distinct rows when both tries are
	// complete (a pair of leaves is then a distinct row); nil otherwise.
	// classEven and classOdd are each class's leaves.
	classes             *rowClasses
	classEven, classOdd []int32
}

// rowClasses groups the B count rows of a plan into distinct rows. A
// statistic of the resample is a function of its count row, so it is
// computed once per class, and a CI over the B replicates is a CI over the
// class values weighted by the class sizes.
type rowClasses struct {
	reps   []int32 // class → its first row (classes in order of first row)
	class  []int32 // row → its class
	weight []int32 // class → its number of rows
}

// rows returns the row-level replicates of class values: vals[class[r]]
// for every row r, in a pooled buffer.
func (c *rowClasses) rows(vals []float64) []float64 {
	out := getBuf(len(c.class))
	for r, k := range c.class {
		out[r] = vals[k]
	}
	return out
}

// memoLevel bounds a trie level at half the rows: a level any wider saves
// less than it costs.
func memoLevel(rows int) int { return rows / 2 }

func newSumMemo(counts []int32, groups, rows int) *sumMemo {
	cols := groups + 1
	var even, odd []int
	for g := range groups {
		if g%2 == 0 {
			even = append(even, g)
		} else {
			odd = append(odd, g)
		}
	}
	maxCount := int32(groups) // a row draws groups indices
	m := &sumMemo{
		even: newChainTrie(counts, cols, rows, maxCount, even, memoLevel(rows)),
		odd:  newChainTrie(counts, cols, rows, maxCount, odd, memoLevel(rows)),
	}
	if m.even.complete() && m.odd.complete() {
		m.classes = distinctPairs(m.even.leaf, m.odd.leaf)
		m.classEven = make([]int32, len(m.classes.reps))
		m.classOdd = make([]int32, len(m.classes.reps))
		for k, r := range m.classes.reps {
			m.classEven[k], m.classOdd[k] = m.even.leaf[r], m.odd.leaf[r]
		}
	}
	return m
}

// pairSlot is one entry of distinctPairs' hash table: k = class + 1, 0 =
// empty.
type pairSlot struct{ a, b, k int32 }

// slotPool recycles distinctPairs' tables (one per plan side).
var slotPool sync.Pool // *[]pairSlot

// distinctPairs classes the rows by their pair (a[r], b[r]).
func distinctPairs(a, b []int32) *rowClasses {
	size := 1 // a power of two at least 1.5 × the rows: at most 2/3 full
	for size < len(a)+len(a)/2 {
		size *= 2
	}
	tablePtr, _ := slotPool.Get().(*[]pairSlot)
	if tablePtr == nil || cap(*tablePtr) < size {
		t := make([]pairSlot, size)
		tablePtr = &t
	}
	table := (*tablePtr)[:size]
	clear(table)
	defer slotPool.Put(tablePtr)
	c := &rowClasses{class: getIndexBuf(len(a))}
	for r := range a {
		x, y := a[r], b[r]
		h := (uint64(uint32(x))<<32 | uint64(uint32(y))) * 0x9e3779b97f4a7c15
		i := int(h >> 32 & uint64(size-1))
		for table[i].k != 0 && (table[i].a != x || table[i].b != y) {
			i = (i + 1) & (size - 1)
		}
		if table[i].k == 0 {
			c.reps = append(c.reps, int32(r))
			c.weight = append(c.weight, 0)
			table[i] = pairSlot{x, y, int32(len(c.reps))}
		}
		k := table[i].k - 1
		c.class[r] = k
		c.weight[k]++
	}
	return c
}

// classMeans writes the mean replicate of every class into out (len
// classes): (Σ_even c·num + Σ_odd c·num) / den[k] with den the class
// denominators, or with den nil / (Σ_even c·cnt + Σ_odd c·cnt), exactly as
// parityReplicates computes it for each of the class's rows.
func (m *sumMemo) classMeans(out, num, cnt, den []float64) {
	buf, se, so := m.triePrefixes(num)
	defer putBuf(buf)
	ce, co := m.classEven, m.classOdd[:len(m.classEven)]
	out = out[:len(ce)]
	if den != nil {
		den = den[:len(ce)]
		for k, e := range ce {
			out[k] = (se[e] + so[co[k]]) / den[k]
		}
		return
	}
	cbuf, ne, no := m.triePrefixes(cnt)
	defer putBuf(cbuf)
	for k, e := range ce {
		o := co[k]
		out[k] = (se[e] + so[o]) / (ne[e] + no[o])
	}
}

// chainSums writes Σ_g c_g·x_g of every class's row into out, one chain
// over the groups in order: the numerator or denominator of side.mean.
func (m *sumMemo) chainSums(out []float64, counts []int32, cols int, x []float64) {
	reps := m.classes.reps
	out = out[:len(reps)]
	groups := len(x)
	for k, r := range reps {
		row := counts[int(r)*cols : int(r)*cols+groups]
		var sum float64
		for g, c := range row {
			sum += float64(c) * x[g]
		}
		out[k] = sum
	}
}

// parityReplicates returns, for every row, (Σ_even c·num + Σ_odd c·num) /
// den[r], or with den nil / (Σ_even c·cnt + Σ_odd c·cnt): the two-chain sums
// of meanReplicates, from the tries and the groups past them, into out.
// (With both tries complete, classMeans does this once per class.)
func (m *sumMemo) parityReplicates(out []float64, counts []int32, cols int, num, cnt, den []float64) {
	buf, se, so := m.triePrefixes(num)
	defer putBuf(buf)
	if den != nil {
		m.pairedSums(len(out), counts, cols, num, se, so, func(r int, s0, s1 float64) { out[r] = (s0 + s1) / den[r] })
		return
	}
	cbuf, ne, no := m.triePrefixes(cnt)
	defer putBuf(cbuf)
	le, lo := m.even.leaf, m.odd.leaf
	groups := len(num)
	e0, o0 := m.pastTries()
	for r := range out {
		row := counts[r*cols : r*cols+groups]
		s0, s1, n0, n1 := restSums(row, row, num, cnt, e0, o0, se[le[r]], so[lo[r]], ne[le[r]], no[lo[r]])
		out[r] = (s0 + s1) / (n0 + n1)
	}
}

// paritySums returns Σ_even c·x + Σ_odd c·x of every row into out: the
// shared denominators.
func (m *sumMemo) paritySums(out []float64, counts []int32, cols int, x []float64) {
	buf, se, so := m.triePrefixes(x)
	defer putBuf(buf)
	m.pairedSums(len(out), counts, cols, x, se, so, func(r int, s0, s1 float64) { out[r] = s0 + s1 })
}

// pairedSums calls f with the even and odd sums of x over each of the n
// rows, continuing the tries' prefixes se and so past them, two rows at a
// time (an odd last row is paired with itself).
func (m *sumMemo) pairedSums(n int, counts []int32, cols int, x, se, so []float64, f func(r int, s0, s1 float64)) {
	le, lo := m.even.leaf, m.odd.leaf
	e0, o0 := m.pastTries()
	groups := len(x)
	for r := 0; r < n; r += 2 {
		r1 := min(r+1, n-1)
		a0, a1, b0, b1 := restSums(counts[r*cols:r*cols+groups], counts[r1*cols:r1*cols+groups], x, x,
			e0, o0, se[le[r]], so[lo[r]], se[le[r1]], so[lo[r1]])
		f(r, a0, a1)
		if r1 != r {
			f(r1, b0, b1)
		}
	}
}

// triePrefixes evaluates both tries' prefix sums of x into one pooled
// buffer (hand buf back with putBuf): se for the even chain, so for the odd.
func (m *sumMemo) triePrefixes(x []float64) (buf, se, so []float64) {
	buf = getBuf(2 * max(m.even.nodes(), m.odd.nodes()))
	half := len(buf) / 2
	return buf, m.even.eval(x, buf[:half]), m.odd.eval(x, buf[half:])
}

// pastTries returns the first even and odd groups past the tries.
func (m *sumMemo) pastTries() (e0, o0 int) { return 2 * m.even.depth, 2*m.odd.depth + 1 }

// restSums continues two rows' sums past the tries, over the groups of ra:
// (ra, xa) from a0 (even chain, from group e) and a1 (odd chain, from group
// o), (rb, xb) likewise from b0 and b1, each chain adding c_g·x_g in group
// order, as a per-row two-accumulator loop does. The four chains advance
// together so that their additions overlap (a chain alone waits on each
// addition in turn).
func restSums(ra, rb []int32, xa, xb []float64, e, o int, a0, a1, b0, b1 float64) (float64, float64, float64, float64) {
	n := len(ra)
	rb, xa, xb = rb[:n], xa[:n], xb[:n]
	for e < n && o < n {
		a0 += float64(ra[e]) * xa[e]
		a1 += float64(ra[o]) * xa[o]
		b0 += float64(rb[e]) * xb[e]
		b1 += float64(rb[o]) * xb[o]
		e += 2
		o += 2
	}
	for ; e < n; e += 2 {
		a0 += float64(ra[e]) * xa[e]
		b0 += float64(rb[e]) * xb[e]
	}
	for ; o < n; o += 2 {
		a1 += float64(ra[o]) * xa[o]
		b1 += float64(rb[o]) * xb[o]
	}
	return a0, a1, b0, b1
}
