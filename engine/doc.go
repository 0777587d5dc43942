// How a typed table is made and read, worked through.
//
// An upload of orders.csv:
//
//	order_id,customer zip,amount,day
//	000123,02139,12.50,2024-01-02
//	000124,10001,7,2024-01-03
//
// streams into a staging table of VARCHAR columns (or is read by DuckDB's
// own CSV reader, its types proved as it reads) and package typing decides
// each column from its values' counts: order_id and customer_zip stay text
// (leading zeros), amount is DECIMAL(18,2), day a DATE. The table is
// created in one statement of casts built from constants
// and column positions only:
//
//	CREATE TABLE data."t_..." AS SELECT
//	  NULLIF("c1", '') AS "order_id",
//	  NULLIF("c2", '') AS "customer_zip",
//	  CAST(NULLIF(trim("c3"), '') AS DECIMAL(18,2)) AS "amount",
//	  CAST(NULLIF(trim("c4"), '') AS DATE) AS "day"
//	FROM "dd_stage_0"
//
// Browsing a page binds its values:
//
//	SELECT * FROM data."t_..." ORDER BY "amount" DESC NULLS LAST, rowid LIMIT ? OFFSET ?
//
// Exporting what the page shows (amount gte 10, a search for "021", sorted
// by amount) counts the plan's matches with its one statement, then Stream
// sends every matching row in the same order, the search bound once per
// text column:
//
//	SELECT "order_id", "customer_zip", "amount", "day" FROM (
//	  SELECT *, rowid AS "__row" FROM data."t_..."
//	  WHERE "amount" >= CAST(? AS DOUBLE)
//	    AND (contains(lower("order_id"), lower(?)) OR contains(lower("customer_zip"), lower(?)))
//	) AS m ORDER BY "amount" DESC NULLS LAST, "__row" ASC

package engine
