// Package typing decides the type of each column of an upload from its
// values, and says why, without losing a value: a column is numeric only if
// every value reads back the same, identifiers keep their leading zeros, and
// dates are dates only when their order is certain. It speaks no SQL; the
// store turns its decisions into casts.
//
// An upload of orders.csv:
//
//	order_id,customer zip,amount,day
//	000123,02139,12.50,2024-01-02
//	000124,10001,7,2024-01-03
//
// has each value counted by shape (Stats, or KindCounts for spreadsheet
// cells that say what they hold), and the counts decide (Decide):
//
//	order_id      text, identifier   "text: 2 values with leading zeros"
//	customer_zip  text, identifier   "text: 1 value has a leading zero"
//	amount        decimal            DECIMAL(18,2): every value a canonical number
//	day           date               every value an ISO date
//
// Column keys come from the header labels (ColumnKeys): lower case, letters,
// digits and underscores, unique, never a name the store reserves. Written
// numbers ($1,234.50, 12.5%, (300)) are numbers when every value is
// written the same way (WrittenForm), and the reason says what was dropped.
package typing
