// Shutdown of the HTTP server without waiting on connections that carry no request. Node's server.close()
// closes the keep-alive connections idle at that moment, but not a connection that has not sent a request
// yet (a browser's preconnect: it counts as a request starting and, once close() stopped the timeout
// checks, stays open until the client gives up), nor a keep-alive connection whose request was in flight
// (it stays open for the next request, keepAliveTimeout long). `trackConnections` knows which connection
// carries a request: `closeIdle()` closes the others at once and each busy one after its last response.
import type http from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionTracker {
  /** Closes every connection without a request in flight now, and the others after their response. */
  closeIdle(): void;
  /** Closes every connection now (the shutdown's time is up). */
  closeAll(): void;
}

export function trackConnections(server: http.Server): ConnectionTracker {
  /** every open connection → its responses in flight (pipelined requests may overlap) */
  const open = new Map<Socket, Set<http.ServerResponse>>();
  let closing = false;
  server.on('connection', (socket: Socket) => {
    // accepted in the moment before the listener closed: as if refused
    if (closing) return void socket.destroy();
    open.set(socket, new Set());
    socket.once('close', () => open.delete(socket));
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    const inFlight = open.get(socket);
    if (!inFlight) return;
    inFlight.add(res);
    if (closing) res.setHeader('connection', 'close');
    res.once('close', () => {
      inFlight.delete(res);
      if (closing && !inFlight.size) socket.end();
    });
  });
  return {
    closeIdle() {
      closing = true;
      for (const [socket, inFlight] of open) {
        if (!inFlight.size) socket.destroy();
        // a response not started yet tells the client that this connection ends with it
        else for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      }
    },
    closeAll() {
      closing = true;
      for (const socket of open.keys()) socket.destroy();
    },
  };
}
