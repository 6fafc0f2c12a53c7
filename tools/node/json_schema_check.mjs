// Independent validation of constrained-decoding outputs: every output must parse as
// JSON and validate against its schema under ajv (JSON Schema 2020-12, ajv-formats for
// date, time, date-time, uuid, email). One process checks a whole batch.
//
// Input (file named on the command line):
//   {"cases": [{"name": ..., "schema": {...}, "outputs": ["<json text>", ...]}]}
// Output (stdout):
//   {"results": [{"name", "n_outputs", "n_invalid", "failures": [{"output", "errors"}]}]}
//   failures lists at most 5 outputs per case.
//
// Usage: node json_schema_check.mjs BATCH.json
import fs from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const MAX_FAILURES_LISTED = 5;

function check_case(ajv, item) {
  const result = { name: item.name, n_outputs: item.outputs.length, n_invalid: 0, failures: [] };
  let validate;
  try {
    validate = ajv.compile(item.schema);
  } catch (error) {
    result.n_invalid = item.outputs.length;
    result.failures.push({ output: null, errors: [`schema does not compile: ${error.message}`] });
    return result;
  }
  for (const output of item.outputs) {
    let errors = null;
    try {
      const value = JSON.parse(output);
      if (!validate(value)) errors = validate.errors.map((e) => `${e.instancePath} ${e.message}`);
    } catch (error) {
      errors = [`not JSON: ${error.message}`];
    }
    if (errors) {
      result.n_invalid += 1;
      if (result.failures.length < MAX_FAILURES_LISTED) result.failures.push({ output, errors });
    }
  }
  return result;
}

function main() {
  if (process.argv.length !== 3) throw new Error("usage: node json_schema_check.mjs BATCH.json");
  const batch = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  const results = batch.cases.map((item) => {
    // A fresh validator per case: schemas may reuse $id values.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    return check_case(ajv, item);
  });
  process.stdout.write(JSON.stringify({ results }) + "\n");
}

main();
