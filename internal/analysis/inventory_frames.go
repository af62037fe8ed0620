package analysis

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"zombiezen.com/go/sqlite"

	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
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
		local string
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
	cfg.Open = func(ctx context.Context, path string) (*nsys.File, func(), error) {
		f, closeFn, err := inner(ctx, path)
		if err != nil || !f.HasTable(phases.TableCallchains) {
			return f, closeFn, err
		}
		mu.Lock()
		kept[path] = held{local: f.Path, close: closeFn}
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
		m, err := readTopFrames(h.local, ids)
		if err != nil {
			return nil, nil, &nsys.InputError{Path: fr.Path, Problem: "cannot read the CUDA backtraces (" + phases.TableCallchains + ")", Err: err}
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

// readTopFrames reads the backtraces ids from the export at local (already
// decompressed) and returns the top user frame of each.
func readTopFrames(local string, ids map[int64]bool) (map[int64]string, error) {
	c, err := openExportReadOnly(local)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	cols := map[string]bool{}
	if err := each(c, "SELECT name FROM pragma_table_info('"+phases.TableCallchains+"')", func(st *sqlite.Stmt) {
		cols[st.ColumnText(0)] = true
	}); err != nil {
		return nil, err
	}
	for _, need := range []string{"id", "stackDepth", "symbol"} {
		if !cols[need] {
			return nil, fmt.Errorf("%s lacks column %s", phases.TableCallchains, need)
		}
	}
	module, unresolved := "NULL", "NULL"
	if cols["module"] {
		module = "module"
	}
	if cols["unresolved"] {
		unresolved = "unresolved"
	}
	type raw struct {
		id, depth, symbol, module int64
		unresolved                bool
	}
	var rows []raw
	strIDs := map[int64]string{}
	// One pass over the table (the export has no index): keep the rows of
	// the wanted chains.
	q := fmt.Sprintf("SELECT id, stackDepth, symbol, %s, %s FROM %s", module, unresolved, phases.TableCallchains)
	if err := each(c, q, func(st *sqlite.Stmt) {
		id := st.ColumnInt64(0)
		if !ids[id] {
			return
		}
		r := raw{id: id, depth: st.ColumnInt64(1), symbol: st.ColumnInt64(2), module: -1, unresolved: st.ColumnInt64(4) != 0}
		if st.ColumnType(3) != sqlite.TypeNull {
			r.module = st.ColumnInt64(3)
			strIDs[r.module] = ""
		}
		strIDs[r.symbol] = ""
		rows = append(rows, r)
	}); err != nil {
		return nil, err
	}
	st, err := c.Prepare("SELECT value FROM StringIds WHERE id = ?")
	if err != nil {
		return nil, err
	}
	for id := range strIDs {
		st.BindInt64(1, id)
		if ok, err := st.Step(); err != nil {
			return nil, err
		} else if ok {
			strIDs[id] = st.ColumnText(0)
		}
		if err := st.Reset(); err != nil {
			return nil, err
		}
	}
	byChain := map[int64][]frame{}
	for _, r := range rows {
		fr := frame{depth: r.depth, symbol: strIDs[r.symbol], unresolved: r.unresolved}
		if r.module >= 0 {
			fr.module = strIDs[r.module]
		}
		byChain[r.id] = append(byChain[r.id], fr)
	}
	out := make(map[int64]string, len(byChain))
	for id, fs := range byChain {
		slices.SortFunc(fs, func(a, b frame) int { return int(a.depth - b.depth) })
		out[id] = topUserFrame(fs)
	}
	return out, nil
}

// openExportReadOnly opens an export (already decompressed) strictly
// read-only, as package nsys does, for the few tables nsys has no reader for
// yet (CUDA_CALLCHAINS, TARGET_INFO_CUDA_CONTEXT_INFO).
func openExportReadOnly(local string) (*sqlite.Conn, error) {
	abs, err := filepath.Abs(local)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&immutable=1"}
	return sqlite.OpenConn(u.String(), sqlite.OpenReadOnly|sqlite.OpenURI)
}

func each(c *sqlite.Conn, q string, fn func(*sqlite.Stmt)) error {
	st, _, err := c.PrepareTransient(q)
	if err != nil {
		return err
	}
	defer st.Finalize()
	for {
		ok, err := st.Step()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		fn(st)
	}
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
