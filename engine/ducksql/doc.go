// Package ducksql is DuckDB's dialect of checked plans and typing
// decisions: the statements of a query, an analysis, a view and a stream,
// and the casts that store a column as its decided type. Every name is
// quoted and every value a bound parameter; the package builds text and
// needs no driver, so its golden plans are tested without a DuckDB build.
package ducksql
