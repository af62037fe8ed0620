package analysis

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/nsysphase/nsysphase/nsys"
)

// NoFrame is the owner frame of calls without a recorded backtrace.
const NoFrame = "none recorded"

// Frames maps, per input, a CUDA_CALLCHAINS id to the top user frame of
// that backtrace.
type Frames map[string]map[int64]string

// Frame returns the top user frame of callchain id in file, or NoFrame.
func (fr Frames) Frame(file string, id int64) string {
	if id == 0 {
		return NoFrame
	}
	if s, ok := fr[file][id]; ok && s != "" {
		return s
	}
	return NoFrame
}

// ReadCalls reads the inputs like ReadFiles with per-call recording on, and
// resolves the backtraces of the recorded calls when an export holds them.
// nsys has no reader for CUDA_CALLCHAINS yet, so an export with backtraces
// is kept open until its frames are read here, then closed.
func ReadCalls(ctx context.Context, cfg Config) ([]*FileResult, Frames, error) {
	inner := cfg.Open
	if inner == nil {
		inner = OpenInput
	}
	type held struct {
		f     *nsys.File
		close func()
	}
	var (
		mu   sync.Mutex
		kept = map[string]held{}
	)
	closeKept := func() {
		for _, h := range kept {
			h.close()
		}
	}
	// Files with backtraces stay open for the frame pass after ReadFiles,
	// so they are opened with the caller's context, not ReadFiles' group
	// context, which ends when the reading does.
	cfg.Open = func(_ context.Context, path string) (*nsys.File, func(), error) {
		f, closeFn, err := inner(ctx, path)
		if err != nil || !f.HasTable(nsys.TableCallchains) {
			return f, closeFn, err
		}
		mu.Lock()
		kept[path] = held{f: f, close: closeFn}
		mu.Unlock()
		return f, func() {}, nil
	}
	cfg.Segment.Calls = true
	files, err := ReadFiles(ctx, cfg)
	defer closeKept()
	if err != nil {
		return nil, nil, err
	}
	frames := Frames{}
	for _, fr := range files {
		h, ok := kept[fr.Path]
		if !ok {
			continue
		}
		ids := map[int64]bool{}
		for _, c := range fr.Result.Calls {
			if c.Callchain != 0 {
				ids[c.Callchain] = true
			}
		}
		if len(ids) == 0 {
			continue
		}
		m, err := readTopFrames(h.f, ids)
		if err != nil {
			return nil, nil, &nsys.InputError{Path: fr.Path, Problem: "cannot read the CUDA backtraces (" + nsys.TableCallchains + ")", Err: err}
		}
		frames[fr.Path] = m
	}
	return files, frames, nil
}

// frame is one row of CUDA_CALLCHAINS, strings resolved.
type frame struct {
	depth          int64
	symbol, module string
	unresolved     bool
}

// readTopFrames reads the backtraces ids of f in one pass over
// CUDA_CALLCHAINS (the export has no index) and returns the top user frame
// of each.
func readTopFrames(f *nsys.File, ids map[int64]bool) (map[int64]string, error) {
	strs, err := f.Strings()
	if err != nil {
		return nil, err
	}
	byChain := map[int64][]frame{}
	for r, err := range f.Callchains() {
		if err != nil {
			return nil, err
		}
		if !ids[r.ID] {
			continue
		}
		fr := frame{depth: r.Depth, symbol: strs.Name(r.Symbol), unresolved: r.Unresolved}
		if r.Module >= 0 {
			fr.module = strs.Name(r.Module)
		}
		byChain[r.ID] = append(byChain[r.ID], fr)
	}
	out := make(map[int64]string, len(byChain))
	for id, fs := range byChain {
		slices.SortFunc(fs, func(a, b frame) int { return int(a.depth - b.depth) })
		out[id] = topUserFrame(fs)
	}
	return out, nil
}

// runtimeModules are libraries between a program and the GPU: the CUDA
// stack, the C and C++ runtimes, the Python interpreter and PyTorch. A frame
// in none of them is the program's own code.
var runtimeModules = []string{"libcupti", "libcuda.", "libcudart", "libcublas", "libcudnn", "libnccl", "libnvrtc", "libnvtoolsext", "libnvjitlink", "libcufft", "libcurand", "libcusparse", "libcusolver",
	"libc.so", "libc-", "libm.so", "libstdc++", "libgcc_s", "libpthread", "ld-linux", "libdl", "[vdso]",
	"libpython", "/python", "libtorch", "libc10", "_c.cpython", "libshm", "libgomp", "libtriton", "libjax", "xla_extension"}

func isRuntimeModule(module string) bool {
	base := strings.ToLower(filepath.Base(module))
	m := strings.ToLower(module)
	for _, p := range runtimeModules {
		if strings.HasPrefix(p, "/") {
			// The interpreter binary (/usr/bin/python3.12), not a package under site-packages.
			if strings.HasPrefix(base, strings.TrimPrefix(p, "/")) && !strings.Contains(m, "site-packages") {
				return true
			}
			continue
		}
		if strings.HasPrefix(base, p) || strings.Contains(base, p) {
			return true
		}
	}
	return false
}

func isInterpreter(module string) bool {
	base := strings.ToLower(filepath.Base(module))
	return (strings.HasPrefix(base, "python") || strings.HasPrefix(base, "libpython")) && !strings.HasSuffix(base, ".py")
}

// topUserFrame picks the frame that names who made the call, innermost
// first: a Python frame (module *.py) when the backtrace has Python frames;
// else the first resolved frame outside every runtime library (the
// program's own native code); else the last frame before the interpreter —
// PyTorch's Python binding (THPVariable_item, THPVariable_nonzero, …),
// which names the Python-level operation. Unresolved addresses are skipped.
func topUserFrame(fs []frame) string {
	for _, f := range fs {
		if strings.HasSuffix(strings.ToLower(f.module), ".py") && f.symbol != "" {
			return f.symbol + " (" + filepath.Base(f.module) + ")"
		}
	}
	for _, f := range fs {
		if f.unresolved || f.symbol == "" || strings.HasPrefix(f.symbol, "0x") {
			continue
		}
		if f.module != "" && !isRuntimeModule(f.module) {
			return shortSymbol(f.symbol) + " (" + filepath.Base(f.module) + ")"
		}
	}
	for i, f := range fs {
		if !isInterpreter(f.module) {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			if g := fs[j]; !g.unresolved && g.symbol != "" && !strings.HasPrefix(g.symbol, "0x") {
				return shortSymbol(g.symbol) + " (" + filepath.Base(g.module) + "; no Python frames)"
			}
		}
		break
	}
	return ""
}

// shortSymbol drops a C++ symbol's parameter list and return type:
// "_object* ns::f<T>(_object*, …)" → "ns::f<T>".
func shortSymbol(s string) string {
	s = strings.ReplaceAll(s, "(anonymous namespace)", "{anonymous}")
	depth := 0
	cut, space := len(s), -1
	for i, r := range s {
		switch r {
		case '<':
			depth++
		case '>':
			depth--
		case '(':
			if depth == 0 && i > 0 {
				cut = i
			}
		case ' ':
			if depth == 0 {
				space = i
			}
		}
		if cut != len(s) {
			break
		}
	}
	out := s[:cut]
	if space >= 0 && space < cut {
		out = out[space+1:]
	}
	return out
}
