package dataset

// The analysis context: what the rows of a dataset cannot carry (the block
// start times that order units across files, the exclusions and warnings
// of segmentation, each input's provenance and rank processes), written by
// analyze --out as one JSON value in the Parquet file metadata under
// MetaContext, and read back by Load.

import (
	"encoding/json"
	"fmt"

	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/nsys"
	"github.com/nsysphase/nsysphase/phases"
)

// MetaContext is the Parquet metadata key holding the analysis context of a
// dataset (JSON, see datasetContext).
const MetaContext = "nsysphase.analysis_context"

// contextVersion versions the MetaContext JSON. Version 2 writes input
// warnings as structured warnings (version 1: their messages).
const contextVersion = 2

// datasetContext is what a dataset needs besides its rows to reproduce the
// analysis it came from.
type datasetContext struct {
	Version       int               `json:"version"`
	SkipSteps     int               `json:"skip_steps"`
	Files         []fileContext     `json:"files"` // in the analysis' input order
	Excluded      phases.Exclusions `json:"excluded"`
	InputWarnings inputWarnings     `json:"input_warnings"`
	UnitStarts    map[string]int64  `json:"unit_starts"` // unit → start on the common clock (Unix ns when known)
}

// inputWarnings reads both the structured warnings of version 2 and the
// bare messages of version 1 (coded nsys.WarnInput).
type inputWarnings []nsys.Warning

func (iw *inputWarnings) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(inputWarnings, 0, len(raw))
	for _, r := range raw {
		var w nsys.Warning
		if err := json.Unmarshal(r, &w.Message); err == nil {
			w.Code = nsys.WarnInput
		} else if err := json.Unmarshal(r, &w); err != nil {
			return err
		}
		out = append(out, w)
	}
	*iw = out
	return nil
}

type fileContext struct {
	Input      phases.Input         `json:"input"`
	Provenance *analysis.Provenance `json:"provenance"`
	Manifest   map[string]any       `json:"manifest"`
	// Ranks are the export's communicating processes as read (their
	// collectives are the rank_collectives table); absent without ranks.
	Ranks []phases.RankProcess `json:"ranks,omitempty"`
}

// unitLabels keys unit starts by the units' labels, as the context JSON
// stores them.
func unitLabels(starts map[phases.UnitID]int64) map[string]int64 {
	out := make(map[string]int64, len(starts))
	for u, v := range starts {
		out[u.String()] = v
	}
	return out
}

// ContextMetadata is the MetaContext value for the datasets written from d.
func ContextMetadata(d *analysis.Doc) (string, error) {
	c := datasetContext{Version: contextVersion, SkipSteps: d.Settings.SkipSteps, Excluded: d.Excluded, UnitStarts: unitLabels(d.UnitStarts()), InputWarnings: inputWarnings{}}
	if len(d.Inputs) != len(d.Provenance) {
		return "", fmt.Errorf("analysis context: the inputs (%d) and the provenance rows (%d) differ in number", len(d.Inputs), len(d.Provenance))
	}
	for i, in := range d.Inputs {
		p := d.Provenance[i]
		c.Files = append(c.Files, fileContext{Input: in, Provenance: p.Provenance, Manifest: p.Manifest, Ranks: d.RankInputs()[in.File]})
	}
	for _, w := range d.Warnings {
		if w.File != "" || w.Code == nsys.WarnInput { // reading or segmenting an input
			c.InputWarnings = append(c.InputWarnings, w)
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("analysis context: %w", err)
	}
	return string(b), nil
}
