import { buildTestApp } from '/work/main/test/helpers/build-app.ts';
const afters: (() => unknown)[] = [];
for (let i = 0; i < 5; i++) { const a = await buildTestApp({ after: (f) => afters.push(f) }); await a.app.inject({ method: 'GET', url: '/api/v4/version', headers: a.root }); }
const c0 = process.cpuUsage(); const t0 = performance.now();
for (let i = 0; i < 30; i++) { const a = await buildTestApp({ after: (f) => afters.push(f) }); await a.app.inject({ method: 'GET', url: '/api/v4/version', headers: a.root }); }
const cpu = process.cpuUsage(c0);
console.log('30 builds', (performance.now() - t0).toFixed(0), 'ms wall', ((cpu.user + cpu.system) / 1000).toFixed(0), 'ms cpu');
for (const f of afters) await f();
process.exit(0);
