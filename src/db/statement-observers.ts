// Who wants to see the statements this process runs (the plan test, `npm run bench:scale`'s plans): each
// observer gets every statement, its SQL text and parameters, after it ran. None are registered in service.
export interface ObservedStatement {
  sql: string;
  parameters: readonly unknown[];
}

const observers = new Set<(s: ObservedStatement) => void>();

/** Calls `fn` with every statement until the returned function is called. */
export function observeStatements(fn: (s: ObservedStatement) => void): () => void {
  observers.add(fn);
  return () => void observers.delete(fn);
}

export function notifyStatementObservers(s: ObservedStatement): void {
  if (observers.size) for (const fn of observers) fn(s);
}
