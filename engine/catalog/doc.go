// Package catalog holds what every backend shares: the catalog's records
// (files, their tables and columns, import reports, labels) and the query
// plan. A files.query_table call's arguments (Query) are checked once
// against a table into a Plan of typed parts: columns resolved with their
// types, filter values converted to their columns' types, groups,
// aggregates, order and page, with no SQL in it. Each backend compiles a
// plan in its own dialect: the DuckDB store in package engine, the
// ClickHouse cluster in package clickhouse, behind the Backend interface.
package catalog
