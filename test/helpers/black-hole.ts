// A TCP listener on 127.0.0.1 that accepts connections and never sends a byte: a receiver that hangs
// (plain HTTP waits for an answer, TLS for the handshake).
import net from 'node:net';

export async function blackHole(t: { after(fn: () => unknown): void }): Promise<{ port: number; connections: () => number }> {
  const sockets = new Set<net.Socket>();
  let count = 0;
  const s = net.createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        for (const k of sockets) k.destroy();
        s.close(() => r());
      }),
  );
  return { port: (s.address() as net.AddressInfo).port, connections: () => count };
}
