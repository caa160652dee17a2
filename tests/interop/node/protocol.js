// What every writer of the interop suite does, whatever its language (see `tests/interop/main.rs`):
//
//     <writer> <uri> <database> <count> <tasks> <tag>
//
// saves one document alone (its first use, which creates the counter where the library creates
// it), prints `ready`, waits for a line on stdin (so that every writer of a round starts at
// once), saves the other `count - 1` documents from `tasks` concurrent loops, each tagged
// `by: <tag>`, prints `done <count>` and exits 0. The first error is printed and exits 1.
'use strict';

const readline = require('readline');

function args() {
  const [uri, database, count, tasks, tag] = process.argv.slice(2);
  return { uri, database, count: Number(count), tasks: Number(tasks), tag };
}

function goSignal() {
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: process.stdin });
    rl.once('line', () => {
      resolve();
      rl.close();
    });
    rl.once('close', () => reject(new Error('stdin closed before the start signal')));
  });
}

async function run(save) {
  const { count, tasks, tag } = args();
  await save(tag);
  console.log('ready');
  await goSignal();
  let next = 1;
  const loop = async () => {
    while (next < count) {
      next += 1;
      await save(tag);
    }
  };
  await Promise.all(Array.from({ length: tasks }, loop));
  console.log(`done ${count}`);
}

function main(body) {
  body().catch((err) => {
    console.error(err && err.stack ? err.stack : err);
    process.exit(1);
  });
}

module.exports = { args, run, main };
