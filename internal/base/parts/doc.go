// Package parts decodes the parts of a table on several goroutines ahead of
// their consumer and hands them over in table order: the pipeline under the
// engine's stream source (package phases) and the streamed vendor projection
// (package projection), which read the big activity tables in parts that
// package nsys cuts along their B-trees.
//
// Start launches at most ahead decoders at once, so memory follows the
// parts in flight rather than the table; Pull returns the parts in the order
// given; Give returns a consumed part so that a later decoder can reuse its
// memory. The parts are whatever the caller cuts (nsys.Part in this module):
// the package knows nothing of tables and imports nothing of the pipeline.
package parts
