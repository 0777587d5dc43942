// Type inference, worked through.
//
// An upload of orders.csv:
//
//	order_id,customer zip,amount,day
//	000123,02139,12.50,2024-01-02
//	000124,10001,7,2024-01-03
//
// streams into a staging table of VARCHAR columns while each value is
// classified. The counts decide:
//
//	order_id      text, identifier   "text: 2 values with leading zeros"
//	customer_zip  text, identifier   "text: 1 value has a leading zero"
//	amount        decimal            DECIMAL(18,2): every value a canonical number
//	day           date               every value an ISO date
//
// and the table is created in one statement of casts built from constants
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
// The same table on the ClickHouse cluster, after
// datadesk table move t_... --to clickhouse: every shard has
//
//	CREATE TABLE `datadesk`.`t_..._local` (__row UInt64, `order_id` Nullable(String),
//	  `customer_zip` Nullable(String), `amount` Nullable(Decimal(18, 2)), `day` Nullable(String))
//	  ENGINE = MergeTree ORDER BY __row
//	CREATE TABLE `datadesk`.`t_...` AS `datadesk`.`t_..._local`
//	  ENGINE = Distributed(`datadesk`, `datadesk`, `t_..._local`, intHash64(__row))
//
// and the query_table call
//
//	{"file_id": "f_...", "filters": [{"column": "order_id", "op": "eq", "value": 123}],
//	 "aggregates": [{"op": "sum", "column": "amount"}], "limit": 5}
//
// becomes two statements, the counts and the page, with the value written
// as an escaped literal (the identifier 123 is the text '123', never 000123):
//
//	SELECT count(), if(count(`amount`) = 0, NULL, sum(`amount`))
//	  FROM `datadesk`.`t_...` WHERE lowerUTF8(`order_id`) = lowerUTF8('123')
//	SELECT `order_id`, `customer_zip`, `amount`, `day`
//	  FROM `datadesk`.`t_...` WHERE lowerUTF8(`order_id`) = lowerUTF8('123') ORDER BY __row ASC LIMIT 0, 5
//
// More in testdata/plans/*.ch.sql.golden.
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
