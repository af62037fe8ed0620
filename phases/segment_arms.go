package phases

import (
	"cmp"
	"regexp"
	"slices"
	"sort"
	"strconv"

	"github.com/nsysphase/nsysphase/nsys"
)

// Arms: the arm a range names (the arm pattern), the arm blocks a
// thread's ranges form, and the order and labels of the arms.

// DefaultArmPattern recognises arm block ranges: "arm=<name> block=<i>".
const DefaultArmPattern = `^arm=(\S+)(?:\s+block=(\d+))?`

var defaultArmRe = regexp.MustCompile(DefaultArmPattern)

func defaultArmPattern() *regexp.Regexp { return defaultArmRe }

// armMatch is an arm pattern's match of a range name.
type armMatch struct {
	ok    bool
	arm   string
	block int // from block=<i>; -1 when absent
}

// armOf matches the arm pattern against the name, then the text (an arm
// range inside a named domain).
func (n *rangeName) armOf(pat *regexp.Regexp) *armMatch {
	if n.armPat == pat {
		return &n.arm
	}
	n.armPat, n.arm = pat, armMatch{}
	m := pat.FindStringSubmatch(n.name)
	if m == nil {
		m = pat.FindStringSubmatch(n.text)
	}
	if m == nil {
		return &n.arm
	}
	n.arm = armMatch{ok: true, arm: m[0], block: -1}
	if len(m) > 1 && m[1] != "" {
		n.arm.arm = m[1]
	}
	if len(m) > 2 && m[2] != "" {
		if b, err := strconv.Atoi(m[2]); err == nil {
			n.arm.block = b
		}
	}
	return &n.arm
}

// armBlock is one arm range.
type armBlock struct {
	arm        string
	block      int // from block=<i>; -1 when absent
	start, end int64
	pid        int64
}

// inArmBlocks ends the rule of a step chosen inside arm blocks.
const inArmBlocks = " in arm blocks"

func findArmBlocks(threads []*threadRanges, pat *regexp.Regexp) []armBlock {
	var out []armBlock
	for _, t := range threads {
		for i := range t.ranges {
			r := &t.ranges[i]
			if m := r.nm.armOf(pat); m.ok {
				out = append(out, armBlock{arm: m.arm, block: m.block, start: r.start, end: r.end, pid: nsys.Pid(r.gtid)})
			}
		}
	}
	slices.SortFunc(out, func(a, b armBlock) int { return cmp.Compare(a.start, b.start) })
	return out
}

// inArmBlock returns the index of the arm block of process pid that contains
// [start, end], or -1.
func inArmBlock(blocks []armBlock, pid, start, end int64) int {
	for i := range blocks {
		b := &blocks[i]
		if b.pid == pid && start >= b.start && end <= b.end {
			return i
		}
	}
	return -1
}

// armBlockIndices is each arm block's index: block=<i> when given, else
// its order within the arm.
func armBlockIndices(blocks []armBlock) []int {
	blockIdx := make([]int, len(blocks))
	seenPerArm := map[string]int{}
	for i, b := range blocks {
		if b.block >= 0 {
			blockIdx[i] = b.block
		} else {
			blockIdx[i] = seenPerArm[b.arm]
		}
		seenPerArm[b.arm]++
	}
	return blockIdx
}

// SingleArm names the one arm of an export without arm blocks or file
// arms: a name, never blank (a blank arm reads as a missing value in CSV
// and pandas, and leaves holes in sentences).
const SingleArm = "all"

// joinArm labels an arm from its file-level and NVTX parts.
func joinArm(fileArm, nvtxArm string) string {
	switch {
	case fileArm != "" && nvtxArm != "":
		return fileArm + "/" + nvtxArm
	case fileArm != "":
		return fileArm
	case nvtxArm == "":
		return SingleArm
	}
	return nvtxArm
}

// armOrder lists arms by the start of their first block.
func armOrder(st *Store) []string {
	first := st.ArmStarts()
	arms := make([]string, 0, len(first))
	for a := range first {
		arms = append(arms, a)
	}
	sort.Slice(arms, func(i, j int) bool {
		if first[arms[i]] != first[arms[j]] {
			return first[arms[i]] < first[arms[j]]
		}
		return arms[i] < arms[j]
	})
	return arms
}
