// The one guarded client for every outbound request of the product (hook deliveries; later remote
// imports and export uploads): timeouts, a cap on what is read back, TLS verification per request,
// and GitLab's UrlBlocker rules for local addresses. The rules are checked on the address actually
// connected to — the client's DNS lookup refuses a blocked address — so a name cannot resolve to a
// public address when checked and to a private one when connected (DNS rebinding). A client that
// connects by itself (git) takes `pin`: the checked addresses, to hold it to.
import dns from 'node:dns/promises';
import fs from 'node:fs';
import net from 'node:net';
import { Transform } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { Agent, type Dispatcher, request } from 'undici';

export interface OutboundRules {
  /** allow_local_requests_from_system_hooks (or …_web_hooks_and_services) */
  allowLocal: boolean;
  /** outbound_local_requests_whitelist: host names ("*.example.com"), addresses, CIDR ranges, each optionally with ":port" */
  allowlist: string[];
}

export interface OutboundRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  verifyTls?: boolean;
  timeoutMs?: number;
  maxResponseBytes?: number;
  rules: OutboundRules;
}

export interface OutboundResponse {
  status: number;
  /** lower-case names, at most 50, each value cut to 1 KiB */
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
  durationMs: number;
}

/** `invalid_request`: a header name or value that cannot be sent (control characters …); never sent, so never worth a retry */
export type OutboundFailure = 'blocked' | 'invalid_url' | 'invalid_request' | 'timeout' | 'connection' | 'too_large' | 'tls';

export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailure,
    message: string,
  ) {
    super(message);
  }
}

const MAX_REQUEST_BYTES = 25 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 10_000;
const TIMED_OUT = 'Request timed out';
const TOO_LARGE = 'File is too large';
/** the longest a streaming transfer's pool waits for a connection (its deadline may be hours) */
const MAX_CONNECT_MS = 60_000;
// RFC 9110 field names (tokens) and values (visible characters, spaces and tabs; obs-text bytes):
// no control character ever reaches the wire.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/i;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const LOCALHOST = 'Requests to localhost are not allowed';
const LOCAL_NETWORK = 'Requests to the local network are not allowed';
const LINK_LOCAL = 'Requests to the link local network are not allowed';
const MULTICAST_ADDRESS = 'Requests to multicast addresses are not allowed';
const BROADCAST_ADDRESS = 'Requests to the limited broadcast address are not allowed';
const BAD_SCHEME = 'Only allowed schemes are http, https';
const INVALID = 'URI is invalid';
const UNRESOLVED = 'Host cannot be resolved or invalid';

function blockList(ranges: [string, number, 'ipv4' | 'ipv6'][]): net.BlockList {
  const b = new net.BlockList();
  for (const [addr, prefix, family] of ranges) b.addSubnet(addr, prefix, family);
  return b;
}
// Judged on the address as `ipv4Judged` gives it, so the IPv4 ranges also catch an IPv4 address
// wrapped in IPv6 (mapped, compatible, translated, NAT64, 6to4).
const LOOPBACK = blockList([
  ['127.0.0.0', 8, 'ipv4'],
  ['0.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['::', 128, 'ipv6'],
]);
const PRIVATE = blockList([
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'], // benchmarking (RFC 2544): lab networks
  ['fc00::', 7, 'ipv6'],
  ['fec0::', 10, 'ipv6'], // unique local, (deprecated) site local
  ['64:ff9b:1::', 48, 'ipv6'], // local-use NAT64 (RFC 8215): translates to whatever the local gateway is set up for
]);
const LINK = blockList([
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
]);
// Never a server: refused whatever the rules say.
const MULTICAST = blockList([
  ['224.0.0.0', 4, 'ipv4'],
  ['ff00::', 8, 'ipv6'],
]);
const BROADCAST = blockList([['255.255.255.255', 32, 'ipv4']]);

const familyOf = (addr: string) => (net.isIPv6(addr) ? 'ipv6' : 'ipv4');

/** The 16 bytes of an IPv6 address (zone index ignored); null for anything else. */
function ipv6Bytes(addr: string): number[] | null {
  let s = addr.split('%')[0];
  if (!net.isIPv6(s)) return null;
  let v4: number[] = [];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    v4 = dotted.slice(1).map(Number);
    s = s.slice(0, dotted.index) + '0:0';
  }
  const groups = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const [head, tail] = s.split('::');
  const words = tail === undefined ? groups(head) : [...groups(head), ...Array(8 - groups(head).length - groups(tail).length).fill(0), ...groups(tail)];
  const bytes = words.flatMap((w) => [w >> 8, w & 0xff]);
  if (dotted) bytes.splice(12, 4, ...v4);
  return bytes;
}

/**
 * The address the rules judge: the IPv4 address inside an IPv6 form that carries one — IPv4-mapped
 * (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), IPv4-compatible (::/96; :: and ::1 become
 * 0.0.0.0 and 0.0.0.1, loopback either way), NAT64 (64:ff9b::/96) and 6to4 (2002::/16) — so that
 * 64:ff9b::7f00:1 is localhost and 2002:c0a8:101:: is 192.168.1.1; otherwise the address itself,
 * without an IPv6 zone index ("fe80::1%eth0").
 */
export function ipv4Judged(addr: string): string {
  const b = ipv6Bytes(addr);
  if (!b) return addr;
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = (at: number) => b.slice(at, at + 4).join('.');
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(12);
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return v4(12);
  if (zero(0, 12)) return v4(12);
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return v4(12);
  if (b[0] === 0x20 && b[1] === 0x02) return v4(2);
  return addr.split('%')[0];
}

/** Why an address is never reached, whatever the rules (null: it may be, rules permitting). */
function unreachableKind(addr: string): string | null {
  const a = ipv4Judged(addr);
  if (MULTICAST.check(a, familyOf(a))) return MULTICAST_ADDRESS;
  if (BROADCAST.check(a, familyOf(a))) return BROADCAST_ADDRESS;
  return null;
}

/** Why an address may not be reached without allowLocal (null: it is public). */
function localKind(addr: string): string | null {
  const a = ipv4Judged(addr);
  const family = familyOf(a);
  if (LOOPBACK.check(a, family)) return LOCALHOST;
  if (PRIVATE.check(a, family)) return LOCAL_NETWORK;
  if (LINK.check(a, family)) return LINK_LOCAL;
  return null;
}

interface AllowEntry {
  host?: string;
  range?: net.BlockList;
  port?: number;
}

function parseAllowlist(entries: string[]): AllowEntry[] {
  const out: AllowEntry[] = [];
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    let host = entry;
    let port: number | undefined;
    const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    if (bracket) [host, port] = [bracket[1], bracket[2] ? Number(bracket[2]) : undefined];
    else if (!net.isIPv6(entry.split('/')[0])) {
      const m = /^(.*):(\d+)$/.exec(entry);
      if (m) [host, port] = [m[1], Number(m[2])];
    }
    const [addr, prefix] = host.split('/');
    if (net.isIP(addr)) {
      const family = familyOf(addr);
      const range = new net.BlockList();
      range.addSubnet(addr, prefix === undefined ? (family === 'ipv4' ? 32 : 128) : Number(prefix), family);
      out.push({ range, port });
    } else {
      out.push({ host, port });
    }
  }
  return out;
}

/** An entry with a port allows that port only, when checked and when connecting alike. */
function allowed(list: AllowEntry[], host: string, addr: string | null, port: number): boolean {
  const bare = addr?.split('%')[0] ?? null;
  return list.some((e) => {
    if (e.port !== undefined && e.port !== port) return false;
    if (e.range) return bare !== null && e.range.check(bare, familyOf(bare));
    if (!e.host) return false;
    if (e.host.startsWith('*.')) return host.endsWith(e.host.slice(1));
    return e.host === host;
  });
}

/** The URL without its userinfo password, for showing. */
export function maskUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*:)[^@/?#]*@/i, '$1*****@');
}

type Resolve = (host: string) => Promise<string[]>;

const systemResolve: Resolve = async (host) => (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export interface PinnedUrl {
  /** the URL as parsed here (WHATWG): hand this to the client, so that it reads the host that was checked */
  url: string;
  /** lower case, IPv6 without brackets */
  host: string;
  port: number;
  /** what `host` may be connected to: the address itself for a literal, else the checked answers of the lookup */
  addresses: string[];
  /** the host is an address (nothing to resolve) */
  literal: boolean;
}

interface Target {
  url: URL;
  host: string;
  port: number;
}

export class Outbound {
  private readonly resolve: Resolve;
  /** one keep-alive pool per TLS mode, port and rule set (the rules live in the pool's DNS lookup) */
  private readonly agents = new Map<string, Agent>();

  /** sent as User-Agent unless a request names its own ("Hearth/<version>") */
  private readonly userAgent: string | null;

  constructor(opts: { resolve?: Resolve; userAgent?: string } = {}) {
    this.resolve = opts.resolve ?? systemResolve;
    this.userAgent = opts.userAgent ?? null;
  }

  /** The request's headers, checked (`invalid_request` for one that cannot be sent), with our User-Agent unless it has one. */
  private headersOf(given: Record<string, string> | undefined): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(given ?? {})) {
      if (!HEADER_NAME.test(name) || !HEADER_VALUE.test(value)) throw new OutboundError('invalid_request', `invalid ${name} header`);
      headers[name] = value;
    }
    if (this.userAgent && !Object.keys(headers).some((n) => n.toLowerCase() === 'user-agent')) headers['user-agent'] = this.userAgent;
    return headers;
  }

  /** Null when the URL may be requested under the rules, else GitLab's message. */
  async check(url: string, rules: OutboundRules): Promise<string | null> {
    try {
      await this.pin(url, rules);
      return null;
    } catch (e) {
      return e instanceof OutboundError ? e.message : UNRESOLVED;
    }
  }

  /**
   * For a client that connects by itself (git): the URL checked under the rules, as parsed, with the
   * addresses it may connect to — and must be held to, so that its own lookup cannot answer
   * differently (DNS rebinding). OutboundError 'invalid_url' or 'blocked' when it may not be requested.
   */
  async pin(url: string, rules: OutboundRules): Promise<PinnedUrl> {
    const target = this.parse(url);
    if (typeof target === 'string') throw new OutboundError('invalid_url', target);
    const addresses = await this.addresses(target.host, target.port, rules);
    return { url: target.url.href, host: target.host, port: target.port, addresses, literal: net.isIP(target.host) !== 0 };
  }

  /**
   * One request under a total deadline (`timeoutMs`, default 10 s) that covers everything — the
   * address check and its DNS lookup, connecting, TLS, the answer's headers and its body — and that
   * always fires: it is a timer of its own racing the request, not one of undici's timeouts (a request
   * still connecting does not notice its abort signal, and the pool's lookup or TLS handshake may never
   * answer). At the deadline the request is aborted and OutboundError 'timeout' thrown; what undici
   * still holds ends by its own connect timeout (the same deadline) at the latest.
   */
  async request(req: OutboundRequest): Promise<OutboundResponse> {
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return this.raced(timeoutMs, (signal) => this.attempt(req, timeoutMs, signal));
  }

  private async attempt(req: OutboundRequest, timeoutMs: number, signal: AbortSignal): Promise<OutboundResponse> {
    const started = performance.now();
    const target = this.parse(req.url);
    if (typeof target === 'string') throw new OutboundError('invalid_url', target);
    const headers = this.headersOf(req.headers);
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
    if (body && body.length > MAX_REQUEST_BYTES) throw new OutboundError('too_large', 'Request body is too large');
    // Checked here for a clear answer before connecting; checked again by the pool's lookup.
    await this.addresses(target.host, target.port, req.rules);
    if (signal.aborted) throw signal.reason;
    const url = new URL(target.url);
    if (url.username || url.password) {
      headers.authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
      url.username = '';
      url.password = '';
    }
    const cap = req.maxResponseBytes ?? 1024 * 1024;
    try {
      const res = await request(url, {
        method: (req.method ?? 'POST') as 'POST',
        headers,
        body,
        dispatcher: this.agent(req.verifyTls ?? true, req.rules, target.port, timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      try {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= cap) {
            truncated = size > cap || !(await ended(res.body));
            break;
          }
        }
      } finally {
        if (truncated || signal.aborted) res.body.destroy();
      }
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers).slice(0, 50)) {
        out[name.toLowerCase()] = (Array.isArray(value) ? value.join(', ') : String(value ?? '')).slice(0, 1024);
      }
      return { status: res.statusCode, headers: out, body: Buffer.concat(chunks).subarray(0, cap), truncated, durationMs: performance.now() - started };
    } catch (e) {
      throw failure(e);
    }
  }

  /**
   * Sends a local file as the request body, streamed (Content-Length set; export uploads to
   * `upload[url]`), under the same rules and deadline as request(). Answers the status, the headers and at
   * most `maxResponseBytes` (default 64 KiB) of the answer's body. `method`: PUT (the default) or POST.
   * The deadline (`timeoutMs`, default 10 s) covers the whole transfer, the upload included.
   */
  async sendFile(req: Omit<OutboundRequest, 'body' | 'maxResponseBytes'> & { file: string; maxResponseBytes?: number }): Promise<OutboundResponse> {
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return this.raced(timeoutMs, (signal) => this.sendAttempt(req, timeoutMs, signal));
  }

  /**
   * Fetches `url` into the local file `file` (remote imports), streamed. `accept` sees the status and the
   * headers before a byte is written and may throw to refuse; more than `maxBytes` of body →
   * OutboundError 'too_large' (the file removed). `timeoutMs` covers the whole transfer; `idleTimeoutMs`
   * (default timeoutMs) the longest silence. Answers the status, headers and bytes written.
   *
   * A GET, redirects not followed (a 3xx goes to `accept` as any answer). A declared Content-Length over
   * `maxBytes` is refused before a byte is read (after `accept`, so that a refused status is told first);
   * a body that grows past it is cut off at once. On any failure — refused by `accept`, too large, the
   * deadline, a silence, a broken connection — the file is gone when this rejects; `accept`'s own error
   * is rethrown as it is.
   */
  async fetchToFile(req: {
    url: string;
    file: string;
    maxBytes: number;
    rules: OutboundRules;
    headers?: Record<string, string>;
    timeoutMs?: number;
    idleTimeoutMs?: number;
    accept?: (status: number, headers: Record<string, string>) => void;
  }): Promise<{ status: number; headers: Record<string, string>; size: number }> {
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const state: { writing?: Promise<number> } = {};
    try {
      return await this.raced(timeoutMs, (signal) => this.fetchAttempt(req, timeoutMs, signal, state));
    } catch (e) {
      // the deadline may win while the body is being written: the writing ends promptly once aborted
      // (and removes the file itself); wait for it so that the file is gone when this rejects
      if (state.writing) await state.writing.catch(() => {});
      await fs.promises.rm(req.file, { force: true });
      throw e;
    }
  }

  /** The deadline of every request: `run` gets the signal aborted at the deadline, which wins with 'timeout'. */
  private async raced<T>(timeoutMs: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const e = new OutboundError('timeout', TIMED_OUT);
        controller.abort(e);
        reject(e);
      }, timeoutMs);
    });
    const attempt = run(controller.signal);
    attempt.catch(() => {}); // lost the race: its late failure is nobody's
    try {
      return await Promise.race([attempt, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The URL checked (its addresses under the rules, before connecting), the headers validated, the userinfo turned into basic auth. */
  private async prepare(raw: string, given: Record<string, string> | undefined, rules: OutboundRules, signal: AbortSignal) {
    const target = this.parse(raw);
    if (typeof target === 'string') throw new OutboundError('invalid_url', target);
    const headers = this.headersOf(given);
    await this.addresses(target.host, target.port, rules);
    if (signal.aborted) throw signal.reason;
    const url = new URL(target.url);
    if (url.username || url.password) {
      headers.authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
      url.username = '';
      url.password = '';
    }
    return { url, headers, port: target.port };
  }

  private async sendAttempt(
    req: Omit<OutboundRequest, 'body' | 'maxResponseBytes'> & { file: string; maxResponseBytes?: number },
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<OutboundResponse> {
    const started = performance.now();
    const method = (req.method ?? 'PUT').toUpperCase();
    if (method !== 'PUT' && method !== 'POST') throw new OutboundError('invalid_request', `invalid method ${method}`);
    const { url, headers, port } = await this.prepare(req.url, req.headers, req.rules, signal);
    for (const name of Object.keys(headers)) if (name.toLowerCase() === 'content-length' || name.toLowerCase() === 'transfer-encoding') delete headers[name];
    const { size } = await fs.promises.stat(req.file);
    if (signal.aborted) throw signal.reason;
    headers['content-length'] = String(size);
    const body = fs.createReadStream(req.file);
    const cap = req.maxResponseBytes ?? 64 * 1024;
    try {
      const res = await request(url, {
        method: method as 'PUT',
        headers,
        body,
        dispatcher: this.agent(req.verifyTls ?? true, req.rules, port, connectTimeout(timeoutMs)),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal,
      });
      const { data, truncated } = await readCapped(res.body, cap, signal);
      return { status: res.statusCode, headers: answerHeaders(res.headers), body: data, truncated, durationMs: performance.now() - started };
    } catch (e) {
      throw failure(e);
    } finally {
      body.destroy();
    }
  }

  private async fetchAttempt(
    req: Parameters<Outbound['fetchToFile']>[0],
    timeoutMs: number,
    signal: AbortSignal,
    state: { writing?: Promise<number> },
  ): Promise<{ status: number; headers: Record<string, string>; size: number }> {
    const idle = req.idleTimeoutMs ?? timeoutMs;
    const { url, headers, port } = await this.prepare(req.url, req.headers, req.rules, signal);
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: 'GET',
        headers,
        dispatcher: this.agent(true, req.rules, port, connectTimeout(timeoutMs)),
        headersTimeout: idle,
        bodyTimeout: idle,
        signal,
      });
    } catch (e) {
      throw failure(e);
    }
    const answer = answerHeaders(res.headers);
    try {
      req.accept?.(res.statusCode, answer); // its error goes to the caller as it is
      const declared = answer['content-length'];
      if (declared !== undefined && /^\d+$/.test(declared.trim()) && Number(declared) > req.maxBytes) throw new OutboundError('too_large', TOO_LARGE);
      if (signal.aborted) throw signal.reason;
    } catch (e) {
      discard(res.body);
      throw e;
    }
    state.writing = writeCapped(res.body, req.file, req.maxBytes, signal);
    const size = await state.writing;
    return { status: res.statusCode, headers: answer, size };
  }
  async close(): Promise<void> {
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((a) => a.close()));
  }

  private parse(raw: string): Target | string {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return INVALID;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return BAD_SCHEME;
    if (!url.hostname) return INVALID;
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    return { url, host, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80) };
  }

  /** The addresses to connect to, each allowed by the rules (else OutboundError 'blocked'). */
  private async addresses(host: string, port: number, rules: OutboundRules): Promise<string[]> {
    const list = parseAllowlist(rules.allowlist);
    let addrs: string[];
    if (net.isIP(host)) addrs = [host];
    else {
      try {
        addrs = await this.resolve(host);
      } catch {
        addrs = [];
      }
      if (!addrs.length) throw new OutboundError('blocked', UNRESOLVED);
    }
    for (const addr of addrs) {
      const never = unreachableKind(addr);
      if (never) throw new OutboundError('blocked', never);
    }
    if (rules.allowLocal) return addrs;
    const hostAllowed = !net.isIP(host) && allowed(list, host, null, port);
    for (const addr of addrs) {
      const kind = host === 'localhost' ? LOCALHOST : localKind(addr);
      if (kind && !hostAllowed && !allowed(list, host, addr, port)) throw new OutboundError('blocked', kind);
    }
    return addrs;
  }

  /**
   * `port`: the one port this pool connects to, so that the lookup applies the allowlist's ports too.
   * `timeoutMs` bounds connecting (lookup and TLS handshake included). No limit on connections per
   * origin: a request never waits in the pool's queue behind others to the same origin that hang (the
   * callers bound how many run at once).
   */
  private agent(verifyTls: boolean, rules: OutboundRules, port: number, timeoutMs: number): Agent {
    const key = `${verifyTls ? 1 : 0}|${port}|${timeoutMs}|${rules.allowLocal ? 1 : 0}|${rules.allowlist.join(',')}`;
    let agent = this.agents.get(key);
    if (agent) return agent;
    if (this.agents.size >= 32) {
      const [oldKey, old] = this.agents.entries().next().value!;
      this.agents.delete(oldKey);
      void old.close();
    }
    const lookup = (hostname: string, options: { all?: boolean }, cb: (err: Error | null, address?: any, family?: number) => void) => {
      const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
      this.addresses(host, port, rules).then(
        (addrs) => {
          const list = addrs.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
          if (options.all) cb(null, list);
          else cb(null, list[0].address, list[0].family);
        },
        (e) => cb(e),
      );
    };
    agent = new Agent({ connect: { rejectUnauthorized: verifyTls, lookup: lookup as any, timeout: timeoutMs }, keepAliveTimeout: 30_000 });
    this.agents.set(key, agent);
    return agent;
  }
}

const connectTimeout = (timeoutMs: number) => Math.min(timeoutMs, MAX_CONNECT_MS);

/** lower-case names, at most 50, each value cut to 1 KiB */
function answerHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers).slice(0, 50)) {
    out[name.toLowerCase()] = (Array.isArray(value) ? value.join(', ') : String(value ?? '')).slice(0, 1024);
  }
  return out;
}

/** At most `cap` bytes of a body; the rest is not read (the body destroyed when cut short or aborted). */
async function readCapped(body: Dispatcher.ResponseData['body'], cap: number, signal: AbortSignal): Promise<{ data: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= cap) {
        truncated = size > cap || !(await ended(body));
        break;
      }
    }
  } finally {
    if (truncated || signal.aborted) discard(body);
  }
  return { data: Buffer.concat(chunks).subarray(0, cap), truncated };
}

/**
 * Streams a body into `file` (created or truncated), never more than `maxBytes`: past it, OutboundError
 * 'too_large' at once and the body destroyed. On any failure the file is closed and removed before this rejects.
 */
async function writeCapped(body: Dispatcher.ResponseData['body'], file: string, maxBytes: number, signal: AbortSignal): Promise<number> {
  let size = 0;
  let out: fs.WriteStream | undefined;
  try {
    out = (await fs.promises.open(file, 'w')).createWriteStream();
    if (signal.aborted) throw signal.reason;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        if (size > maxBytes) cb(new OutboundError('too_large', TOO_LARGE));
        else cb(null, chunk);
      },
    });
    await pipeline(body, counter, out, { signal });
    return size;
  } catch (e) {
    discard(body);
    if (out) {
      out.destroy();
      await finished(out).catch(() => {});
    }
    await fs.promises.rm(file, { force: true });
    throw failure(e);
  }
}

/** A body not read to its end, dropped (its connection closed): the abort error that destroying it raises is nobody's. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

/** Whether a body stream has nothing more (after exactly `cap` bytes were read). */
async function ended(body: AsyncIterable<Buffer> & { readableEnded?: boolean }): Promise<boolean> {
  return body.readableEnded === true;
}

function failure(e: unknown): OutboundError {
  if (e instanceof OutboundError) return e;
  const err = e as { name?: string; code?: string; message?: string; cause?: any };
  const cause = err.cause instanceof OutboundError ? err.cause : null;
  if (cause) return cause;
  const code = String(err.code ?? err.cause?.code ?? '');
  const message = err.message || String(e);
  if (err.name === 'TimeoutError' || err.name === 'AbortError' || /TIMEOUT/.test(code)) return new OutboundError('timeout', TIMED_OUT);
  if (/CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code) || /certificate/i.test(message)) return new OutboundError('tls', message);
  return new OutboundError('connection', message);
}
