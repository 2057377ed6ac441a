// The other end of sync-git.ts: runs the test helpers' synchronous git commands, one at a time, from a small
// process (see there why). Plain JavaScript, Node's built-ins only. Frames both ways: a 4-byte big-endian length,
// then JSON. Request { args, cwd, env, input (base64) }; answer { status, signal, stdout, stderr (base64), error }.
// It ends when the test process closes its end of the request pipe.
import fs from 'node:fs';
import { runToEnd } from '../../src/git/run-to-end.mjs';

const [requests, answers] = process.argv.slice(2);
// in this order, as the test process opens them: requests (it waits for us to read), then answers
const input = fs.createReadStream('', { fd: fs.openSync(requests, 'r') });
const output = fs.openSync(answers, 'w');

let buffered = Buffer.alloc(0);
let busy = false;
const queue = [];

input.on('data', (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  while (buffered.length >= 4) {
    const size = buffered.readUInt32BE(0);
    if (buffered.length < 4 + size) break;
    queue.push(JSON.parse(buffered.subarray(4, 4 + size).toString('utf8')));
    buffered = buffered.subarray(4 + size);
  }
  next();
});
input.on('end', () => process.exit(0));

function next() {
  if (busy || !queue.length) return;
  busy = true;
  const req = queue.shift();
  const stdin = req.input === undefined ? undefined : Buffer.from(req.input, 'base64');
  runToEnd({ file: 'git', args: req.args, cwd: req.cwd, env: req.env, input: stdin }, (a) => {
    const answer =
      a.error !== undefined
        ? { error: a.error, status: null, signal: null, stdout: '', stderr: '' }
        : { status: a.code, signal: a.signal, stdout: a.stdout.toString('base64'), stderr: a.stderr.toString('base64') };
    const body = Buffer.from(JSON.stringify(answer));
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length);
    fs.writeSync(output, Buffer.concat([head, body]));
    busy = false;
    next();
  });
}
