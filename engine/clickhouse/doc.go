// Package clickhouse keeps big tables on a ClickHouse cluster and answers
// the same checked plans over them with the same semantics as the DuckDB
// store. It implements catalog.Backend and sees only the catalog and the
// plan: the owner's catalog stays in DuckDB, and a table's entry says its
// rows live here.
//
// The orders table on the cluster, after datadesk table move t_...
// --to clickhouse: every shard has
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
// More in ../testdata/plans/*.ch.sql.golden.
package clickhouse
