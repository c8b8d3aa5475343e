// Counts the turns of the event loop that other work got while `work` ran: a callback that queues itself with
// setImmediate runs once a turn, so it runs only when `work` yields. (A timer would count milliseconds instead, and
// on a fast machine work that yields can finish inside one.)
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let counting = true;
  const tick = () => { if (!counting) return; turns++; setImmediate(tick); };
  setImmediate(tick);
  try {
    return { value: await work(), turns };
  } finally {
    counting = false;
  }
}
