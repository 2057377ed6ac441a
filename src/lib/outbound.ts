// The one guarded client for every outbound request of the product (hook deliveries; later remote
// imports and export uploads): timeouts, a cap on what is read back, TLS verification per request,
// and GitLab's UrlBlocker rules for local addresses. The rules are checked on the address actually
// connected to — the client's DNS lookup refuses a blocked address — so a name cannot resolve to a
// public address when checked and to a private one when connected (DNS rebinding).
import dns from 'node:dns/promises';
import net from 'node:net';
import { Agent, request } from 'undici';

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

export type OutboundFailure = 'blocked' | 'invalid_url' | 'timeout' | 'connection' | 'too_large' | 'tls';

export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailure,
    message: string,
  ) {
    super(message);
  }
}

const MAX_REQUEST_BYTES = 25 * 1024 * 1024;
const LOCALHOST = 'Requests to localhost are not allowed';
const LOCAL_NETWORK = 'Requests to the local network are not allowed';
const LINK_LOCAL = 'Requests to the link local network are not allowed';
const BAD_SCHEME = 'Only allowed schemes are http, https';
const INVALID = 'URI is invalid';
const UNRESOLVED = 'Host cannot be resolved or invalid';

function blockList(ranges: [string, number, 'ipv4' | 'ipv6'][]): net.BlockList {
  const b = new net.BlockList();
  for (const [addr, prefix, family] of ranges) b.addSubnet(addr, prefix, family);
  return b;
}
// BlockList checks IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) against the IPv4 ranges too.
const LOOPBACK = blockList([['127.0.0.0', 8, 'ipv4'], ['0.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6'], ['::', 128, 'ipv6']]);
const PRIVATE = blockList([['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['100.64.0.0', 10, 'ipv4'], ['fc00::', 7, 'ipv6']]);
const LINK = blockList([['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']]);

const familyOf = (addr: string) => (net.isIPv6(addr) ? 'ipv6' : 'ipv4');

/** Why an address may not be reached without allowLocal (null: it is public). */
function localKind(addr: string): string | null {
  const family = familyOf(addr);
  if (LOOPBACK.check(addr, family)) return LOCALHOST;
  if (PRIVATE.check(addr, family)) return LOCAL_NETWORK;
  if (LINK.check(addr, family)) return LINK_LOCAL;
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

/** `port` 0: any port (the connect-time check; the port was checked before connecting). */
function allowed(list: AllowEntry[], host: string, addr: string | null, port: number): boolean {
  return list.some((e) => {
    if (e.port !== undefined && port !== 0 && e.port !== port) return false;
    if (e.range) return addr !== null && e.range.check(addr, familyOf(addr));
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

interface Target {
  url: URL;
  host: string;
  port: number;
}

export class Outbound {
  private readonly resolve: Resolve;
  /** one keep-alive pool per TLS mode and rule set (the rules live in the pool's DNS lookup) */
  private readonly agents = new Map<string, Agent>();

  constructor(opts: { resolve?: Resolve } = {}) {
    this.resolve = opts.resolve ?? systemResolve;
  }

  /** Null when the URL may be requested under the rules, else GitLab's message. */
  async check(url: string, rules: OutboundRules): Promise<string | null> {
    const target = this.parse(url);
    if (typeof target === 'string') return target;
    try {
      await this.addresses(target.host, target.port, rules);
      return null;
    } catch (e) {
      return e instanceof OutboundError ? e.message : UNRESOLVED;
    }
  }

  async request(req: OutboundRequest): Promise<OutboundResponse> {
    const target = this.parse(req.url);
    if (typeof target === 'string') throw new OutboundError('invalid_url', target);
    // Checked here for a clear answer before connecting; checked again by the pool's lookup.
    await this.addresses(target.host, target.port, req.rules);
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
    if (body && body.length > MAX_REQUEST_BYTES) throw new OutboundError('too_large', 'Request body is too large');
    const headers: Record<string, string> = { ...req.headers };
    const url = new URL(target.url);
    if (url.username || url.password) {
      headers.authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
      url.username = '';
      url.password = '';
    }
    const timeoutMs = req.timeoutMs ?? 10_000;
    const cap = req.maxResponseBytes ?? 1024 * 1024;
    const started = performance.now();
    try {
      const res = await request(url, {
        method: (req.method ?? 'POST') as 'POST',
        headers,
        body,
        dispatcher: this.agent(req.verifyTls ?? true, req.rules),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= cap) {
          truncated = size > cap || !(await ended(res.body));
          break;
        }
      }
      if (truncated) res.body.destroy();
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers).slice(0, 50)) {
        out[name.toLowerCase()] = (Array.isArray(value) ? value.join(', ') : String(value ?? '')).slice(0, 1024);
      }
      return { status: res.statusCode, headers: out, body: Buffer.concat(chunks).subarray(0, cap), truncated, durationMs: performance.now() - started };
    } catch (e) {
      throw failure(e);
    }
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
    if (rules.allowLocal) return addrs;
    const hostAllowed = !net.isIP(host) && allowed(list, host, null, port);
    for (const addr of addrs) {
      const kind = host === 'localhost' ? LOCALHOST : localKind(addr);
      if (kind && !hostAllowed && !allowed(list, host, addr, port)) throw new OutboundError('blocked', kind);
    }
    return addrs;
  }

  private agent(verifyTls: boolean, rules: OutboundRules): Agent {
    const key = `${verifyTls ? 1 : 0}|${rules.allowLocal ? 1 : 0}|${rules.allowlist.join(',')}`;
    let agent = this.agents.get(key);
    if (agent) return agent;
    if (this.agents.size >= 32) {
      const [oldKey, old] = this.agents.entries().next().value!;
      this.agents.delete(oldKey);
      void old.close();
    }
    const lookup = (hostname: string, options: { all?: boolean }, cb: (err: Error | null, address?: any, family?: number) => void) => {
      const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
      this.addresses(host, 0, rules).then(
        (addrs) => {
          const list = addrs.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
          if (options.all) cb(null, list);
          else cb(null, list[0].address, list[0].family);
        },
        (e) => cb(e),
      );
    };
    agent = new Agent({ connect: { rejectUnauthorized: verifyTls, lookup: lookup as any }, keepAliveTimeout: 30_000, connections: 64 });
    this.agents.set(key, agent);
    return agent;
  }
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
  if (err.name === 'TimeoutError' || err.name === 'AbortError' || /TIMEOUT/.test(code)) return new OutboundError('timeout', 'Request timed out');
  if (/CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code) || /certificate/i.test(message)) return new OutboundError('tls', message);
  return new OutboundError('connection', message);
}
