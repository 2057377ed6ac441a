// LOG_FORMAT=pretty: the JSON lines pino writes, made readable on a terminal — one line per entry, local time,
// level, message, the request id, then the other fields as key=value (values that are not plain words as
// JSON), and an error's stack indented below. Everything of the JSON line is kept; nothing is dropped but
// pid and hostname.
import pino from 'pino';

const LEVELS: Record<number, [name: string, color: number]> = {
  10: ['TRACE', 90],
  20: ['DEBUG', 36],
  30: ['INFO', 32],
  40: ['WARN', 33],
  50: ['ERROR', 31],
  60: ['FATAL', 35],
};

const two = (n: number) => String(n).padStart(2, '0');

function value(v: unknown): string {
  return typeof v === 'string' && /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
}

/** One JSON log line as a human reads it (a line that is not JSON is kept as it is). */
export function prettyLine(json: string, color = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const { level, time, pid: _pid, hostname: _hostname, msg, reqId, err, ...fields } = entry;
  const d = new Date(typeof time === 'number' ? time : Date.now());
  const stamp = `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
  const [name, code] = LEVELS[level as number] ?? [String(level), 0];
  let line = `${stamp} ${color ? `\x1b[${code}m${name.padEnd(5)}\x1b[0m` : name.padEnd(5)} ${msg ?? ''}`;
  if (reqId !== undefined) line += ` [${value(reqId)}]`;
  for (const [k, v] of Object.entries(fields)) line += ` ${k}=${value(v)}`;
  const stack = (err as { stack?: unknown } | undefined)?.stack;
  if (typeof stack === 'string') line += `\n    ${stack.split('\n').join('\n    ')}`;
  else if (err !== undefined) line += ` err=${value(err)}`;
  return `${line}\n`;
}

/** A pino destination writing `prettyLine`s to standard output (synchronously, as pino's own does). */
export function prettyDestination(): pino.DestinationStream {
  const out = pino.destination({ dest: 1, sync: true });
  const color = process.stdout.isTTY === true;
  return { write: (s: string) => out.write(prettyLine(s.endsWith('\n') ? s.slice(0, -1) : s, color)) };
}
