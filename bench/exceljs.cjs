// Reads an XLSX file with exceljs's streaming reader, every cell's value,
// and prints the milliseconds the read took and the cells it saw. The
// baseline of datadesk's XLSX ingest: `node exceljs.cjs FILE`, with
// NODE_PATH holding exceljs.
const ExcelJS = require('exceljs');

async function main() {
  const file = process.argv[2];
  const start = process.hrtime.bigint();
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(file, {
    sharedStrings: 'cache', hyperlinks: 'ignore', styles: 'cache', worksheets: 'emit', entries: 'emit',
  });
  let cells = 0;
  for await (const sheet of reader) {
    for await (const row of sheet) {
      row.eachCell({ includeEmpty: false }, (cell) => { if (cell.value !== undefined) cells++; });
    }
  }
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  process.stdout.write(JSON.stringify({ ms, cells }) + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
