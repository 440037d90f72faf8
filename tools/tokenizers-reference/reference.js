// Hugging Face's Rust tokenizers (the `tokenizers` npm package, its Node binding) as the reference
// for Headlight's own tokenizer.json loader. Node resolves `tokenizers` through NODE_PATH (the
// test and the benchmark point it at build/tokenizers-reference/node_modules).
//   node reference.js ids TOKENIZER_JSON CORPUS  prints, as one JSON array, the ids of each case of
//                                                CORPUS (cases are separated by a line "%%"),
//                                                special tokens added, as tokenizer(text) does
//   node reference.js load TOKENIZER_JSON        only loads the file (for load time and memory)
'use strict';
const fs = require('fs');
const {Tokenizer} = require('tokenizers');

const kCaseSeparator = '\n%%\n';

async function main([ mode, tokenizerPath, corpusPath ]) {
    const tokenizer = Tokenizer.fromFile(tokenizerPath);
    if (mode === 'load') return;
    if (mode !== 'ids') throw new Error(`unknown mode '${mode}'`);
    const cases = fs.readFileSync(corpusPath, 'utf8').split(kCaseSeparator);
    const ids = [];
    for (const text of cases)
        ids.push((await tokenizer.encode(text)).getIds());
    process.stdout.write(JSON.stringify(ids) + '\n');
}

main(process.argv.slice(2)).catch((error) => {
    process.stderr.write(`reference.js: ${error.message}\n`);
    process.exit(1);
});
