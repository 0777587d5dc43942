package catalog

import "slices"

// Outputs are the columns of a plan's result with one row per group (or
// one row of aggregates): the groups', then the measures' or the
// aggregates', each named and typed once, with the op that makes it, by
// the plan's checker. Plan and AnalysisPlan embed them, so that the
// backends and the answers read one definition of a result's columns.
type Outputs struct {
	outNames, outTypes, outOps []string
}

// OutNames are the output columns' names, in order.
func (o *Outputs) OutNames() []string { return slices.Clone(o.outNames) }

// OutType is the catalog type of output column i.
func (o *Outputs) OutType(i int) string { return o.outTypes[i] }

// OutOp is the op that makes output column i: a measure's or an
// aggregate's, "" for a group.
func (o *Outputs) OutOp(i int) string { return o.outOps[i] }

// addOut appends an output column.
func (o *Outputs) addOut(name, typ, op string) {
	o.outNames = append(o.outNames, name)
	o.outTypes = append(o.outTypes, typ)
	o.outOps = append(o.outOps, op)
}
